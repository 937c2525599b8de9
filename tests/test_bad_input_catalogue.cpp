// test_bad_input_catalogue.cpp - the bad-input catalogue: one place listing every kind of bad
// input heed refuses, each with a heed::Error whose message names the op AND the offending
// value or shape. Kinds are numbered K01, K02, ... (one `kind(...)` call each), grouped by
// area in one TEST_CASE per area; the count is KINDS below.
//
// KINDS: 173 (K01 .. K173). HEED_CATALOGUE_PRINT=1 prints every message as it is checked.
// Entries whose message has no offending value to name (cat or pad_sequence of nothing,
// arange's zero step) name the op and the rule instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <heed/heed.h>
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using heed::test::error_of;
namespace F = nn::functional;
using heed::test::Bytes;
using heed::test::read_bytes;
using heed::test::TmpDir;
using heed::test::write_bytes;

namespace {

bool contains(const std::string& msg, const std::string& part) {
  return msg.find(part) != std::string::npos;
}

// One catalogue entry: the message of the heed::Error that f throws must contain every part
// (the op first, then the offending value or shape).
template <class Fn>
void kind(const char* id, const Fn& f, std::initializer_list<std::string> parts) {
  const std::string msg = error_of(f);
  if (std::getenv("HEED_CATALOGUE_PRINT")) std::fprintf(stderr, "%s: %s\n", id, msg.c_str());
  for (const auto& p : parts) {
    INFO(std::string(id), ": message \"", msg, "\" should contain \"", p, "\"");
    CHECK(contains(msg, p));
  }
}

}  // namespace

TEST_CASE("catalogue: tensor factories and shapes") {
  Tensor x = zeros({2, 3});  // (2, 3)
  // K01 negative size in a factory
  kind("K01", [] { zeros({-2, 3}); }, {"Shape", "negative size -2"});
  // K02 -1 (infer) outside reshape
  kind("K02", [] { ones({-1, 3}); }, {"negative size -1", "(-1,3)"});
  // K03 more than kMaxDims dims
  kind("K03", [] { zeros({1, 1, 1, 1, 1, 1, 1, 1, 1}); }, {"Shape", "at most 8 dims"});
  // K04 reshape to a different element count
  kind("K04", [&] { x.reshape({4, 2}); }, {"reshape", "(2,3)", "(4,2)"});
  // K05 reshape with two -1s
  kind("K05", [&] { x.reshape({-1, -1}); }, {"reshape", "only one dim can be -1", "(-1,-1)"});
  // K06 from_vector with the wrong number of values
  kind("K06", [] { from_vector({1, 2, 3}, {2, 2}); }, {"from_vector", "3 values", "(2,2)"});
  // K07 arange with step 0
  kind("K07", [] { arange(0, 5, 0); }, {"arange", "step must be non-zero"});
  // K08 item() of a multi-element tensor
  kind("K08", [&] { x.item(); }, {"item", "(2,3)"});
  // K09 at() with the wrong number of indices
  kind("K09", [&] { x.at({1}); }, {"at", "got 1 indices", "(2,3)"});
  // K10 at() with an index out of range
  kind("K10", [&] { x.at({0, 3}); }, {"at", "index 3", "(2,3)"});
  // K11 copy_ from a tensor of another size
  kind("K11", [&] { Tensor y = zeros({2, 3}); y.copy_(ones({4})); }, {"copy_", "(2,3)", "(4)"});
  // K12 IndexTensor with the wrong number of ids
  kind("K12", [] { IndexTensor({1, 2, 3}, {2, 2}); }, {"IndexTensor", "3 ids", "(2,2)"});
  // K13 flatten with start_dim after end_dim
  kind("K13", [] { zeros({2, 3, 4}).flatten(2, 1); }, {"flatten", "start_dim 2", "end_dim 1"});
  // K14 permute with a repeated dim
  kind("K14", [] { zeros({2, 3}).permute({0, 0}); }, {"permute", "[0,0]", "dim 0 repeats"});
  // K15 expand to an incompatible shape
  kind("K15", [] { expand(zeros({2, 3}), {4, 3}); }, {"expand", "(2,3)", "(4,3)"});
}

TEST_CASE("catalogue: dims out of range") {
  Tensor x = zeros({2, 3});  // (2, 3)
  // K16 sum over a dim past the rank
  kind("K16", [&] { sum(x, 2); }, {"sum", "dim 2", "rank 2"});
  // K17 softmax over a dim before -rank
  kind("K17", [&] { softmax(x, -3); }, {"softmax", "dim -3", "rank 2"});
  // K18 transpose of a dim past the rank
  kind("K18", [&] { transpose(x, 0, 5); }, {"transpose", "dim 5", "rank 2"});
  // K19 cat along a dim past the rank
  kind("K19", [&] { cat({x, x}, 3); }, {"cat", "dim 3", "rank 2"});
  // K20 stack along a dim past rank + 1
  kind("K20", [&] { stack({x, x}, 4); }, {"stack", "dim 4", "rank 3"});
  // K21 narrow past the end of the dim
  kind("K21", [&] { narrow(x, 1, 2, 2); }, {"narrow", "start 2 length 2", "(2,3)"});
  // K22 select with an index out of range
  kind("K22", [&] { select(x, 0, 2); }, {"select", "index 2", "(2,3)"});
  // K23 squeeze of a dim past the rank (a dim whose size is not 1 is returned as it is)
  kind("K23", [&] { squeeze(x, 2); }, {"squeeze", "dim 2", "rank 2"});
  // K24 cat of tensors differing outside the dim
  kind("K24", [&] { cat({x, zeros({2, 4})}, 0); }, {"cat", "(2,3)", "(2,4)"});
  // K25 stack of tensors of different shapes
  kind("K25", [&] { stack({x, zeros({3, 2})}); }, {"stack", "(2,3)", "(3,2)"});
  // K26 cat of nothing
  kind("K26", [] { cat(std::vector<Tensor>{}, 0); }, {"cat", "needs at least one tensor"});
  // K27 slice with step 0
  kind("K27", [&] { slice(x, 1, 0, 3, 0); }, {"slice", "step must be >= 1, got 0"});
}

TEST_CASE("catalogue: broadcasting and matmul") {
  // K28 elementwise broadcasting clash
  kind("K28", [] { add(zeros({2, 3}), zeros({4, 3})); }, {"add", "(2,3)", "(4,3)", "cannot be broadcast"});
  // K29 in-place add_ of a different shape
  kind("K29", [] { Tensor a = zeros({2, 3}); a.add_(zeros({2})); }, {"add_", "(2,3)", "(2)"});
  // K30 matmul inner dims misaligned
  kind("K30", [] { matmul(zeros({2, 3}), zeros({4, 5})); }, {"matmul", "(2,3)", "(4,5)", "do not align"});
  // K31 matmul of a 0-dim operand
  kind("K31", [] { matmul(scalar_tensor(1), zeros({3})); }, {"matmul", "at least 1 dim"});
  // K32 masked_fill with a mask that does not broadcast
  kind("K32", [] { masked_fill(zeros({2, 3}), ones({3, 2}), 0); }, {"masked_fill", "(3,2)", "(2,3)"});
}

TEST_CASE("catalogue: reductions and topk") {
  // K33 mean of an empty tensor (heed raises where PyTorch gives NaN)
  kind("K33", [] { mean(zeros({0, 3})); }, {"mean", "(0,3)"});
  // K34 max of an empty tensor
  kind("K34", [] { zeros({0}).max(); }, {"max", "(0)"});
  // K35 unbiased variance of one element
  kind("K35", [] { var(zeros({1})); }, {"var", "(1)"});
  // K36 topk with k past the dim size
  kind("K36", [] { topk(zeros({2, 3}), 4); }, {"topk", "k 4", "(2,3)"});
  // K37 topk with negative k
  kind("K37", [] { topk(zeros({2, 3}), -1); }, {"topk", "k -1"});
}

TEST_CASE("catalogue: ids out of range") {
  Tensor w = randn({5, 3});  // (V=5, E=3)
  // K38 index_select id past the dim
  kind("K38", [&] { index_select(w, 0, IndexTensor({0, 5}, {2})); }, {"index_select", "index 5", "[0, 5)"});
  // K39 index_select with a 2-D index
  kind("K39", [&] { index_select(w, 0, IndexTensor({0, 1}, {1, 2})); }, {"index_select", "(1,2)"});
  // K40 gather id out of range
  kind("K40", [&] { gather(w, 1, IndexTensor({0, 3, 0, 0, 0}, {5, 1})); }, {"gather", "index 3", "[0, 3)"});
  // K41 gather index shape not fitting
  kind("K41", [&] { gather(w, 1, IndexTensor(std::vector<int64_t>(12, 0), {6, 2})); }, {"gather", "(6,2)", "(5,3)"});
  // K42 embedding id past num_embeddings
  kind("K42", [&] { embedding(IndexTensor({1, 7}, {2}), w); }, {"embedding", "index 7", "[0, 5)"});
  // K43 negative embedding id
  kind("K43", [&] { embedding(IndexTensor({-1}, {1}), w); }, {"embedding", "index -1"});
  // K44 Embedding module with padding_idx out of range
  kind("K44", [] { nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(9)); }, {"Embedding", "padding_idx 9"});
  // K45 cross_entropy target past the classes
  kind("K45", [] { F::cross_entropy(zeros({2, 4}), IndexTensor({1, 4}, {2})); }, {"cross_entropy", "target 4", "C = 4"});
  // K46 cross_entropy target negative that is not ignore_index
  kind("K46", [] { F::cross_entropy(zeros({2, 4}), IndexTensor({1, -1}, {2}),
                                    nn::CrossEntropyOptions().ignore_index(-100)); },
       {"cross_entropy", "target -1"});
  // K47 cross_entropy with a different ignore_index than the padding id used
  kind("K47", [] { F::cross_entropy(zeros({2, 4}), IndexTensor({1, -100}, {2}),
                                    nn::CrossEntropyOptions().ignore_index(0)); },
       {"cross_entropy", "target -100"});
  // K48 cross_entropy target shape mismatch
  kind("K48", [] { F::cross_entropy(zeros({2, 4}), IndexTensor({1, 2, 3}, {3})); }, {"cross_entropy", "(2,4)", "(3)"});
  // K49 cross_entropy class weight of the wrong size
  kind("K49", [] { F::cross_entropy(zeros({2, 4}), IndexTensor({1, 2}, {2}),
                                    nn::CrossEntropyOptions().weight(ones({3}))); },
       {"cross_entropy", "weight (3)", "(4)"});
  // K50 label smoothing outside [0, 1]
  kind("K50", [] { F::cross_entropy(zeros({2, 4}), IndexTensor({1, 2}, {2}),
                                    nn::CrossEntropyOptions().label_smoothing(1.5)); },
       {"cross_entropy", "label_smoothing", "1.5"});
  // K51 mse_loss of mismatched shapes
  kind("K51", [] { F::mse_loss(zeros({2, 3}), zeros({3, 2})); }, {"mse_loss", "(2,3)", "(3,2)"});
}

TEST_CASE("catalogue: recurrent layers") {
  manual_seed(1);
  nn::LSTM lstm(4, 5);
  nn::GRU gru(4, 5);
  Tensor x = randn({2, 3, 4});  // (B=2, T=3, In=4)
  // K52 LSTM input of the wrong rank
  kind("K52", [&] { lstm->forward(randn({3, 4})); }, {"LSTM", "(3,4)"});
  // K53 LSTM input with the wrong feature count
  kind("K53", [&] { lstm->forward(randn({2, 3, 6})); }, {"LSTM", "6", "(2,3,6)"});
  // K54 LSTM length 0
  kind("K54", [&] { lstm->forward(x, {}, std::vector<int64_t>{3, 0}); }, {"LSTM", "lengths[1] = 0"});
  // K55 LSTM length > T
  kind("K55", [&] { lstm->forward(x, {}, std::vector<int64_t>{4, 2}); }, {"LSTM", "lengths[0] = 4"});
  // K56 LSTM wrong number of lengths
  kind("K56", [&] { lstm->forward(x, {}, std::vector<int64_t>{3}); }, {"LSTM", "got 1 lengths", "batch of 2"});
  // K57 LSTM initial state of the wrong shape
  kind("K57", [&] { lstm->forward(x, std::make_tuple(zeros({1, 3, 5}), zeros({1, 3, 5}))); }, {"LSTM", "h0", "(1,2,5)", "(1,3,5)"});
  // K58 GRU padding mask of the wrong shape
  kind("K58", [&] { gru->forward(x, Tensor(), ones({2, 4})); }, {"GRU", "padding mask", "(2,4)"});
  // K59 GRU padding mask that is not right-padded
  kind("K59", [&] { gru->forward(x, Tensor(), from_vector({1, 0, 1, 1, 1, 1}, {2, 3})); }, {"GRU", "row 0", "t = 2"});
  // K60 GRU padding mask row with no valid step
  kind("K60", [&] { gru->forward(x, Tensor(), from_vector({0, 0, 0, 1, 1, 1}, {2, 3})); }, {"GRU", "row 0", "no valid step"});
  // K61 GRU empty input
  kind("K61", [&] { gru->forward(zeros({2, 0, 4})); }, {"GRU", "(2,0,4)", "empty"});
  // K62 LSTMCell state of the wrong shape
  kind("K62", [] { nn::LSTMCell cell(4, 5); cell->forward(zeros({2, 4}), std::make_tuple(zeros({2, 6}), zeros({2, 6}))); },
       {"LSTMCell", "(2,6)"});
  // K63 GRUCell input of the wrong width
  kind("K63", [] { nn::GRUCell cell(4, 5); cell->forward(zeros({2, 3})); }, {"GRUCell", "(2,3)"});
  // K64 LSTM dropout outside [0, 1)
  kind("K64", [] { nn::LSTM(nn::LSTMOptions(4, 5).dropout(1.0)); }, {"LSTM", "dropout", "got 1"});
  // K65 pad_sequence of nothing
  kind("K65", [] { nn::utils::pad_sequence(std::vector<Tensor>{}); }, {"pad_sequence", "got no sequences"});
  // K66 pad_sequence of sequences with different trailing dims
  kind("K66", [] { nn::utils::pad_sequence(std::vector<Tensor>{zeros({2, 3}), zeros({1, 4})}); },
       {"pad_sequence", "(1,4)", "(2,3)"});
}

TEST_CASE("catalogue: attention") {
  manual_seed(2);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  Tensor x = randn({2, 3, 8});  // (B=2, T=3, E=8)
  // K67 heads not dividing embed_dim
  kind("K67", [] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 3)); },
       {"MultiheadAttention", "embed_dim 8", "num_heads 3"});
  // K68 query of the wrong width
  kind("K68", [&] { mha->forward(randn({2, 3, 6}), x, x); }, {"MultiheadAttention", "(2,3,6)"});
  // K69 key and value lengths differ
  kind("K69", [&] { mha->forward(x, x, randn({2, 4, 8})); }, {"MultiheadAttention", "(2,3,8)", "(2,4,8)"});
  // K70 batch sizes differ
  kind("K70", [&] { mha->forward(x, randn({1, 3, 8}), randn({1, 3, 8})); }, {"MultiheadAttention", "batch sizes differ", "(1,3,8)"});
  // K71 key padding mask of the wrong shape
  kind("K71", [&] { mha->forward(x, x, x, nn::AttentionMask().key_padding(ones({2, 4}))); },
       {"MultiheadAttention", "key padding mask (2,4)", "expected (2,3)"});
  // K72 a full mask that does not broadcast to the scores
  kind("K72", [&] { mha->forward(x, x, x, nn::AttentionMask().mask(ones({5, 3}))); }, {"MultiheadAttention", "mask (5,3)", "(2,2,3,3)"});
  // K73 torch-style 0/-inf mask values (heed wants 0/1)
  kind("K73", [&] {
    Tensor m = zeros({3, 3});
    m.data()[1] = -INFINITY;
    mha->forward(x, x, x, nn::AttentionMask().mask(m));
  }, {"MultiheadAttention", "holds -inf", "attn_bias"});
  // K74 key padding mask holding 2
  kind("K74", [&] { mha->forward(x, x, x, nn::AttentionMask().key_padding(full({2, 3}, 2))); },
       {"MultiheadAttention", "key padding mask (2,3) holds 2"});
  // K75 attn_bias not broadcasting to the scores
  kind("K75", [&] { mha->forward(x, x, x, {}, zeros({4, 3, 3})); }, {"MultiheadAttention", "attn_bias (4,3,3)"});
  // K76 attn_bias holding NaN
  kind("K76", [&] {
    Tensor b = zeros({2, 3, 3});
    b.data()[4] = NAN;
    mha->forward(x, x, x, {}, b.reshape({1, 2, 3, 3}));
  }, {"MultiheadAttention", "attn_bias (1,2,3,3) holds nan"});
  // K77 scaled dot-product q/k width mismatch
  kind("K77", [] { nn::scaled_dot_product_attention(zeros({2, 3, 4}), zeros({2, 3, 5}), zeros({2, 3, 5})); },
       {"scaled_dot_product_attention", "(2,3,4)", "(2,3,5)"});
  // K78 flash attention k/v length mismatch
  kind("K78", [] { flash_attention(zeros({2, 3, 4}), zeros({2, 3, 4}), zeros({2, 5, 4})); },
       {"flash_attention", "(2,3,4)", "(2,5,4)"});
  // K79 attention dropout outside [0, 1)
  kind("K79", [] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).dropout(-0.1)); },
       {"MultiheadAttention", "dropout", "-0.1"});
  // K80 transformer layer with d_model not divisible by nhead
  kind("K80", [] { nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(10, 3)); },
       {"TransformerEncoderLayer", "d_model 10", "nhead 3"});
}

TEST_CASE("catalogue: modules, autograd and threads") {
  // K81 dropout p outside [0, 1)
  kind("K81", [] { dropout(zeros({3}), 1.0, true); }, {"dropout", "p must be in [0, 1)", "1"});
  // K82 Dropout module with negative p
  kind("K82", [] { nn::Dropout(nn::DropoutOptions(-0.5)); }, {"Dropout", "-0.5"});
  // K83 Linear with the wrong input width
  kind("K83", [] { nn::Linear lin(4, 2); lin->forward(zeros({3, 5})); }, {"Linear", "(3,5)", "in_features 4"});
  // K84 LayerNorm input not ending in normalized_shape
  kind("K84", [] { nn::LayerNorm ln(nn::LayerNormOptions({4})); ln->forward(zeros({2, 5})); }, {"LayerNorm", "(2,5)", "(4"});
  // K85 backward on a tensor that does not require grad
  kind("K85", [] { zeros({1}).sum().backward(); }, {"backward", "shape ()", "does not require grad"});
  // K86 backward on a non-scalar without a gradient
  kind("K86", [] { Tensor p = test::param({2, 3}); mul(p, 2).backward(); }, {"backward", "(2,3)"});
  // K87 backward with a gradient of the wrong shape
  kind("K87", [] { Tensor p = test::param({2, 3}); mul(p, 2).backward(ones({3, 2})); }, {"backward", "(3,2)", "(2,3)"});
  // K88 requires_grad_ on a non-leaf
  kind("K88", [] { Tensor p = test::param({2}); mul(p, 2).requires_grad_(false); }, {"requires_grad_", "leaf", "produced by mul"});
  // K89 in-place op on a leaf requiring grad
  kind("K89", [] { Tensor p = test::param({2, 3}); p.mul_(2); }, {"mul_", "requires grad", "(2,3)"});
  // K90 set_num_threads(0)
  kind("K90", [] { set_num_threads(0); }, {"set_num_threads", "got 0"});
  // K91 set_num_threads(negative)
  kind("K91", [] { set_num_threads(-3); }, {"set_num_threads", "got -3"});
  // K92 GELU with an unknown approximation
  kind("K92", [] { gelu(zeros({2}), "fast"); }, {"gelu", "\"fast\""});
  // K185 softplus with beta 0 (log1p(e^0) / 0), or an infinite beta
  kind("K185", [] { softplus(zeros({2}), 0); }, {"softplus", "beta", "got 0"});
  kind("K185", [] { nn::Softplus(nn::SoftplusOptions().beta(-INFINITY))(zeros({2})); }, {"softplus", "got -inf"});
  // K186 softplus with a NaN threshold
  kind("K186", [] { F::softplus(zeros({2}), F::SoftplusFuncOptions().threshold(NAN)); }, {"softplus", "threshold", "NaN"});
  // K187 PReLU with no slope
  kind("K187", [] { nn::PReLU(nn::PReLUOptions().num_parameters(0)); }, {"PReLU", "num_parameters", "got 0"});
  // K188 PReLU with C slopes on an input whose dim 1 is not C (or that has no dim 1)
  kind("K188", [] { nn::PReLU(nn::PReLUOptions().num_parameters(3))(zeros({2, 4})); },
       {"prelu", "(3)", "3 channels", "(2,4)"});
  kind("K188", [] { F::prelu(zeros({3}), zeros({3})); }, {"prelu", "(3)"});
  kind("K188", [] { F::prelu(zeros({3}), zeros({1, 1})); }, {"prelu", "1-D", "(1,1)"});
  // K93 an unknown init nonlinearity
  kind("K93", [] { nn::init::calculate_gain("swish"); }, {"calculate_gain", "'swish'"});
  // K94 Sequential index out of range
  kind("K94", [] { nn::Sequential s{nn::Linear(2, 2)}; s[3]; }, {"Sequential", "index 3", "1 modules"});
}

TEST_CASE("catalogue: optimizers, schedules and clipping") {
  Tensor p = test::param({2});
  // K95 negative learning rate
  kind("K95", [&] { optim::Adam(std::vector<Tensor>{p}, optim::AdamOptions(-1e-3)); }, {"Adam", "learning rate -0.001"});
  // K96 beta1 outside [0, 1)
  kind("K96", [&] { optim::Adam(std::vector<Tensor>{p}, optim::AdamOptions().betas({1.0, 0.999})); },
       {"Adam", "beta1 1"});
  // K97 beta2 negative
  kind("K97", [&] { optim::Adam(std::vector<Tensor>{p}, optim::AdamOptions().betas({0.9, -0.5})); },
       {"Adam", "beta2 -0.5"});
  // K98 negative eps
  kind("K98", [&] { optim::AdamW(std::vector<Tensor>{p}, optim::AdamWOptions().eps(-1)); }, {"AdamW", "eps -1"});
  // K99 negative weight decay
  kind("K99", [&] { optim::SGD(std::vector<Tensor>{p}, optim::SGDOptions(0.1).weight_decay(-0.01)); },
       {"SGD", "weight_decay -0.01"});
  // K100 negative momentum
  kind("K100", [&] { optim::SGD(std::vector<Tensor>{p}, optim::SGDOptions(0.1).momentum(-0.9)); },
       {"SGD", "momentum -0.9"});
  // K101 Nesterov without momentum
  kind("K101", [&] { optim::SGD(std::vector<Tensor>{p}, optim::SGDOptions(0.1).nesterov(true)); }, {"SGD", "Nesterov", "got momentum 0"});
  // K102 an optimizer over a non-leaf
  kind("K102", [&] { optim::SGD(std::vector<Tensor>{mul(p, 2)}, optim::SGDOptions(0.1)); }, {"SGD", "(2)", "not a leaf"});
  // K103 an optimizer given the same parameter twice
  kind("K103", [&] { optim::SGD(std::vector<Tensor>{p, p}, optim::SGDOptions(0.1)); }, {"SGD", "parameter 1", "already group 0 parameter 0"});
  // K104 warmup longer than total steps
  const optim::SGD sgd(std::vector<Tensor>{p}, optim::SGDOptions(1e-3));
  kind("K104", [&] { optim::LinearWarmupCosine(sgd, optim::WarmupDecayOptions(100, 50)); },
       {"LinearWarmupCosine", "total_steps 50", "100"});
  // K105 negative warmup
  kind("K105", [&] { optim::LinearWarmupLinearDecay(sgd, optim::WarmupDecayOptions(-5, 50)); },
       {"LinearWarmupLinearDecay", "warmup_steps -5"});
  // K106 TransformerWarmup with zero warmup
  kind("K106", [&] { optim::TransformerWarmup(sgd, optim::TransformerWarmupOptions(512, 0)); },
       {"TransformerWarmup", "warmup_steps 0"});
  // K107 StepDecay with step_size 0
  kind("K107", [&] { optim::StepDecay(sgd, optim::StepDecayOptions(0)); }, {"StepDecay", "step_size 0"});
  // K108 a schedule asked for a negative step
  kind("K108", [&] { optim::Constant(sgd).lr_at(-1); }, {"Constant", "step -1"});
  // K109 clip_grad_norm_ with a negative max_norm
  kind("K109", [&] { optim::clip_grad_norm_({p}, -1.0); }, {"clip_grad_norm_", "max_norm -1"});
  // K110 clip_grad_norm_ with norm_type 0
  kind("K110", [&] { optim::clip_grad_norm_({p}, 1.0, 0); }, {"clip_grad_norm_", "norm_type 0"});
  // K111 clip_grad_value_ negative
  kind("K111", [&] { optim::clip_grad_value_({p}, -2); }, {"clip_grad_value_", "clip_value -2"});
}

TEST_CASE("catalogue: checkpoint corruptions") {
  TmpDir tmp;
  manual_seed(3);
  nn::Linear model(4, 2);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  const std::string good = tmp.file("good.ckpt");
  save_checkpoint(good, model, sgd);
  const Bytes bytes = read_bytes(good);
  const std::string bad = tmp.file("bad.ckpt");
  // K112 a missing file
  kind("K112", [&] { load_checkpoint(tmp.file("absent"), model); }, {"load_checkpoint", "absent", "cannot open"});
  // K113 wrong magic
  kind("K113", [&] {
    Bytes b = bytes;
    std::memcpy(b.data(), "NOTACKPT", 8);
    write_bytes(bad, b, b.size());
    load_checkpoint(bad, model);
  }, {"load_checkpoint", bad, "wrong magic"});
  // K114 a truncated file
  kind("K114", [&] {
    write_bytes(bad, bytes, bytes.size() / 2);
    load_checkpoint(bad, model);
  }, {"load_checkpoint", bad, "truncated"});
  // K115 a flipped byte in the body: checksum mismatch
  kind("K115", [&] {
    Bytes b = bytes;
    b[b.size() / 2] ^= 0x40;
    write_bytes(bad, b, b.size());
    load_checkpoint(bad, model);
  }, {"load_checkpoint", bad, "checksum mismatch"});
  // K116 an unsupported format version
  kind("K116", [&] {
    Bytes b = bytes;
    b[8] = 7;
    reseal_checkpoint(b);
    write_bytes(bad, b, b.size());
    load_checkpoint(bad, model);
  }, {"load_checkpoint", bad, "unsupported format version 7"});
  // K117 a checkpoint of another model (different tensor names)
  kind("K117", [&] {
    nn::Sequential other{nn::Linear(4, 2)};
    load_checkpoint(good, other);
  }, {"load_checkpoint", good, "unexpected tensor 'weight'"});
  // K118 a checkpoint of a same-named model with other shapes
  kind("K118", [&] {
    nn::Linear other(3, 2);
    load_checkpoint(good, other);
  }, {"load_checkpoint", "'weight'", "(2,4)", "(2,3)"});
  // K119 the wrong optimizer type
  kind("K119", [&] {
    optim::Adam adam(model->parameters());
    load_checkpoint(good, model, adam);
  }, {"load_checkpoint", "SGD", "Adam"});
  // K120 optimizer state asked of a model-only file
  kind("K120", [&] {
    save_checkpoint(bad, model);
    load_checkpoint(bad, model, sgd);
  }, {"load_checkpoint", bad, "holds no optimizer state"});
}

TEST_CASE("catalogue: more dims, sizes and hyperparameters") {
  Tensor x = zeros({2, 3});  // (2, 3)
  Tensor p = test::param({2});
  // K121 narrow with a negative start
  kind("K121", [&] { narrow(x, 1, -1, 1); }, {"narrow", "start -1", "(2,3)"});
  // K122 index_select along a dim past the rank
  kind("K122", [&] { index_select(x, 5, IndexTensor({0}, {1})); }, {"index_select", "dim 5", "rank 2"});
  // K123 topk along a dim past the rank
  kind("K123", [&] { topk(x, 1, 4); }, {"topk", "dim 4", "rank 2"});
  // K124 unsqueeze past rank + 1
  kind("K124", [&] { x.unsqueeze(5); }, {"unsqueeze", "dim 5", "rank 3"});
  // K125 an element count that overflows int64
  kind("K125", [] { randn({int64_t(1) << 40, int64_t(1) << 40}); }, {"Shape", "(1099511627776,1099511627776)", "overflows"});
  // K126 more elements than any buffer can hold
  kind("K126", [] { zeros({int64_t(1) << 62}); }, {"zeros", "(4611686018427387904)", "more than"});
  // K127 use of an undefined tensor
  kind("K127", [] { Tensor().shape(); }, {"Tensor", "undefined tensor"});
  // K128 sum_to a shape the tensor does not broadcast from
  kind("K128", [&] { sum_to(x, {4}); }, {"sum_to", "(4)", "(2,3)"});
  // K129 backward through a freed graph
  kind("K129", [&] { Tensor y = mul(p, p).sum(); y.backward(); y.backward(); }, {"sum", "second time", "retain_graph"});
  // K130 nll_loss target past the classes
  kind("K130", [] { F::nll_loss(zeros({2, 4}), IndexTensor({5, 0}, {2})); }, {"nll_loss", "target 5", "C = 4"});
  // K131 binary_cross_entropy_with_logits of mismatched shapes
  kind("K131", [] { F::binary_cross_entropy_with_logits(zeros({2}), zeros({3})); },
       {"binary_cross_entropy_with_logits", "(2)", "(3)"});
  // K132 cross_entropy over zero classes
  kind("K132", [] { F::cross_entropy(zeros({2, 0}), IndexTensor({0, 0}, {2})); }, {"cross_entropy", "(2,0)", "no classes"});
  // K133 a NaN hyperparameter (every `x >= 0` check also refuses NaN)
  kind("K133", [&] { optim::Adam(std::vector<Tensor>{p}, optim::AdamOptions(NAN)); }, {"Adam", "learning rate nan"});
  // K134 Embedding.from_pretrained of a 1-D tensor
  kind("K134", [] { nn::Embedding::from_pretrained(zeros({3})); }, {"Embedding.from_pretrained", "(3)"});
  // K135 embedding with a 3-D weight
  kind("K135", [] { embedding(IndexTensor({0}, {1}), zeros({2, 2, 2})); }, {"embedding", "(2,2,2)"});
  // K136 negative layer sizes
  kind("K136", [] { nn::Linear(-1, 3); }, {"Linear", "got -1 and 3"});
  // K137 init fan of a 1-D tensor
  kind("K137", [] { Tensor w = zeros({3}); nn::init::xavier_uniform_(w); }, {"fans", "(3)"});
  // K138 init with an unknown fan mode
  kind("K138", [] { Tensor w = zeros({3, 3}); nn::init::kaiming_uniform_(w, 0, "fan_x"); }, {"kaiming_uniform_", "'fan_x'"});
  // K139 a module name containing '.'
  kind("K139", [] {
    struct M : nn::Module {
      M() { register_parameter("a.b", zeros({1})); }
      std::string repr() const override { return "M"; }
    } m;
  }, {"register_parameter", "'a.b'"});
  // K140 LayerNorm with an empty normalized_shape
  kind("K140", [] { nn::LayerNorm(nn::LayerNormOptions(std::vector<int64_t>{})); }, {"LayerNorm", "normalized_shape", "()"});
}

TEST_CASE("catalogue: more recurrent and attention inputs") {
  manual_seed(4);
  Tensor q = randn({1, 2, 8});  // (B=1, T=2, E=8)
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  // K141 LSTM given h0 without c0
  kind("K141", [] { nn::LSTM(4, 5)->forward(randn({2, 3, 4}), std::make_tuple(zeros({1, 2, 5}), Tensor())); },
       {"LSTM", "(h0, c0)"});
  // K142 LSTM with zero layers
  kind("K142", [] { nn::LSTM(nn::LSTMOptions(4, 5).num_layers(0)); }, {"LSTM", "num_layers", "got 0"});
  // K143 LSTM with hidden_size 0
  kind("K143", [] { nn::LSTM(nn::LSTMOptions(4, 0)); }, {"LSTM", "got 4 and 0"});
  // K144 GRU initial state of the wrong batch
  kind("K144", [] { nn::GRU(4, 5)->forward(randn({2, 3, 4}), zeros({1, 3, 5})); }, {"GRU", "h0", "(1,2,5)", "(1,3,5)"});
  // K145 pad_sequence of an undefined sequence
  kind("K145", [] { nn::utils::pad_sequence(std::vector<Tensor>{Tensor()}); }, {"pad_sequence", "sequence 0"});
  // K146 pad_sequence of no id lists
  kind("K146", [] { nn::utils::pad_sequence(std::vector<std::vector<int64_t>>{}); }, {"pad_sequence", "got no sequences"});
  // K147 positions past the positional encoding's max_len
  kind("K147", [] {
    nn::SinusoidalPositionalEncoding pe(nn::SinusoidalPositionalEncodingOptions(8).max_len(4));
    pe->forward(zeros({1, 5, 8}));
  }, {"SinusoidalPositionalEncoding", "0 .. 4", "max_len 4"});
  // K148 zero heads
  kind("K148", [] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 0)); }, {"MultiheadAttention", "got 8 and 0"});
  // K149 a fractional key padding mask on the flash path (need_weights = false)
  kind("K149", [&] { mha->forward(q, q, q, nn::AttentionMask().key_padding(full({1, 2}, 0.5)), {}, false); },
       {"MultiheadAttention", "key padding mask (1,2) holds 0.5"});
  // K150 attn_bias holding +inf
  kind("K150", [&] {
    Tensor b = zeros({1, 1, 2, 2});
    b.data()[0] = INFINITY;
    mha->forward(q, q, q, {}, b);
  }, {"MultiheadAttention", "attn_bias (1,1,2,2) holds inf"});
  // K151 rotary embedding of an odd dim
  kind("K151", [] { nn::RotaryEmbedding(nn::RotaryEmbeddingOptions(5)); }, {"RotaryEmbedding", "got 5"});
  // K152 linear attention heads not dividing embed_dim
  kind("K152", [] { nn::LinearAttention(nn::LinearAttentionOptions(8, 3)); }, {"LinearAttention", "(8)", "(3)"});
  // K153 ALiBi with zero heads
  kind("K153", [] { nn::alibi_slopes(0); }, {"alibi_slopes", "got 0"});
  // K154 a sparse pattern holding a value other than 0/1
  kind("K154", [] { nn::sparse_attention(zeros({1, 2, 4}), zeros({1, 2, 4}), zeros({1, 2, 4}), full({2, 2}, 2)); },
       {"sparse_attention", "found 2"});
  // K155 a negative sliding window
  kind("K155", [] { nn::sliding_window_attention(zeros({1, 2, 4}), zeros({1, 2, 4}), zeros({1, 2, 4}), {}, -1); },
       {"sliding_window_attention", "got -1"});
  // K156 chunk_size 0
  kind("K156", [] { nn::chunked_attention(zeros({1, 2, 4}), zeros({1, 2, 4}), zeros({1, 2, 4}), {}, 0); },
       {"chunked_attention", "got 0"});
  // K157 a transformer stack of zero layers
  kind("K157", [] { nn::TransformerEncoder(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2), 0)); },
       {"TransformerEncoder", "got 0"});
  // K158 additive (Bahdanau) attention with a zero size
  kind("K158", [] { nn::AdditiveAttention(nn::AdditiveAttentionOptions(0, 4, 4)); }, {"AdditiveAttention", "got 0, 4 and 4"});
}

TEST_CASE("catalogue: batch dims, empty tensors, gradients and checkpoints (more)") {
  Tensor x = zeros({2, 3});  // (2, 3)
  // K159 matmul batch dims that do not broadcast
  kind("K159", [] { matmul(zeros({2, 3, 4, 5}), zeros({3, 2, 5, 6})); }, {"matmul", "(2,3)", "(3,2)", "cannot be broadcast"});
  // K160 gather with a negative id
  kind("K160", [&] { gather(x, 1, IndexTensor({-1, 0}, {2, 1})); }, {"gather", "index -1", "[0, 3)"});
  // K161 item() of an empty tensor
  kind("K161", [] { zeros({0}).item(); }, {"item", "(0)"});
  // K162 set_grad with a gradient of another shape
  kind("K162", [] { Tensor a = test::param({2}); a.set_grad(zeros({3})); }, {"set_grad", "(3)", "(2)"});
  // K163 flash attention tiles of 0 rows
  kind("K163", [] { flash_attention(zeros({1, 2, 4}), zeros({1, 2, 4}), zeros({1, 2, 4}), {}, {}, FlashOptions().rows(0)); },
       {"flash_attention", "got 0 x"});
  // K164 decoder tgt and memory of different batch sizes
  kind("K164", [] {
    nn::TransformerDecoderLayer d(nn::TransformerDecoderLayerOptions(8, 2));
    d->forward(zeros({2, 3, 8}), zeros({1, 3, 8}));
  }, {"TransformerDecoderLayer", "(2,3,8)", "(1,3,8)"});
  // K165 unbiased variance over a dim of size 1
  kind("K165", [] { var(zeros({2, 1}), 1); }, {"var", "dim 1", "(2,1)"});
  // K166 permute with the wrong number of dims
  kind("K166", [&] { x.permute({0}); }, {"permute", "[0]", "(2,3)"});
  // K167 select from a 0-dim tensor
  kind("K167", [] { select(scalar_tensor(1), 0, 0); }, {"select", "0-dim"});
  // K168 a checkpoint missing a tensor the model has
  kind("K168", [] {
    test::TmpDir tmp;
    nn::Linear a(4, 2);
    save_checkpoint(tmp.file("a->ckpt"), a);
    struct Bigger : nn::Module {
      Bigger() {
        register_parameter("weight", zeros({2, 4}));
        register_parameter("bias", zeros({2}));
        register_parameter("extra", zeros({1}));
      }
      std::string repr() const override { return "Bigger"; }
    } b;
    load_checkpoint(tmp.file("a->ckpt"), b);
  }, {"load_checkpoint", "missing tensor 'extra'"});
  // K169 functional embedding with padding_idx out of range
  kind("K169", [] { embedding(IndexTensor({0}, {1}), zeros({3, 2}), int64_t(5)); }, {"embedding", "padding_idx 5", "[0, 3)"});
  // K170 key width not matching kdim
  kind("K170", [] {
    nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).kdim(4));
    Tensor q = randn({1, 2, 8});
    m->forward(q, q, q);
  }, {"MultiheadAttention", "key (1,2,8)", "kdim = 4"});
  // K171 a non-finite gradient norm with error_if_nonfinite
  kind("K171", [] {
    Tensor a = test::param({2});
    a.set_grad(full({2}, NAN));
    optim::clip_grad_norm_({a}, 1.0, 2, true);
  }, {"clip_grad_norm_", "is nan"});
  // K172 the GELU module with an unknown approximation
  kind("K172", [] { nn::GELU(nn::GELUOptions().approximate("fast")); }, {"GELU", "'fast'"});
  // K173 reshape inferring -1 beside a zero-size dim
  kind("K173", [] { zeros({0, 3}).reshape({-1, 0}); }, {"reshape", "(0,3)", "(-1,0)"});
}

TEST_CASE("catalogue: subscripts and what libtorch refuses (round 5)") {
  // K174 an IndexTensor subscript past the end (it read beside the ids, or crashed)
  kind("K174", [] { (void)IndexTensor({1, 2, 3})[100000000]; }, {"IndexTensor[]", "index 100000000", "size 3"});
  // K175 ... and before the start
  kind("K175", [] { (void)IndexTensor({1, 2, 3})[-4]; }, {"IndexTensor[]", "index -4", "size 3"});
  // K176 a dim of a shape past its rank
  kind("K176", [] { (void)zeros({2, 3}).shape()[2]; }, {"Shape[]", "index 2", "size 2"});
  // K177 a layer of a transformer stack past its length (std::out_of_range escaped)
  kind("K177", [] {
    nn::TransformerEncoder enc(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2), 2));
    (*enc->layers)[2];
  }, {"ModuleList", "index 2", "2 layers"});
  // K178 autograd::grad with no inputs (it returned {})
  kind("K178", [] { Tensor p = test::param({2}); autograd::grad({sum(p * p)}, {}); },
       {"autograd::grad", "inputs is empty"});
  // K179 a parameter and a buffer under one name (state_dict had two "w")
  kind("K179", [] {
    struct Twice : nn::Module {
      Twice() {
        register_parameter("w", zeros({2}));
        register_buffer("w", zeros({2}));
      }
    } t;
  }, {"register_buffer", "parameter 'w' already registered"});
  // K180 ... the other way round, and a submodule under a parameter's name
  kind("K180", [] {
    struct Twice : nn::Module {
      Twice() {
        register_buffer("w", zeros({2}));
        register_parameter("w", zeros({2}));
      }
    } t;
  }, {"register_parameter", "buffer 'w' already registered"});
  kind("K181", [] {
    struct Twice : nn::Module {
      Twice() {
        register_parameter("fc", zeros({2}));
        register_module("fc", nn::Linear(2, 2));
      }
    } t;
  }, {"register_module", "parameter 'fc' already registered"});
  // K182 one KVCache filled by cross-attention, then used by self-attention (and the reverse)
  kind("K182", [] {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
    NoGradGuard ng;
    const Tensor x = randn({1, 3, 8}), mem = randn({1, 3, 8});
    nn::KVCache cache(1, 2, 16, 4, 4);
    mha->forward(x, mem, mem, {}, {}, false, true, &cache, nn::Attending::cross);
    mha->forward(x, x, x, {}, {}, false, true, &cache, nn::Attending::self);
  }, {"KVCache", "MultiheadAttention", "used for self-attention", "3 token(s) of cross-attention"});
  kind("K183", [] {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
    NoGradGuard ng;
    const Tensor x = randn({1, 3, 8});
    nn::KVCache cache(1, 2, 16, 4, 4);
    mha->forward(x, x, x, {}, {}, false, true, &cache, nn::Attending::self);
    mha->forward(x, x, x, {}, {}, false, true, &cache, nn::Attending::cross);
  }, {"KVCache", "used for cross-attention", "3 token(s) of self-attention"});
  // K184 expand with -1 on a new leading dim (no size to keep)
  kind("K184", [] { zeros({3}).expand({-1, 3}); }, {"expand", "-1 at dim 0", "new leading dim"});
}
