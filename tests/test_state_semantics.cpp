// test_state_semantics.cpp - what copying each stateful class does, and that a call that
// throws leaves its state as it was, as each header says. The caches
// and decoder steps have their own file, test_decoding_state.cpp.
#include <limits>
#include <string>
#include <type_traits>

#include <heed/autograd/engine/anomaly_mode.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/ops/attention/block_layout.h>
#include <heed/autograd/ops/shape.h>
#include <heed/core/allocator.h>
#include <heed/core/error.h>
#include <heed/core/random.h>
#include <heed/layers/activation.h>
#include <heed/layers/dropout.h>
#include <heed/layers/embedding.h>
#include <heed/layers/linear.h>
#include <heed/layers/lstm.h>
#include <heed/layers/sampling.h>
#include <heed/layers/sequential.h>
#include <heed/layers/transformer_decoder.h>
#include <heed/optim/distributed_sampler.h>
#include <heed/optim/rmsprop.h>
#include <heed/optim/schedule.h>
#include <heed/optim/sgd.h>
#include "helpers.h"

using namespace heed;
using heed::test::allclose;
using heed::test::error_of;

static_assert(!std::is_copy_constructible_v<NoGradGuard>);
static_assert(!std::is_copy_constructible_v<DetectAnomalyGuard>);
static_assert(!std::is_copy_constructible_v<alloc::PeakScope>);
static_assert(!std::is_copy_constructible_v<Draws>);
static_assert(!std::is_copy_constructible_v<optim::SGD>);
static_assert(!std::is_copy_constructible_v<optim::RMSprop> && !std::is_copy_assignable_v<optim::RMSprop>);
static_assert(!std::is_copy_constructible_v<nn::KVCache::Rollback>);

// A module does not copy (a copy would alias every parameter); a holder copies as a
// shared_ptr (libtorch's ModuleHolder); clone() is the deep copy.
static_assert(!std::is_copy_constructible_v<nn::Module> && !std::is_copy_assignable_v<nn::Module>);
static_assert(!std::is_copy_constructible_v<nn::LinearImpl> && !std::is_copy_assignable_v<nn::LinearImpl>);
static_assert(!std::is_copy_constructible_v<nn::TransformerDecoderLayerImpl>);
static_assert(!std::is_copy_constructible_v<nn::SequentialImpl>);
static_assert(std::is_copy_constructible_v<nn::Linear>);  // the holder: shares its module

TEST_CASE("Module holder: a copy of the holder is the same module, training flag included") {
  nn::Linear fc(nn::LinearOptions(3, 2));
  nn::Linear copy = fc;
  CHECK(copy.get() == fc.get());
  CHECK(copy->parameters()[0].impl() == fc->parameters()[0].impl());
  copy->eval();
  CHECK_FALSE(fc->is_training());
}

TEST_CASE("Module holder: operator() is forward with every overload; the empty holder is an error") {
  nn::Linear fc(3, 2);
  const Tensor x = randn({4, 3});
  CHECK(allclose(fc(x), fc->forward(x), 0, 0));
  CHECK(&*fc == fc.get());
  CHECK(fc.ptr().get() == fc.get());
  nn::Linear same = std::make_shared<nn::LinearImpl>(3, 2);  // from the module's shared_ptr
  CHECK_FALSE(same.is_empty());
  nn::LSTM lstm(nn::LSTMOptions(3, 5));
  const Tensor xs = randn({2, 4, 3});
  CHECK(allclose(lstm(xs).output, lstm->forward(xs).output, 0, 0));  // default arguments
  const std::vector<int64_t> lengths{4, 2};
  CHECK(allclose(lstm(xs, std::nullopt, lengths).output, lstm->forward(xs, {}, lengths).output, 0, 0));
  nn::Linear none{nullptr};
  CHECK(none.is_empty());
  CHECK_FALSE(none);
  CHECK(error_of([&] { none(x); }).find("Linear: the module holder is empty") == 0);
  struct HolderParent : nn::Module {
    nn::Linear fc = register_module("fc", nn::Linear(3, 2));  // returns the holder
  };
  HolderParent parent;
  CHECK(parent.named_children()[0].second.get() == parent.fc.get());
}

TEST_CASE("Module::clone: new parameters with the same values, flags and structure") {
  manual_seed(3);
  nn::TransformerDecoderLayer layer(nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0));
  layer->linear1->bias.requires_grad_(false);
  layer->norm2->eval();
  nn::TransformerDecoderLayer copy = layer->clone();
  REQUIRE(copy.get() != layer.get());
  const NamedTensors a = layer->named_parameters(), b = copy->named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i].first);
    CHECK(a[i].first == b[i].first);
    CHECK(a[i].second.impl() != b[i].second.impl());
    CHECK(a[i].second.to_vector() == b[i].second.to_vector());
    CHECK(a[i].second.requires_grad() == b[i].second.requires_grad());
  }
  CHECK_FALSE(copy->linear1->bias.requires_grad());
  CHECK_FALSE(copy->norm2->is_training());
  CHECK(copy->norm1->is_training());
  // same outputs, then independent: a write to the copy leaves the original as it was
  const Tensor tgt = randn({2, 3, 4}), mem = randn({2, 5, 4});
  CHECK(allclose(copy->forward(tgt, mem), layer->forward(tgt, mem), 0, 0));
  const std::vector<real> before = layer->linear2->weight.to_vector();
  {
    NoGradGuard no_grad;
    copy->linear2->weight.fill_(7);
  }
  CHECK(layer->linear2->weight.to_vector() == before);
}

TEST_CASE("Module::clone: Sequential, Embedding.from_pretrained, and a module without clone") {
  nn::Sequential seq(nn::Linear(2, 3), nn::Tanh(), nn::Linear(3, 1));
  seq[1]->eval();
  nn::Sequential c = seq->clone();
  REQUIRE(c->size() == 3);
  CHECK(c->parameters()[0].impl() != seq->parameters()[0].impl());
  CHECK(c->parameters()[0].to_vector() == seq->parameters()[0].to_vector());
  CHECK_FALSE(c[1]->is_training());
  CHECK(c[0]->is_training());
  const Tensor x = randn({4, 2});
  CHECK(allclose(c(x), seq(x), 0, 0));

  const Tensor w = randn({5, 3});
  auto emb = nn::Embedding::from_pretrained(w, /*freeze=*/true);
  nn::Embedding e2 = emb->clone();
  CHECK(e2->weight.impl() != emb->weight.impl());
  CHECK(e2->weight.to_vector() == w.to_vector());
  CHECK_FALSE(e2->weight.requires_grad());

  struct Plain : nn::Module {};  // derives from Module, not Cloneable
  Plain plain;
  CHECK(error_of([&] { plain.clone(); }) ==
        "clone: Plain does not implement clone(): derive it from nn::Cloneable<PlainImpl> (or "
        "override clone_module())");
}

TEST_CASE("Module: registering many submodules and parameters is linear (hashed duplicate check)") {
  struct Wide : nn::Module {
    explicit Wide(int n) {
      for (int i = 0; i < n; ++i) {
        register_module("m" + std::to_string(i), nn::Dropout(0.0));
        register_parameter("p" + std::to_string(i), zeros({1}));
      }
    }
    void add(const std::string& name) { register_module(name, nn::Dropout(0.0)); }
    void add_param(const std::string& name) { register_parameter(name, zeros({1})); }
  };
  // 100k of each: a scan per registration (the quadratic check) takes minutes here
  Wide wide(100000);
  CHECK(wide.named_children().size() == 100000);
  CHECK(wide.named_parameters(false).size() == 100000);
  CHECK(error_of([&] { wide.add("m99999"); }) == "register_module: submodule 'm99999' already registered");
  CHECK(error_of([&] { wide.add_param("p5"); }) == "register_parameter: parameter 'p5' already registered");
  CHECK(wide.named_children().size() == 100000);  // the failed calls added nothing
}

TEST_CASE("Optimizer: a step that throws updates nothing and does not count") {
  const Tensor a = ones({2}).requires_grad_(), b = ones({3}).requires_grad_();
  optim::SGD opt({optim::ParamGroup({a}), optim::ParamGroup({b}, optim::SGDOptions(0.5))},
                 optim::SGDOptions(0.5));
  a.set_grad(ones({2}));
  b.set_grad(ones({3}));
  opt.param_groups()[1].set_lr(-1);  // found at the second group, after the first's checks
  CHECK(error_of([&] { opt.step(); }).find("SGD") != std::string::npos);
  CHECK(a.data()[0] == 1);
  CHECK(opt.step_count() == 0);
}

TEST_CASE("Optimizer: an RMSprop step that throws leaves the parameters and the state as they were") {
  const Tensor a = ones({2}).requires_grad_(), b = ones({3}).requires_grad_();
  optim::RMSprop opt({optim::ParamGroup({a}), optim::ParamGroup({b}, optim::RMSpropOptions().momentum(0.9))},
                     optim::RMSpropOptions().momentum(0.9));
  a.set_grad(ones({2}));
  b.set_grad(ones({3}));
  opt.step();
  const std::vector<real> a_before = a.to_vector(), v_before = opt.state()[0].second.to_vector();
  static_cast<optim::RMSpropOptions&>(*opt.param_groups()[1].options).alpha(-1);  // found at group 1
  CHECK(error_of([&] { opt.step(); }).find("RMSprop: invalid alpha -1") != std::string::npos);
  CHECK(a.to_vector() == a_before);
  CHECK(opt.state()[0].second.to_vector() == v_before);
  CHECK(opt.step_count() == 1);
  static_cast<optim::RMSpropOptions&>(*opt.param_groups()[1].options).alpha(0.99).momentum(0);
  CHECK(error_of([&] { opt.step(); }).find("needs other state") != std::string::npos);
  CHECK(a.to_vector() == a_before);
}

TEST_CASE("LR schedules and DistributedSampler are values; a throw changes nothing") {
  const Tensor w = ones({2}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  const optim::StepDecay s(opt, optim::StepDecayOptions(2).gamma(0.5));
  const optim::StepDecay copy = s;
  CHECK(copy.lr_at(3) == s.lr_at(3));
  CHECK(!error_of([&] { s.apply(opt, -1); }).empty());
  CHECK(opt.param_groups()[0].lr() == 0.1);
  data::DistributedSampler sampler(data::DistributedSamplerOptions(10, 0, 2));
  data::DistributedSampler other = sampler;
  other.set_epoch(3);
  CHECK(sampler.epoch() == 0);
  CHECK(sampler.indices() != other.indices());
  CHECK(!error_of([&] { data::DistributedSampler(data::DistributedSamplerOptions(10, 2, 2)); }).empty());
}

TEST_CASE("the generator: RngState is a snapshot; a sample() that throws draws nothing") {
  manual_seed(5);
  const RngState before = get_rng_state();
  Tensor bad = zeros({2, 3});
  bad.data()[4] = std::numeric_limits<real>::quiet_NaN();  // row 1: found before any draw
  CHECK(!error_of([&] { nn::sample(bad, nn::SamplingOptions().temperature(1)); }).empty());
  const double next = rand_uniform();
  set_rng_state(before);
  CHECK(rand_uniform() == next);
}

TEST_CASE("NoGradGuard restores grad mode when its scope is left by an exception") {
  CHECK(GradMode::enabled());
  CHECK(!error_of([] {
    NoGradGuard g;
    fail("test", "thrown");
  }).empty());
  CHECK(GradMode::enabled());
}

TEST_CASE("value classes: AttentionMask and BlockLayout copies share their read-only data") {
  const Tensor pad = ones({1, 3});
  const nn::AttentionMask m = nn::AttentionMask().key_padding(pad);
  const nn::AttentionMask copy = m;
  CHECK(copy.key_padding().impl() == pad.impl());
  const BlockLayout L = strided_layout(8, 2, 1, 1);
  const BlockLayout L2 = L;
  CHECK(L2.kept_blocks() == L.kept_blocks());
}

TEST_CASE("TransformerDecoderCache: a copy is deep, decoding on it leaves the original") {
  manual_seed(6);
  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(
      nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16), 2));
  dec->eval();
  const Tensor x = randn({1, 3, 8}), memory = randn({1, 2, 8});
  NoGradGuard no_grad;
  nn::TransformerDecoderCache cache = dec->make_cache(1, 4);
  dec->forward(narrow(x, 1, 0, 2), memory, nn::AttentionMask().causal(), {}, &cache);
  const Tensor keys = cache.layers[1].self_attn.keys();
  nn::TransformerDecoderCache branch = cache;
  branch.crop(1);
  dec->forward(narrow(x, 1, 2, 1), memory, nn::AttentionMask().causal(), {}, &branch);
  CHECK(cache.size() == 2);
  CHECK(allclose(cache.layers[1].self_attn.keys(), keys, 0, 0));
}
