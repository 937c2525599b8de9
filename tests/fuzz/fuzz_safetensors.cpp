// fuzz_safetensors.cpp - libFuzzer target for the safetensors reader (make fuzz).
//
// Each input is parsed from memory as a file's bytes (safetensors::deserialize, the parser
// load_file runs); an accepted one is then loaded, not strictly, into a small model. A
// finding is a crash, a sanitizer report, a timeout, an out-of-memory or an exception other
// than heed::Error. Seeds: tests/fuzz/corpus_safetensors/ (write_safetensors_seeds.py).
#include <cstdint>
#include <memory>

#include <heed/heed.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto model = [] {
    heed::manual_seed(1);
    return heed::nn::Sequential(heed::nn::Linear(2, 3),
                                                  heed::nn::LayerNorm(heed::nn::LayerNormOptions({3})));
  }();
  try {
    const heed::safetensors::Contents c = heed::safetensors::deserialize(data, size, "fuzz input");
    model->load_state_dict(c.tensors, /*strict=*/false);
  } catch (const heed::Error&) {
  }
  return 0;
}
