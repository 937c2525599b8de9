// gpt.h - the GPT of examples/char_gpt.cpp (Radford et al. 2018/2019, "GPT", "GPT-2"; the
// Transformer of Vaswani et al. 2017 with pre-norm blocks, Xiong et al. 2020), and its
// generation loop, written against <heed/heed.h> only so that tests and benchmarks build the
// same model.
//
//   GPT            embedding + positions (learned | sinusoidal | rotary) -> N blocks -> norm
//                  -> logits, with nanoGPT's module names, its output layer tied to the embedding
//   generate       continues a prompt token by token: a step function gives the next-token
//                  logits (recompute_step: the whole context each token; cached_step: the new
//                  token only, with a KV cache per block), nn::sample chooses the token
//
// One block (pre-norm, causal):
//   x = x + Dropout(W_o · Attention(rope?(LN1(x) W_q), rope?(LN1(x) W_k), LN1(x) W_v))
//   x = x + Dropout(W_2 · GELU(W_1 · LN2(x)))
// Attention = softmax(Q K^T / sqrt(D) + causal mask) V per head, computed by heed's tiled
// ("flash") kernel, which never forms the (T, T) scores (Dao et al. 2022).
// Shapes: B batch, T time (<= block_size), E width (n_embd), H heads, D = E / H head width,
// V vocabulary.
//
// Example:
//   gpt::GPT model(gpt::GPTConfig().vocab_size(65).block_size(64));
//   IndexTensor out = gpt::generate(model, prompt, 100, nn::SamplingOptions().top_k(20),
//                                   gpt::cached_step(model, B));   // prompt (B, T0) -> (B, T0 + 100)
#pragma once
#include <heed/heed.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpt {

using heed::IndexTensor;
using heed::Tensor;
namespace nn = heed::nn;

// The model's sizes, with nanoGPT's names (karpathy/nanoGPT, model.py GPTConfig) and its
// baby-GPT defaults; pos is heed's addition: learned | sinusoidal | rope. A value: copies are
// independent. The setters take anything; GPT's constructor calls check(), which refuses
// what cannot build a model (heed::Error naming GPTConfig and the field). n_layer 0 is a
// model without blocks (embeddings, final norm, head), as nanoGPT builds one.
class GPTConfig {
 public:
  GPTConfig& block_size(int64_t v) { block_size_ = v; return *this; }  // longest context
  GPTConfig& vocab_size(int64_t v) { vocab_size_ = v; return *this; }
  GPTConfig& n_layer(int64_t v) { n_layer_ = v; return *this; }
  GPTConfig& n_head(int64_t v) { n_head_ = v; return *this; }
  GPTConfig& n_embd(int64_t v) { n_embd_ = v; return *this; }
  GPTConfig& dropout(double v) { dropout_ = v; return *this; }
  GPTConfig& pos(const std::string& v) { pos_ = v; return *this; }
  int64_t block_size() const { return block_size_; }
  int64_t vocab_size() const { return vocab_size_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t n_head() const { return n_head_; }
  int64_t n_embd() const { return n_embd_; }
  double dropout() const { return dropout_; }
  const std::string& pos() const { return pos_; }

  void check() const {
    auto at_least = [](const char* field, int64_t v, int64_t min) {
      if (v < min) heed::fail("GPTConfig", field, " must be >= ", min, ", got ", v);
    };
    at_least("vocab_size", vocab_size_, 1);
    at_least("block_size", block_size_, 1);
    at_least("n_layer", n_layer_, 0);
    at_least("n_head", n_head_, 1);
    at_least("n_embd", n_embd_, 1);
    if (n_embd_ % n_head_ != 0)
      heed::fail("GPTConfig", "n_embd (", n_embd_, ") must be divisible by n_head (", n_head_, ")");
    if (!(dropout_ >= 0 && dropout_ < 1)) heed::fail("GPTConfig", "dropout must be in [0, 1), got ", dropout_);
    if (pos_ != "learned" && pos_ != "sinusoidal" && pos_ != "rope")
      heed::fail("GPTConfig", "pos must be one of learned, sinusoidal, rope; got '", pos_, "'");
    if (pos_ == "rope" && (n_embd_ / n_head_) % 2 != 0)
      heed::fail("GPTConfig", "pos 'rope' needs an even head width n_embd / n_head, got ", n_embd_ / n_head_);
  }

 private:
  int64_t block_size_ = 64, vocab_size_ = 65, n_layer_ = 4, n_head_ = 4, n_embd_ = 128;
  double dropout_ = 0.1;
  std::string pos_ = "learned";
};

// ------------------------------------------------------------------ model
// Module names and shapes are nanoGPT's, so its GPT loads char_gpt's --export file and
// char_gpt --import loads its weights:
//   transformer.wte (V, E)   transformer.wpe (block, E)   transformer.h.{i}.ln_1, .attn.c_attn
//   (3E, E), .attn.c_proj, .ln_2, .mlp.c_fc (4E, E), .mlp.c_proj (E, 4E)   transformer.ln_f
//   lm_head (V, E), the same tensor as transformer.wte (tied, Press & Wolf 2017)

// Causal multi-head self-attention: one packed projection to Q, K, V, rotary positions on
// Q and K when asked, heed::flash_attention with a causal mask, the output projection.
class CausalSelfAttentionImpl : public nn::Module {
 public:
  CausalSelfAttentionImpl(int64_t E, int64_t H, double dropout, bool rope) : E_(E), H_(H) {
    c_attn = register_module("c_attn", nn::Linear(E, 3 * E));
    c_proj = register_module("c_proj", nn::Linear(E, E));
    resid_dropout = register_module("resid_dropout", nn::Dropout(dropout));
    if (rope) this->rope = register_module("rope", nn::RotaryEmbedding(E / H));
  }
  // x (B, T, E) -> (B, T, E). With a cache, x holds the T tokens that follow the
  // n = cache->size() cached ones: rotary positions start at n, their keys and values are
  // appended, and the queries attend causally to all n + T (what rows n .. n+T-1 of a full
  // pass see).
  Tensor forward(const Tensor& x, nn::KVCache* cache = nullptr) {
    const int64_t B = x.size(0), T = x.size(1), D = E_ / H_, offset = cache ? cache->size() : 0;
    Tensor qkv = c_attn->forward(x);  // (B, T, 3E): q, k, v side by side
    auto head = [&](int64_t i) { return narrow(qkv, 2, i * E_, E_).reshape({B, T, H_, D}).transpose(1, 2); };
    Tensor q = head(0), k = head(1), v = head(2);  // (B, H, T, D) each
    if (rope) q = rope->forward(q, offset), k = rope->forward(k, offset);
    Tensor y;  // (B, H, T, D)
    if (cache) {
      // the cache refuses keys and values computed under other weights (an optimizer step since)
      cache->note_weights("CausalSelfAttention", {c_attn->weight, c_attn->bias});
      cache->append(k, v);                                 // keys and values of positions [n, n + T)
      y = cache->attend(q, nn::AttentionMask().causal());  // over the n + T cached, read in place
    } else {
      y = flash_attention(q, k, v, nn::AttentionMask().causal());
    }
    return resid_dropout->forward(c_proj->forward(y.transpose(1, 2).reshape({B, T, E_})));
  }
  std::string repr() const override { return "CausalSelfAttention"; }
  nn::Linear c_attn{nullptr}, c_proj{nullptr};
  nn::Dropout resid_dropout{nullptr};
  nn::RotaryEmbedding rope{nullptr};  // only with pos "rope"

 private:
  int64_t E_, H_;
};
HEED_MODULE(CausalSelfAttention);

// mlp(x) = dropout(c_proj(gelu(c_fc(x)))), hidden width 4E. gelu(c_fc(x)) is one op,
// linear_gelu: GELU is the product's epilogue (autograd/ops/linear.h).
class MLPImpl : public nn::Module {
 public:
  MLPImpl(int64_t E, double dropout) {
    c_fc = register_module("c_fc", nn::Linear(E, 4 * E));
    c_proj = register_module("c_proj", nn::Linear(4 * E, E));
    this->dropout = register_module("dropout", nn::Dropout(dropout));
  }
  Tensor forward(const Tensor& x) {
    return dropout->forward(c_proj->forward(linear_gelu(x, c_fc->weight, c_fc->bias)));
  }
  std::string repr() const override { return "MLP"; }
  nn::Linear c_fc{nullptr}, c_proj{nullptr};
  nn::Dropout dropout{nullptr};
};
HEED_MODULE(MLP);

// x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
class BlockImpl : public nn::Module {
 public:
  BlockImpl(int64_t E, int64_t H, double dropout, bool rope) {
    ln_1 = register_module("ln_1", nn::LayerNorm(nn::LayerNormOptions({E})));
    attn = register_module("attn", CausalSelfAttention(E, H, dropout, rope));
    ln_2 = register_module("ln_2", nn::LayerNorm(nn::LayerNormOptions({E})));
    mlp = register_module("mlp", MLP(E, dropout));
  }
  Tensor forward(Tensor x, nn::KVCache* cache = nullptr) {  // (B, T, E); cache: CausalSelfAttention's
    x = x + attn->forward(ln_1->forward(x), cache);
    return x + mlp->forward(ln_2->forward(x));
  }
  std::string repr() const override { return "Block"; }
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
HEED_MODULE(Block);

// nanoGPT's `transformer` ModuleDict: embeddings, positions, the blocks, the final norm.
class TrunkImpl : public nn::Module {
 public:
  explicit TrunkImpl(const GPTConfig& c) {
    const int64_t E = c.n_embd();
    wte = register_module("wte", nn::Embedding(c.vocab_size(), E));
    if (c.pos() == "learned") wpe = register_module("wpe", nn::LearnedPositionalEmbedding(c.block_size(), E));
    if (c.pos() == "sinusoidal")
      sinusoidal = register_module("pos_enc", nn::SinusoidalPositionalEncoding(E, c.block_size()));
    drop = register_module("drop", nn::Dropout(c.dropout()));
    h = register_module("h", std::make_shared<nn::LayerStack<Block>>());
    for (int64_t i = 0; i < c.n_layer(); ++i) h->push_back(Block(E, c.n_head(), c.dropout(), c.pos() == "rope"));
    ln_f = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({E})));
  }
  // ids (B, T) -> (B, T, E), ids at positions offset .. offset+T-1. With caches (one per
  // block, each holding the `offset` tokens before ids), each block appends to its cache.
  Tensor forward(const IndexTensor& ids, std::vector<nn::KVCache>* caches = nullptr, int64_t offset = 0) {
    if (caches && caches->size() != h->size())
      heed::fail("Trunk::forward", "caches: one per block expected (", h->size(), "), got ", caches->size());
    for (size_t i = 0; caches && i < caches->size(); ++i)
      if ((*caches)[i].size() != offset)
        heed::fail("Trunk::forward", "caches: cache ", i, " holds ", (*caches)[i].size(), " tokens, but offset is ", offset);
    Tensor x = wte->forward(ids);
    if (wpe) x = wpe->forward(x, offset);
    if (sinusoidal) x = sinusoidal->forward(x, offset);
    x = drop->forward(x);
    for (size_t i = 0; i < h->size(); ++i) x = (*h)[i].forward(x, caches ? &caches->at(i) : nullptr);
    return ln_f->forward(x);
  }
  std::string repr() const override { return "Trunk"; }
  nn::Embedding wte{nullptr};
  nn::LearnedPositionalEmbedding wpe{nullptr};
  nn::SinusoidalPositionalEncoding sinusoidal{nullptr};
  nn::Dropout drop{nullptr};
  std::shared_ptr<nn::LayerStack<Block>> h;
  nn::LayerNorm ln_f{nullptr};
};
HEED_MODULE(Trunk);

// The output layer, logits = x W^T with W the token embedding itself: registering wte's
// tensor here ties them (one parameter, two names; Module::named_parameters lists it once).
class TiedHeadImpl : public nn::Module {
 public:
  explicit TiedHeadImpl(const Tensor& wte) { weight = register_parameter("weight", wte); }
  Tensor forward(const Tensor& x) { return linear(x, weight); }  // (B, T, E) -> (B, T, V)
  std::string repr() const override { return "TiedHead(weight=transformer.wte.weight)"; }
  Tensor weight;  // (V, E)
};
HEED_MODULE(TiedHead);

// GPTImpl is not copyable (nn::Module's copy is deleted); copying the holder gpt::GPT shares
// the one model, as a libtorch holder. For a second, independent model build a second GPT
// and load_state_dict into it.
// The constructor checks the config first (GPTConfig::check); nothing is built on error.
class GPTImpl : public nn::Module {
 public:
  explicit GPTImpl(const GPTConfig& c) : config_(c) {
    c.check();
    transformer = register_module("transformer", Trunk(c));
    lm_head = register_module("lm_head", TiedHead(transformer->wte->weight));
    init_gpt2(c.n_layer());
  }
  Tensor forward(const IndexTensor& ids) { return lm_head->forward(transformer->forward(ids)); }  // (B, T) -> (B, T, V)
  std::string repr() const override { return "GPT(pos=" + config_.pos() + ")"; }
  const GPTConfig& config() const { return config_; }
  int64_t block() const { return config_.block_size(); }
  GPTImpl(const GPTImpl&) = delete;
  GPTImpl& operator=(const GPTImpl&) = delete;

  Trunk transformer{nullptr};
  TiedHead lm_head{nullptr};

 private:
  // GPT-2's initialisation (Radford et al. 2019, sec. 2.3): every matrix N(0, 0.02), the
  // projections that write into the residual stream N(0, 0.02 / sqrt(2 L)), biases 0.
  void init_gpt2(int64_t L) {
    heed::NoGradGuard no_grad;
    for (auto& [name, p] : named_parameters()) {
      const bool residual = name.find("c_proj.weight") != std::string::npos;
      if (p.dim() >= 2) p.copy_(heed::randn(p.shape()) * heed::real(residual ? 0.02 / std::sqrt(2.0 * L) : 0.02));
      else if (name.find("bias") != std::string::npos) p.zero_();
    }
  }
  GPTConfig config_;
};
HEED_MODULE(GPT);

// ------------------------------------------------------------------ generation
// A step maps every row's sequence so far, seq (B, t), to the logits of the token after it,
// (B, V). The step owns whatever it keeps between calls: recompute_step keeps nothing; a
// cached step keeps each layer's keys and values and runs the model on the new tokens only.
using Step = std::function<Tensor(const IndexTensor& seq)>;

// The last `n` columns of seq (B, t): (B, min(n, t)).
inline IndexTensor last_columns(const IndexTensor& seq, int64_t n) {
  const int64_t B = seq.size(0), t = seq.size(1), T = std::min(n, t);
  std::vector<int64_t> out(B * T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < T; ++j) out[b * T + j] = seq.data()[b * t + (t - T + j)];
  return IndexTensor(out, {B, T});
}

// Recompute: runs the whole model on the context every step, O(context) positions per
// token. The context is the last block_size tokens (nanoGPT's crop, `idx[:, -block_size:]`):
// once the sequence is longer than the block, the oldest token falls out of the window and
// every position is encoded again at its new place in it.
inline Step recompute_step(GPTImpl& model) {
  return [&model](const IndexTensor& seq) {
    const IndexTensor ctx = last_columns(seq, model.block());        // (B, T)
    const Tensor logits = model.forward(ctx);                         // (B, T, V)
    return select(logits, 1, ctx.size(1) - 1);                        // (B, V)
  };
}

// Cached: keeps each block's keys and values (nn::KVCache, layers/attention/kv_cache.h) between calls
// and runs the model on the tokens it has not seen only. The first call prefills the prompt
// in one forward (B, T0); each later call, with the sequence one token longer, feeds that
// token alone at position offset cache.size(): O(1) positions per token instead of O(t).
// Memory: n_layer caches of (batch, H, block_size, D) keys and values, 2 * E * sizeof(real)
// bytes per token per row per layer (KVCache::bytes_per_token).
//
// At block_size, the step does what nanoGPT's crop does, exactly: once the sequence is longer
// than the block, the context is the last block_size tokens re-encoded from position 0, so
// every key and value cached for the old window is stale:
//   learned and sinusoidal positions: every token's position index changes by one;
//   rotary positions: a single attention layer would be unaffected (q_i . k_j depends on i - j
//     only), but from the second block on a token's key and value come from the block below's
//     output at that token, which attended to the tokens before it. In the crop the window's
//     first token sees only itself; in a slid cache (a rolling buffer, as Mistral's or
//     candle's RotatingKvCache) it saw its whole past. Sliding is a different model of the
//     context, not nanoGPT's crop, so it is not done here.
// So past block_size each step resets the caches and prefills the last block_size tokens:
// one forward of block_size positions per token, the cost of recompute_step. The cache pays
// off while the sequence fits the block (generate with block_size >= prompt + new tokens).
//
// The step remembers which tokens its caches hold: a sequence that does not extend them (a
// new prompt, another sample) starts afresh. A call that throws empties the caches, so the
// next call starts afresh too and answers as recompute_step would. Copies of the returned
// Step (a std::function) share one set of caches: make another cached_step for an
// independent one. The model must be in evaluation mode (generate
// sets it): heed::Error naming cached_step otherwise, or for a seq that is not (batch, t).
// Proof that it equals recompute_step: tests/test_gpt_generate.cpp (logits to 1e-5 at every
// step and the same sampled tokens over 300 steps past the block, every position type).
inline Step cached_step(GPTImpl& model, int64_t batch) {
  const GPTConfig& c = model.config();
  if (batch < 1) heed::fail("cached_step", "batch must be >= 1, got ", batch);
  c.check();
  struct State {
    std::vector<nn::KVCache> caches;  // one per block: (batch, H, block_size, D)
    std::vector<int64_t> held;        // (batch, n): the n tokens cached, row-major
  };
  auto state = std::make_shared<State>();
  const int64_t D = c.n_embd() / c.n_head();
  for (int64_t i = 0; i < c.n_layer(); ++i) state->caches.emplace_back(batch, c.n_head(), c.block_size(), D, D);
  return [&model, state, batch](const IndexTensor& seq) {
    if (seq.dim() != 2 || seq.size(0) != batch || seq.size(1) < 1)
      heed::fail("cached_step", "seq must be (batch, t) = (", batch, ", t >= 1), got shape ", seq.shape());
    if (model.is_training())
      heed::fail("cached_step", "the model is in training mode (dropout would differ per call): call model->eval()");
    heed::NoGradGuard no_grad;
    const int64_t t = seq.size(1), block = model.block();
    int64_t n = int64_t(state->held.size()) / batch;
    bool extends = t <= block && n < t;  // the cached tokens are the first n of every row?
    for (int64_t b = 0; extends && b < batch; ++b)
      extends = std::equal(state->held.begin() + b * n, state->held.begin() + (b + 1) * n, seq.data() + b * t);
    auto forget = [&] {
      for (auto& cache : state->caches) cache.reset();
      state->held.clear();
    };
    if (!extends) {  // a new sequence, or past the block: re-encode the (last block_size) tokens
      forget();
      n = 0;
    }
    const IndexTensor window = last_columns(seq, std::min(t, block));  // (B, min(t, block))
    const int64_t from = n, fresh = window.size(1) - n;                // feed columns [n, n + fresh)
    std::vector<int64_t> ids(batch * fresh), held(batch * (n + fresh));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < n + fresh; ++j) {
        held[b * (n + fresh) + j] = window.data()[b * window.size(1) + j];
        if (j >= from) ids[b * fresh + j - from] = held[b * (n + fresh) + j];
      }
    Tensor x;  // (B, fresh, E)
    try {
      x = model.transformer->forward(IndexTensor(ids, {batch, fresh}), &state->caches, from);
    } catch (...) {  // some blocks may have appended: start afresh next time
      forget();
      throw;
    }
    state->held = std::move(held);
    return model.lm_head->forward(select(x, 1, fresh - 1));  // (B, V)
  };
}

// Continues each row of prompt (B, T0), T0 >= 1, by n tokens: each step gives the next
// token's logits and nn::sample draws it (with heed's generator: manual_seed repeats a run).
// Evaluation mode and no graph while it runs; the model's mode is restored on every way out,
// a throwing step included. Returns (B, T0 + n).
inline IndexTensor generate(GPTImpl& model, const IndexTensor& prompt, int64_t n, const nn::SamplingOptions& sampling,
                            const Step& step) {
  if (prompt.dim() != 2 || prompt.size(0) < 1 || prompt.size(1) < 1)
    heed::fail("generate", "the prompt must be (B, T0) with B, T0 >= 1, got shape ", prompt.shape());
  heed::NoGradGuard no_grad;
  heed::Bf16CacheScope keep;  // "medium": each weight rounded once for all the tokens (core/bf16_cache.h)
  struct RestoreMode {  // puts the model back in the mode it had, however generate ends
    GPTImpl& model;
    const bool was_training = model.is_training();
    ~RestoreMode() { model.train(was_training); }
  } restore{model};
  model.eval();
  const int64_t B = prompt.size(0), T0 = prompt.size(1);
  std::vector<std::vector<int64_t>> rows(B);  // row b's tokens so far
  for (int64_t b = 0; b < B; ++b) rows[b].assign(prompt.data() + b * T0, prompt.data() + (b + 1) * T0);
  auto so_far = [&] {  // (B, t)
    std::vector<int64_t> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    return IndexTensor(flat, {B, int64_t(rows[0].size())});
  };
  for (int64_t i = 0; i < n; ++i) {
    const IndexTensor next = nn::sample(step(so_far()), sampling);  // (B)
    for (int64_t b = 0; b < B; ++b) rows[b].push_back(next[b]);
  }
  return so_far();
}

}  // namespace gpt
