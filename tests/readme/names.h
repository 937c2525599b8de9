// names.h - the names README.md's code uses without declaring them (x, logits, model, opt,
// ...), with values that make each snippet run. build/readme/examples.cpp (written from the
// README by tests/readme/extract.awk) runs every snippet as a doctest case in the fixture of
// its `##` section: a fresh one per case, so a snippet that changes a name (y = fc(x)) or
// declares one again (nn::Linear fc(...)) changes nothing for the next. A snippet in a new
// section needs a fixture of the section's slug below; a new name, a member here.
// Shape letters: B batch, T time, C channels, V vocabulary (core/tensor.h).
#pragma once

#include <heed/heed.h>
#include <heed/layers/torch_compat.h>  // the libtorch column: namespace torch = heed

#include <cstdint>
#include <string>
#include <vector>

namespace heed::readme {

using namespace heed;
namespace F = heed::nn::functional;
using heed::data::transforms::Stack;
using heed::indexing::None;
using heed::indexing::Slice;

// An expression snippet's value (extract.awk writes `auto valueN = value_of([&] { return
// (...); })`): what it returns, or a Void for an expression of type void.
struct Void {};
template <class F>
auto value_of(F f) {
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    return Void{};
  } else {
    return f();
  }
}

// Six examples of three features and a 0/1 label, for the data loader rows.
struct SixExamples : data::datasets::Dataset<SixExamples> {
  data::Example<> get(size_t i) override { return {full({3}, real(i)), full({}, real(i % 2))}; }
  std::optional<size_t> size() const override { return 6; }
};

struct Seeded {
  Seeded() { manual_seed(0); }
};

// ## Coming from libtorch: a Module (register_module is for its members, as libtorch's).
struct coming_from_libtorch : Seeded, nn::Module {
  Tensor x = randn({2, 4});  // (B, 4), fc's input
  nn::Linear fc{4, 3};
  nn::Sequential model{nn::Linear(4, 3)};
  optim::SGD opt{model->parameters(), optim::SGDOptions(0.1)};
  std::string path = "readme_ckpt.bin";
  Tensor real = ones({2, 5});  // (B, T) key padding: 1 = a real token
  nn::TransformerEncoder enc{nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2), 1)};
  nn::MultiheadAttention mha{nn::MultiheadAttentionOptions(8, 2)};
  Tensor src = randn({2, 5, 8}), q = src, k = src, v = src;  // (B, T, C)
  Tensor bias = zeros({5, 5});                               // (T, T), added to the scores
  int64_t n = 3;
  std::vector<int64_t> ids{4, 5, 6};
  int64_t* ptr = ids.data();
  Tensor p = randn({3, 4}).requires_grad_();  // a parameter
  Tensor t = p + p;                           // a result with a grad_fn
  Tensor loss = (p * p).sum();
  Tensor w = randn({3, 4});
  int64_t i = 1;
  SixExamples ds;
  data::DataLoaderOptions opts{4};
};

// ## API at a glance, its tables and "Saving and loading".
struct api_at_a_glance : Seeded {
  Tensor x = randn({2, 3, 64});  // (B, T, C)
  Tensor y = rand({2, 3, 64});   // (B, T, C) in [0, 1): a target for the losses on x
  Tensor pred = randn({2, 3, 64});
  Tensor w = rand({3, 64});  // (T, C): a weight for nn::init, and a pos_weight over x
  int64_t V = 10;
  IndexTensor ids = IndexTensor({1, 2, 0});
  Tensor vectors = randn({10, 64});  // (V, C)
  nn::LSTMCell cell{nn::LSTMCellOptions(64, 128)};
  Tensor x_t = randn({2, 64}), h = zeros({2, 128}), c = zeros({2, 128});  // (B, C), (B, H)
  std::vector<int64_t> lengths{3, 2};                                     // (B)
  Tensor src = randn({2, 5, 512}), tgt = randn({2, 3, 512}), src_real = ones({2, 5});
  std::vector<std::vector<int64_t>> sentences{{5, 8, 2}, {7, 3}};
  nn::Embedding emb{nn::EmbeddingOptions(10, 64)};
  nn::LSTM lstm{nn::LSTMOptions(64, 128)};
  Tensor logits = randn({2, 10});  // (B, V)
  IndexTensor targets = IndexTensor({3, 0});  // (B)
  Tensor log_probs = log_softmax(logits, 1);
  nn::Sequential model{nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 10)};
  std::vector<Tensor> params = model->parameters();
  std::vector<Tensor> body = model[0]->parameters(), head = model[2]->parameters();
  optim::Adam opt{params, optim::AdamOptions(1e-3)};
  SixExamples ds;
  // The files "Saving and loading" reads, written once (check-readme runs in build/readme/run).
  api_at_a_glance() {
    static const bool written = [this] {
      safetensors::save_model(*model, "from_torch.safetensors");
      safetensors::save_file(model->state_dict(), "x.safetensors");
      return true;
    }();
    (void)written;
  }
};

// ## Higher-order gradients: its block declares what it uses.
struct higher_order_gradients : Seeded {};

// ## Mixed precision: evaluate() is the reader's own code; the setting is put back after.
struct mixed_precision : Seeded {
  int evaluated = 0;
  void evaluate() { ++evaluated; }
  ~mixed_precision() { set_float32_matmul_precision("highest"); }
};

// ## Attention: a decoder over a memory, decoded with a key/value cache.
struct attention : Seeded {
  int64_t B = 2, max_len = 8;
  nn::TransformerDecoder decoder{
      nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(16, 2).dim_feedforward(32), 2)};
  Tensor memory = randn({2, 5, 16});  // (B, Ts, C): the encoder's output
  Tensor prompt = randn({2, 3, 16});  // (B, Tp, C): the embedded prompt
  Tensor next_token = randn({2, 1, 16});
  nn::AttentionMask src_mask = nn::AttentionMask().key_padding(ones({2, 5}));
  IndexTensor parents = IndexTensor({1, 1});  // both beams continue row 1
  attention() { decoder->eval(); }            // decoding: no dropout
};

}  // namespace heed::readme
