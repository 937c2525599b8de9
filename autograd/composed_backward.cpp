// composed_backward.cpp - composed_gradients (composed_backward.h).
#include "composed_backward.h"

#include "autograd.h"

namespace heed {

void detail::composed_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& twin,
                                const std::vector<Tensor>& inputs, const Tensor& dy, Grads& g) {
  std::vector<Tensor> wanted;  // the inputs that need a gradient, and where each goes
  std::vector<int> at;
  for (int i = 0; i < g.size(); ++i)
    if (g.needs(i)) {
      wanted.push_back(inputs[i]);
      at.push_back(i);
    }
  if (wanted.empty()) return;
  const Tensor y = twin(inputs);
  std::vector<Tensor> d(wanted.size());
  // create_graph keeps the twin's graph (retain_graph defaults to it): the gradients'
  // graph reads the twin's saved tensors when it is differentiated in turn.
  if (y.requires_grad()) d = autograd::grad({y}, wanted, {dy}, std::nullopt, true, true);
  for (size_t k = 0; k < wanted.size(); ++k)
    g[at[k]] = d[k].defined() ? d[k] : zeros(wanted[k].shape());
}

}  // namespace heed
