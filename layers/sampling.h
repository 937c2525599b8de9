// sampling.h - choosing the next token from a language model's logits: greedy, temperature,
// top-k and top-p (nucleus) sampling, and their combination, over a (B, V) logits tensor.
//
//   greedy         y_b = argmax_v z_bv                       ties: the lowest index (torch.argmax)
//   temperature    z' = z / t                                t -> 0 sharpens toward greedy
//   top-k          keep the k largest z_bv of each row       (Fan et al. 2018)
//   top-p          keep the smallest set of the likeliest tokens whose probability reaches p
//                  (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration")
//   draw           y_b ~ Categorical(softmax(z'_b)) over what is kept, renormalised
//
// Letters: B rows (sequences decoded together), V vocabulary.
//
// The filters mark a removed token with a logit of -inf, so they compose, and sample() is
// their composition in Hugging Face's order: temperature, then top-k, then top-p computed on
// the distribution top-k left (renormalised), then one draw per row. (sample() runs the chain
// on each row in double and subtracts the row's maximum before dividing by the temperature,
// which changes no probability and keeps a tiny temperature from overflowing a logit.) Ties at a boundary are
// kept: top-k keeps every token equal to the k-th largest (as nanoGPT's and Hugging Face's
// `logits < topk(...)[-1]` rule, so more than k survive a tie), and top-p keeps every token
// as likely as the last one it needed. Temperature 0 is greedy and draws nothing.
//
// Random numbers come from heed's generator (core/random.h): one uniform per row, rows in
// order, so heed::manual_seed(s) repeats a run's draws. Nothing here records a graph. Every
// check runs before the first draw: a call that throws leaves the generator as it was.
// SamplingOptions is a plain value.
//
// A logit may be -inf (a banned token). Errors (heed::Error naming the function and the
// value): logits not 2-D or with V = 0, a NaN logit; for the functions that take a softmax
// (top_p_filter, sample_categorical, sample with temperature > 0) a +inf logit or a row
// whose logits are all -inf; temperature < 0 or NaN, top_k < 0, top_p outside (0, 1].
//
// Example:
//   Tensor logits = model.forward(ids);                               // (B, T, V)
//   Tensor last = select(logits, 1, T - 1);                           // (B, V)
//   IndexTensor next = nn::sample(last, nn::SamplingOptions().temperature(0.8).top_k(20).top_p(0.9));
#pragma once
#include <cstdint>

#include "../core/arg.h"
#include "../core/tensor.h"

namespace heed::nn {

// What sample() does; each setting at its default leaves the distribution alone.
class SamplingOptions {
 public:
  HEED_ARG(double, temperature) = 1.0;  // 0: greedy
  HEED_ARG(int64_t, top_k) = 0;         // 0: every token
  HEED_ARG(double, top_p) = 1.0;        // 1: every token
};

// (B, V) -> (B): each row's largest logit; ties and -inf rows -> the lowest index.
IndexTensor greedy(const Tensor& logits);

// (B, V) -> (B, V): logits / temperature, temperature > 0.
Tensor apply_temperature(const Tensor& logits, double temperature);

// (B, V) -> (B, V): each row's logits below its k-th largest set to -inf (ties with it kept);
// k = 0 or k >= V keeps every logit.
Tensor top_k_filter(const Tensor& logits, int64_t k);

// (B, V) -> (B, V): with q = softmax(row) sorted q_(1) >= q_(2) >= ..., n the smallest count
// with q_(1) + ... + q_(n) >= p: every logit whose q < q_(n) set to -inf. p = 1 keeps all.
Tensor top_p_filter(const Tensor& logits, double p);

// (B, V) -> (B): one draw per row from softmax(row), -inf logits never drawn.
IndexTensor sample_categorical(const Tensor& logits);

// (B, V) -> (B, V): the distribution sample() draws from (one-hot at greedy() when the
// temperature is 0). For tests and for showing what a setting keeps.
Tensor sampling_probabilities(const Tensor& logits, const SamplingOptions& options = SamplingOptions());

// (B, V) -> (B): the next token of each row under `options`.
IndexTensor sample(const Tensor& logits, const SamplingOptions& options = SamplingOptions());

}  // namespace heed::nn
