// transformer_model.cpp - nn::Transformer: the encoder and decoder stacks joined, with
// torch.nn.Transformer's checks and initialisation (equations: transformer_model.h).
#include "transformer_model.h"

#include "../core/error.h"
#include "init.h"

namespace heed::nn {

TransformerImpl::TransformerImpl(const TransformerOptions& opts) : options(opts) {
  options.layer().check("Transformer");
  HEED_CHECK(options.num_encoder_layers() >= 1 && options.num_decoder_layers() >= 1, "Transformer",
             "num_encoder_layers and num_decoder_layers must be >= 1; got ", options.num_encoder_layers(),
             " and ", options.num_decoder_layers());
  encoder = register_module("encoder", TransformerEncoder(
                                           TransformerEncoderOptions(options.layer(), options.num_encoder_layers()).norm(true)));
  decoder = register_module("decoder", TransformerDecoder(
                                           TransformerDecoderOptions(options.layer(), options.num_decoder_layers()).norm(true)));
  // torch.nn.Transformer._reset_parameters: xavier_uniform_ on every matrix (in_proj_weight,
  // out_proj.weight, linear1/2.weight); biases and norms keep the layers' initialisation.
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const AttentionMask& src_mask,
                            const AttentionMask& tgt_mask, const AttentionMask& memory_mask) {
  if (!options.batch_first()) {  // (T, B, E) in and out, the batch-first computation between
    HEED_CHECK(src.defined() && src.dim() == 3 && tgt.defined() && tgt.dim() == 3, "Transformer",
               "with batch_first = false, src and tgt must be defined and 3-D, (T, B, E)");
    const Tensor s = src.transpose(0, 1), t = tgt.transpose(0, 1);
    check_sequence("Transformer", "src", s, options.d_model());
    check_sequence("Transformer", "tgt", t, options.d_model());
    HEED_CHECK(s.size(0) == t.size(0), "Transformer", "the batch number of src and tgt must be equal; got src ",
               src.shape(), " and tgt ", tgt.shape(), " (batch_first = false: (T, B, E))");
    return decode(t, encode(s, src_mask), tgt_mask, memory_mask).transpose(0, 1);
  }
  const int64_t E = options.d_model();
  check_sequence("Transformer", "src", src, E);
  check_sequence("Transformer", "tgt", tgt, E);
  HEED_CHECK(src.size(0) == tgt.size(0), "Transformer", "the batch number of src and tgt must be equal; got src ",
             src.shape(), " and tgt ", tgt.shape());
  return decode(tgt, encode(src, src_mask), tgt_mask, memory_mask);
}

Tensor TransformerImpl::encode(const Tensor& src, const AttentionMask& src_mask) {
  return encoder->forward(src, src_mask);  // (B, S, E), normalised by encoder.norm
}

Tensor TransformerImpl::decode(const Tensor& tgt, const Tensor& memory, const AttentionMask& tgt_mask,
                           const AttentionMask& memory_mask, TransformerDecoderCache* cache) {
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, cache);  // (B, T, E), decoder.norm
}

TransformerDecoderCache TransformerImpl::make_cache(int64_t batch, int64_t max_len) const {
  return decoder->make_cache(batch, max_len);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  HEED_CHECK(sz >= 0, "Transformer", "generate_square_subsequent_mask needs sz >= 0; got ", sz);
  Tensor m = zeros({sz, sz});  // (sz, sz): row i = query i, column j = key j
  real* p = m.data();
  for (int64_t i = 0; i < sz; ++i)
    for (int64_t j = 0; j <= i; ++j) p[i * sz + j] = 1;
  return m;
}

std::string TransformerImpl::repr() const {
  return "Transformer(num_encoder_layers=" + std::to_string(options.num_encoder_layers()) +
         ", num_decoder_layers=" + std::to_string(options.num_decoder_layers()) + ", " +
         options.layer().repr_args() + (options.batch_first() ? "" : ", batch_first=False") + ")";
}

}  // namespace heed::nn
