// node_names.cpp - libtorch's names for heed's graph nodes: what grad_fn()->name() prints
// (autograd/engine/node.h), so that a ported program's checks and printouts read as they did.
//
// heed names a node after its op ("add", "reshape"); libtorch names it after the derivative
// formula its code generator made ("AddBackward0", "ViewBackward0"), with a number telling
// apart the overloads of one op. The rule that covers most ops:
//   snake_case op  ->  CamelCase + "Backward0"      ("log_softmax" -> "LogSoftmaxBackward0")
// The table lists only the ops whose libtorch node is named otherwise (another overload, or
// another op: heed's reshape of a contiguous tensor is libtorch's view). A name that is
// already a class name (AccumulateGrad, a custom Function's) is libtorch's with its namespace.
// Ops libtorch does not have (flash_attention, lstm_cell) follow the rule.
#include <cctype>
#include <cstring>
#include <string>

#include "node.h"

namespace heed {

namespace {

struct NodeName {
  const char* op;        // heed's (record() / named())
  const char* libtorch;  // grad_fn()->name() in libtorch, for the call heed's op stands for
};

constexpr NodeName kNodeNames[] = {
    {"AccumulateGrad", "torch::autograd::AccumulateGrad"},
    {"DelayedError", "torch::autograd::DelayedError"},
    {"rsub", "RsubBackward1"},                    // 1 - x: the scalar overload
    {"sum_to", "SumBackward1"},                   // a broadcast's gradient: sum over dims
    {"max", "MaxBackward1"},                      // max() over all elements
    {"min", "MinBackward1"},
    {"clamp", "ClampBackward1"},                  // clamp(x, lo, hi) with numbers
    {"squeeze", "SqueezeBackward1"},              // squeeze(d)
    {"reshape", "ViewBackward0"},                 // contiguous: reshape is a view
    {"flatten", "ViewBackward0"},
    {"narrow", "SliceBackward0"},                 // narrow is a slice
    {"index", "IndexBackward0"},                  // libtorch names the select or slice that
                                                  // basic indexing becomes; heed's op has one name
    {"chunk", "SplitBackward0"},                  // chunk is split(ceil(n / chunks))
    {"movedim", "PermuteBackward0"},              // movedim is a permute
    {"matmul", "MmBackward0"},                    // of two 2-D tensors
    {"linear", "AddmmBackward0"},                 // x W^T + b, x 2-D
    {"layer_norm", "NativeLayerNormBackward0"},
    {"dropout", "NativeDropoutBackward0"},
    {"cross_entropy", "NllLossBackward0"},        // log_softmax then nll_loss
    {"nll_loss", "NllLossBackward0"},
    {"normalize", "DivBackward0"},                // x / max(||x||, eps)
    {"norm", "LinalgVectorNormBackward0"},
};

}  // namespace

std::string libtorch_node_name(const char* op) {
  for (const NodeName& n : kNodeNames)
    if (std::strcmp(n.op, op) == 0) return n.libtorch;
  if (std::isupper(static_cast<unsigned char>(op[0]))) return op;  // a class name already
  std::string out;
  bool upper = true;
  for (const char* c = op; *c; ++c) {
    if (*c == '_') {
      upper = true;
    } else {
      out += upper ? char(std::toupper(static_cast<unsigned char>(*c))) : *c;
      upper = false;
    }
  }
  return out + "Backward0";
}

}  // namespace heed
