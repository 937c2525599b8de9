// composed_backward.cpp - composed_gradients (composed_backward.h).
#include "composed_backward.h"

#include "../../core/error.h"
#include "engine.h"

namespace heed {

void detail::composed_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& twin,
                                const std::vector<Tensor>& inputs, const Tensor& dy, Grads& g) {
  // Where each input's gradient is taken: its node (the op's edge, or a stand-in's leaf).
  std::vector<std::shared_ptr<Node>> at(inputs.size());
  bool any = false;
  for (int i = 0; i < g.size(); ++i)
    if (g.needs(i)) {
      at[i] = producer_of(inputs[i]);
      HEED_CHECK(at[i] != nullptr, "composed_gradients", "input ", i, " (shape ", inputs[i].shape(),
                 ") needs a gradient but does not require grad");
      any = true;
    }
  if (!any) return;
  const Tensor y = twin(inputs);
  // create_graph keeps the twin's graph: the gradients' graph reads the twin's saved
  // tensors when it is differentiated in turn. The pass stops at the inputs' nodes, which
  // the enclosing pass runs (an input computed from another input is not gone through twice).
  std::vector<Tensor> d = gradients_at(y, dy, at, true);
  for (int i = 0; i < g.size(); ++i)
    if (g.needs(i)) g[i] = d[i].defined() ? d[i] : zeros(inputs[i].shape());
}

}  // namespace heed
