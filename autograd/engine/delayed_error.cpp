// delayed_error.cpp - the gradient of an op whose backward is not differentiable
// (delayed_error.h), and the message that names the alternative for each fused kernel.
#include "delayed_error.h"

#include <cstring>

#include "../../core/error.h"

namespace heed {

namespace {

struct Alternative {
  const char* prefix;  // op names starting with it
  const char* what;    // the op, as a reader knows it
  const char* use;     // the differentiable path to use instead
};

// The fused kernels and their composed twins (each twin is tested against its kernel).
const Alternative kAlternatives[] = {
    {"flash_attention", "flash attention",
     "the composed path: heed::scaled_dot_product_attention (autograd/ops/attention/"
     "scaled_dot_product.h), or MultiheadAttention with need_weights or an attn_bias"},
    {"block_sparse", "block-sparse attention",
     "the composed path: block_sparse_attention_composed (the layout as a mask)"},
    {"lstm_layer", "the fused LSTM layer kernel (nn::LSTM)",
     "nn::LSTMCell steps (heed::lstm_cell, or lstm_cell_reference)"},
    {"gru_layer", "the fused GRU layer kernel (nn::GRU)", "nn::GRUCell steps (gru_cell_reference)"},
    {"checkpoint", "gradient checkpointing", "the block without checkpoint()"},
    {"additive_score", "the additive (Bahdanau) score kernel", "additive_score_reference"},
};

}  // namespace

void DelayedError::apply(const Tensor&, Grads&) {
  for (const Alternative& a : kAlternatives)
    if (std::strncmp(op, a.prefix, std::strlen(a.prefix)) == 0)
      fail(op, a.what, "'s backward is not differentiable (its gradient was made by "
           "backward with create_graph=true and is now being differentiated); use ", a.use);
  fail(op, "the backward of '", op, "' is not differentiable (its gradient was made by "
       "backward with create_graph=true and is now being differentiated): no double backward "
       "is written for this op; compose it from ops that have one (README, \"Higher-order "
       "gradients\")");
}

void detail::mark_not_differentiable(const Node& n, const Tensor& dy, TensorVec& slots) {
  const std::shared_ptr<Node> dy_node = producer_of(dy);
  bool depends = dy_node != nullptr;
  for (const auto& e : n.next) depends = depends || e != nullptr;
  if (!depends) return;
  for (Tensor& s : slots) {
    if (!s.defined()) continue;
    auto node = std::make_shared<DelayedError>(n.op_name());
    node->next.push_back(dy_node);
    for (const auto& e : n.next) node->next.push_back(e);
    node->out_shape = s.shape();
    Tensor marked = s.detach();  // the same numbers, now with a grad_fn that raises
    marked.impl()->grad_fn = std::move(node);
    s = std::move(marked);
  }
}

}  // namespace heed
