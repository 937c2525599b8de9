// targets.h - the models and optimizers the checkpoint fuzzer loads into, shared by the
// fuzz target (fuzz_checkpoint.cpp), its seed writer (write_seeds.cpp) and the regression
// test that replays the kept inputs (tests/test_fuzz_regressions.cpp).
#pragma once
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <heed/core/error.h>
#include <heed/core/random.h>
#include <heed/layers/activation.h>
#include <heed/layers/embedding.h>
#include <heed/layers/linear.h>
#include <heed/layers/lstm.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/layers/sequential.h>
#include <heed/optim/adam.h>
#include <heed/optim/checkpoint_file.h>
#include <heed/optim/sgd.h>

namespace heed::fuzz {

struct Target {
  std::string name;                        // seed file stem
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;   // null: a model-only checkpoint
};

// Four shapes of checkpoint: an MLP with SGD momentum, an LSTM with AMSGrad Adam, multi-head
// attention with AdamW, and a model-only embedding. Deterministic (seeded).
inline std::vector<Target> targets() {
  manual_seed(1);
  std::vector<Target> ts;
  auto mlp = nn::Sequential(nn::Linear(3, 4),
                                              nn::Tanh(),
                                              nn::Linear(4, 2));
  ts.push_back({"mlp_sgd", mlp.ptr(), std::make_unique<optim::SGD>(
                                     mlp->parameters(), optim::SGDOptions(0.1).momentum(0.9))});
  auto lstm = nn::LSTM(nn::LSTMOptions(3, 4).bidirectional(true));
  ts.push_back({"lstm_adam", lstm.ptr(), std::make_unique<optim::Adam>(
                                       lstm->parameters(), optim::AdamOptions(1e-3).amsgrad(true))});
  auto mha = nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2));
  ts.push_back({"mha_adamw", mha.ptr(), std::make_unique<optim::AdamW>(
                                      mha->parameters(), optim::AdamWOptions(1e-3))});
  ts.push_back({"embedding", nn::Embedding(10, 4).ptr(), nullptr});
  return ts;
}

// Loads the checkpoint at `path` into every target, with its optimizer (where it has one)
// and model-only. Returns how many loads accepted it; any rejection must be a heed::Error
// (anything else escapes: a crash or a sanitizer report is a finding).
inline int load_into_all(const std::string& path, std::vector<Target>& ts) {
  int accepted = 0;
  auto attempt = [&](auto&& load) {
    try {
      load();
      ++accepted;
    } catch (const Error&) {
    }
  };
  for (Target& t : ts) {
    if (t.opt) attempt([&] { load_checkpoint(path, *t.model, *t.opt); });
    attempt([&] { load_checkpoint(path, *t.model); });
  }
  return accepted;
}

// What the fuzz target does with one input, and the regression test with a kept one: an
// input of at least header + checksum size is resealed (size field and checksum rewritten,
// reseal_checkpoint) so that mutations reach the record parser; the bytes are written to
// `path` and loaded into every target. Returns how many loads accepted it.
inline int replay_fuzz_input(std::vector<uint8_t> bytes, const std::string& path,
                             std::vector<Target>& ts) {
  if (bytes.size() >= 32) reseal_checkpoint(bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return load_into_all(path, ts);
}

}  // namespace heed::fuzz
