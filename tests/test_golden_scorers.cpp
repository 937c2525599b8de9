// test_golden_scorers.cpp - heed's classic attention scorers against the same equations
// written in PyTorch (tests/golden/scorers.bin, made by tests/golden/gen_scorers.py, which
// shows each torch module).
//
// Each case stores the module's parameters under heed's names, the inputs and masks, each
// output (context and weights) with an upstream gradient dy_<output>, and the gradients of
// sum_o(<o> * dy_<o>) with respect to every input and every parameter. The test copies the
// parameters into the heed module, runs forward and backward in float32, and compares them
// all (rule: tests/golden/golden.h, rtol 1e-5, atol 1e-6 x scale).
#include <algorithm>
#include <map>

#include <heed/core/elementwise.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/attention/attend.h>
#include <heed/autograd/ops/attention/attention_mask.h>
#include <heed/autograd/engine/grad_mode.h>
#include <heed/autograd/ops/attention/local_attention.h>
#include <heed/autograd/ops/reduce.h>
#include <heed/layers/attention/additive_attention.h>
#include <heed/layers/attention/local_attention.h>
#include <heed/layers/attention/luong_attention.h>
#include <heed/layers/module.h>
#include "golden/golden.h"
#include "helpers.h"

using namespace heed;

namespace {

const golden::File& scorers() {
  static const golden::File f("tests/golden/scorers.bin");
  return f;
}

using Leaves = std::map<std::string, Tensor>;
using Run = std::function<std::vector<Tensor>(const Leaves&)>;

// Loads every parameter of `m` from case `c`, runs `run` on the case's inputs (which
// require grad) and constants, then compares each output, each input gradient and each
// parameter gradient. Fails if the case holds an array this does not look at.
void check_scorer(const std::string& c, const nn::Module& m, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& consts, const std::vector<std::string>& outputs,
                  const Run& run) {
  const golden::File& f = scorers();
  std::vector<std::string> seen;
  {
    NoGradGuard ng;
    for (auto& [name, p] : m.named_parameters()) {
      REQUIRE_MESSAGE(f.has(c, name), c, " has no array for parameter ", name);
      REQUIRE(p.shape() == f.array(c, name).shape);
      p.copy_(f.tensor(c, name));
      seen.push_back(name);
    }
  }
  Leaves leaves;
  for (const std::string& in : inputs) leaves[in] = f.tensor(c, in).requires_grad_();
  for (const std::string& k : consts) leaves[k] = f.tensor(c, k);
  seen.insert(seen.end(), inputs.begin(), inputs.end());
  seen.insert(seen.end(), consts.begin(), consts.end());

  const std::vector<Tensor> outs = run(leaves);
  REQUIRE(outs.size() == outputs.size());
  Tensor loss = scalar_tensor(0);
  for (size_t i = 0; i < outs.size(); ++i) {
    const golden::Check co = golden::compare(outs[i], f.array(c, outputs[i]), c + " " + outputs[i]);
    CHECK_MESSAGE(co.ok, co.message);
    REQUIRE(outs[i].shape() == f.array(c, outputs[i]).shape);
    loss = loss + sum(outs[i] * f.tensor(c, "dy_" + outputs[i]));
    seen.push_back(outputs[i]);
    seen.push_back("dy_" + outputs[i]);
  }
  loss.backward();
  auto grad_of = [&](const std::string& name, const Tensor& t) {
    const Tensor g = t.grad().defined() ? t.grad() : zeros_like(t);
    const golden::Check cg = golden::compare(g, f.array(c, "grad_" + name), c + " grad_" + name);
    CHECK_MESSAGE(cg.ok, cg.message);
    seen.push_back("grad_" + name);
  };
  for (const std::string& in : inputs) grad_of(in, leaves[in]);
  for (auto& [name, p] : m.named_parameters()) grad_of(name, p);
  for (const std::string& a : f.arrays(c))
    CHECK_MESSAGE(std::find(seen.begin(), seen.end(), a) != seen.end(), c, " array ", a, " unchecked");
}

const std::vector<std::string> kQKV = {"query", "keys", "values"};
const std::vector<std::string> kPad = {"key_padding"};
const std::vector<std::string> kCW = {"context", "weights"};

std::vector<Tensor> both(const nn::Attended& a) { return {a.context, a.weights}; }
nn::AttentionMask padding(const Leaves& in) { return nn::AttentionMask().key_padding(in.at("key_padding")); }

}  // namespace

TEST_CASE("golden scorers: AdditiveAttention(4, 6, 5), a decoder step (values = keys) and 3 queries") {
  nn::AdditiveAttention step(nn::AdditiveAttentionOptions(4, 6, 5));
  check_scorer("additive_2d", *step, {"query", "keys"}, kPad, kCW, [&](const Leaves& in) {
    return both(step->forward(in.at("query"), in.at("keys"), Tensor(), padding(in)));
  });
  nn::AdditiveAttention many(nn::AdditiveAttentionOptions(4, 6, 5));
  check_scorer("additive_3d", *many, kQKV, kPad, kCW, [&](const Leaves& in) {
    return both(many->forward(in.at("query"), in.at("keys"), in.at("values"), padding(in)));
  });
}

TEST_CASE("golden scorers: LuongAttention dot, general, general rank 2, concat; LuongCombine") {
  struct Case {
    const char* name;
    nn::LuongAttentionOptions opts;
  };
  const std::vector<Case> cases = {
      {"luong_dot_3d", nn::LuongAttentionOptions(4, 4).score("dot")},
      {"luong_general_2d", nn::LuongAttentionOptions(4, 6).score("general")},
      {"luong_general_3d", nn::LuongAttentionOptions(4, 6).score("general")},
      {"luong_lowrank_3d", nn::LuongAttentionOptions(4, 6).score("general").rank(2)},
      {"luong_concat_3d", nn::LuongAttentionOptions(4, 6).score("concat").attn_dim(5)},
      {"luong_concat_2d", nn::LuongAttentionOptions(4, 6).score("concat").attn_dim(5)},
  };
  for (const Case& k : cases) {
    CAPTURE(k.name);
    nn::LuongAttention attn(k.opts);
    check_scorer(k.name, *attn, kQKV, kPad, kCW, [&](const Leaves& in) {
      return both(attn->forward(in.at("query"), in.at("keys"), in.at("values"), padding(in)));
    });
  }
  nn::LuongCombine comb(nn::LuongCombineOptions(3, 4, 5));
  check_scorer("luong_combine", *comb, {"context", "query"}, {}, {"out"}, [&](const Leaves& in) {
    return std::vector<Tensor>{comb->forward(in.at("context"), in.at("query"))};
  });
}

TEST_CASE("golden scorers: LocalAttention local-m (p_t = t; given positions) and local-p") {
  using O = nn::LocalAttentionOptions;
  nn::LocalAttention m3(O(4, 6).mode("local-m").window(1));
  check_scorer("local_m_3d", *m3, kQKV, kPad, kCW, [&](const Leaves& in) {
    return both(m3->forward(in.at("query"), in.at("keys"), in.at("values"), padding(in)));
  });
  nn::LocalAttention m2(O(4, 6).mode("local-m").window(1));
  check_scorer("local_m_2d", *m2, kQKV, {"key_padding", "positions"}, kCW, [&](const Leaves& in) {
    return both(m2->forward(in.at("query"), in.at("keys"), in.at("values"), padding(in), in.at("positions")));
  });
  for (const char* name : {"local_p_3d", "local_p_2d"}) {
    CAPTURE(name);
    nn::LocalAttention p(O(4, 6).mode("local-p").window(2));
    check_scorer(name, *p, kQKV, kPad, kCW, [&](const Leaves& in) {
      return both(p->forward(in.at("query"), in.at("keys"), in.at("values"), padding(in)));
    });
  }
}
