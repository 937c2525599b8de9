// checks.cpp - what README.md's code computes, asserted on the README's own code: each case
// includes a snippet that tests/readme/extract.awk wrote from README.md
// (build/readme/snippets/KEY.inc, KEY the slug of its table row's first cell or of its
// section) and checks its results. examples.cpp runs every snippet once already; a case here
// runs one again with assertions after it. A snippet renamed or removed from the README is
// a missing include here, which fails check-readme. An expression snippet's values are
// value1, value2, ... (extract.awk). The last cases check what the tables only name (no
// code to extract): written here by hand, they say so.
#include "names.h"

namespace heed::readme {

// ---- API at a glance ----

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: factories take libtorch's options") {
#include "snippets/factories.inc"
  CHECK(value1.requires_grad());
  CHECK(value1.shape() == Shape({3, 4}));
  CHECK(value2.numel() == 3);
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: x += y and x.add_(y) add y into x") {
  const Tensor x0 = x.clone();
#include "snippets/arithmetic.inc"
  CHECK(test::allclose(x, x0 + 2 * y));
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: the accuracy is a mean of 0/1") {
#include "snippets/ids_indextensor.inc"
  const double acc = double(value1.item());
  CHECK((acc == 0 || acc == 0.5 || acc == 1));
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: x.index_put_ writes every other column") {
#include "snippets/indexing.inc"
  CHECK(value1.shape() == Shape({2, 64}));
  CHECK(x.at({1, 0, 5}) == 1);
  CHECK(x.at({1, 2, 5}) == 1);
  CHECK(x.at({1, 1, 5}) != 1);
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: the data loader's batches") {
#include "snippets/data.inc"
  int64_t rows = 0;
  for (auto& batch : *value1) rows += batch.data.size(0);
  CHECK(rows == 6);
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: layer outputs") {
  SUBCASE("Linear") {
#include "snippets/linear.inc"
    CHECK(y.shape() == Shape({2, 3, 10}));
  }
  SUBCASE("Embedding") {
#include "snippets/embedding.inc"
    CHECK(y.shape() == Shape({3, 64}));
  }
  SUBCASE("LayerNorm") {
#include "snippets/layernorm.inc"
    CHECK(std::abs(double(y.mean().item())) < 1e-5);
  }
  SUBCASE("LSTMCell") {
#include "snippets/lstmcell.inc"
    CHECK(h.shape() == Shape({2, 128}));
    CHECK(c.shape() == Shape({2, 128}));
  }
  SUBCASE("LSTM") {
#include "snippets/lstm.inc"
    CHECK(out.shape() == Shape({2, 3, 256}));  // (B, T, 2 H)
    CHECK(h_n.shape() == Shape({4, 2, 128}));  // (layers * directions, B, H)
    CHECK(c_n.shape() == Shape({4, 2, 128}));
  }
  SUBCASE("GRU") {
#include "snippets/grucell_gru.inc"
    CHECK(out.shape() == Shape({2, 3, 128}));
    CHECK(h_n.shape() == Shape({1, 2, 128}));
  }
  SUBCASE("Transformer") {
#include "snippets/transformer.inc"
    CHECK(y.shape() == Shape({2, 3, 512}));  // (B, Tt, C)
  }
  SUBCASE("padding") {
#include "snippets/padding.inc"
    CHECK(batch.lengths == std::vector<int64_t>{3, 2});
    CHECK(batch.ids.shape() == Shape({2, 3}));
  }
  SUBCASE("sampling") {
#include "snippets/sampling.inc"
    CHECK(next.shape() == Shape({2}));
  }
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: losses are scalars, the two BCE forms agree") {
  SUBCASE("cross_entropy") {
#include "snippets/cross_entropy.inc"
    CHECK(value1.dim() == 0);
  }
  SUBCASE("mse_loss, a sum") {
#include "snippets/mse_loss.inc"
    CHECK(test::allclose(value1, ((pred - y) * (pred - y)).sum(), 1e-5, 1e-3));
  }
  SUBCASE("binary_cross_entropy") {
#include "snippets/binary_cross_entropy.inc"
    CHECK(test::allclose(value1, F::binary_cross_entropy_with_logits(x, y).mul(real(x.numel())), 1e-4, 1e-3));
  }
}

TEST_CASE_FIXTURE(api_at_a_glance, "README checks: optimizers and schedules") {
  SUBCASE("per-group rates") {
#include "snippets/per_group_rates.inc"
    CHECK(opt.param_groups().size() == 2);
  }
  SUBCASE("clipping") {
    model(x).sum().backward();
#include "snippets/clipping.inc"
    CHECK(norm > 0);
    for (const Tensor& p : params) CHECK(max(abs(p.grad())).item() <= real(0.5));
  }
}

// ---- Higher-order gradients ----

TEST_CASE_FIXTURE(higher_order_gradients, "README checks: the Hessian-vector product, against finite differences of the gradient") {
#include "snippets/higher_order_gradients.inc"
  // (g(w + e v) - g(w - e v)) / 2e
  auto grad_at = [&](real e) {
    Tensor we = (w.detach() + v * e).requires_grad_();
    return autograd::grad({tanh(matmul(x, we.transpose(0, 1))).pow(2).sum()}, {we})[0];
  };
  const real e = 1e-2f;
  Tensor fd = (grad_at(e) - grad_at(-e)) / (2 * e);
  CHECK(hv.shape() == Shape({2, 3}));
  CHECK(test::allclose(hv, fd, 2e-2, 2e-2));
}

// ---- Mixed precision, Attention ----

TEST_CASE_FIXTURE(mixed_precision, "README checks: the guard puts \"medium\" back") {
#include "snippets/mixed_precision.inc"
  CHECK(evaluated == 1);
  CHECK(get_float32_matmul_precision() == "medium");
}

TEST_CASE_FIXTURE(attention, "README checks: cached decoding, and a copy of the cache is deep") {
#include "snippets/attention.inc"
  CHECK(y.shape() == Shape({2, 1, 16}));
  const Tensor ahead = decoder->forward(next_token, memory, nn::AttentionMask().causal(), src_mask, &branch);
  const Tensor again = decoder->forward(next_token, memory, nn::AttentionMask().causal(), src_mask, &cache);
  CHECK(test::allclose(ahead, again, 1e-6, 1e-6));  // decoding on branch left cache where it was
}

// ---- Coming from libtorch ----

TEST_CASE_FIXTURE(coming_from_libtorch, "README checks: the libtorch table's rows") {
  SUBCASE("batch_first(false) takes (T, B, E)") {
#include "snippets/batch_first_is_false_lstm_gru_multiheada.inc"
    nn::LSTM lstm(value1);
    CHECK(lstm(randn({3, 2, 64})).output.shape() == Shape({3, 2, 128}));
  }
  SUBCASE("a holder") {
#include "snippets/torch_nn_linear_fc_4_3_fc_weight_fc_x.inc"
    CHECK(fc(x).shape() == Shape({2, 3}));
  }
  SUBCASE("register_module") {
#include "snippets/torch_nn_linear_fc_nullptr_fc_register_m.inc"
    CHECK(named_parameters().size() == 2);  // fc.weight, fc.bias
  }
  SUBCASE("clone is a deep copy") {
#include "snippets/copying_a_module_linearimpl_b_fc_shares.inc"
    CHECK(b->weight.impl() != fc->weight.impl());
    CHECK(b->weight.to_vector() == fc->weight.to_vector());
  }
  SUBCASE("bias(false)") {
#include "snippets/torch_nn_linearoptions_4_3_bias_false.inc"
    nn::Linear nb(value1);
    CHECK_FALSE(nb->bias.defined());
  }
  SUBCASE("a key padding mask, an additive bias") {
#include "snippets/src_key_padding_mask_true_ignore.inc"
    CHECK(enc(src, value1).shape() == Shape({2, 5, 8}));
  }
  SUBCASE("attn_bias") {
#include "snippets/float_src_mask_attn_mask_added_to_scores.inc"
    CHECK(value1.shape() == Shape({2, 5, 8}));
    CHECK(value2.output.shape() == Shape({2, 5, 8}));
  }
  SUBCASE("tensor({{1, 2}, {3, 4}})") {
#include "snippets/torch_tensor_1_2_3_4_torch_kfloat64.inc"
    CHECK(value1.shape() == Shape({2, 2}));
    CHECK(value1.sum().item<float>() == 10.f);
  }
  SUBCASE("devices are no-ops") {
#include "snippets/torch_device_device_torch_kcpu_model_to.inc"
    CHECK(x.to(device).impl() == x.impl());
  }
  SUBCASE("IndexTensor factories, from_blob, tensor(int64_t)") {
#include "snippets/torch_klong_ids.inc"
    CHECK(value1.vec() == std::vector<int64_t>(3, -100));
    CHECK(value2.vec() == ids);
    CHECK(value3.item() == 7);
  }
  SUBCASE("TensorDataset") {
#include "snippets/torch_data_datasets_tensordataset_x.inc"
    CHECK(value1.get(1).data.shape() == Shape({4}));
  }
  SUBCASE("save_model, save_checkpoint") {
#include "snippets/torch_save_model_m_pt_torch_load.inc"
    nn::Sequential b{nn::Linear(4, 3)};
    CHECK(safetensors::load_model(b, "m.safetensors").empty());
    CHECK(b->parameters()[0].to_vector() == model->parameters()[0].to_vector());
    load_checkpoint(path, model, opt);
  }
  SUBCASE("writing under NoGradGuard") {
    const std::vector<heed::real> before = p.to_vector();
#include "snippets/p_data_mul_2_p_data_ptr_float.inc"
    CHECK(p.to_vector()[1] == 2 * before[1]);
    CHECK(p.detach().data_ptr<float>() == p.data());  // the row's words, by hand
  }
  SUBCASE("mutable_grad") {
    (p * 2).sum().backward();
    REQUIRE(p.grad().defined());
#include "snippets/p_mutable_grad_torch_tensor_p_grad_is_a.inc"
    CHECK_FALSE(p.grad().defined());
  }
  SUBCASE("printing") {
#include "snippets/std_cout_t_prints_the_values_then_cpuflo.inc"
    CHECK(value1 == "AddBackward0");
    std::ostringstream printed;  // the row's words, by hand
    printed << ones({2, 3});
    CHECK(printed.str().find("[ CPUFloatType{2,3} ]") != std::string::npos);
  }
  SUBCASE("item<float>") {
#include "snippets/loss_item_float.inc"
    CHECK(value1 == loss.item());
  }
  SUBCASE("index_put_") {
#include "snippets/x_index_put_slice_slice_0_none_2_1.inc"
    CHECK(x.at({0, 0}) == 1);
    CHECK(x.at({1, 2}) == 1);
  }
  SUBCASE("block views write their base; other views are copies that refuse in-place ops") {
#include "snippets/w_1_fill_7_x_narrow_0_a_n_copy_v_x_selec.inc"
    CHECK(w.at({1, 3}) == 7);
    CHECK(x.at({1, 0}) == 0);
    CHECK(test::error_of([&] { w.t().fill_(1); }).find("copy made by transpose") != std::string::npos);
  }
  SUBCASE("make_data_loader") {
#include "snippets/torch_data_make_data_loader_ds_map_stack.inc"
    int64_t rows = 0;
    for (auto& batch : *value1) rows += batch.data.size(0);
    CHECK(rows == 6);
  }
}

// ---- by hand: what the tables name without code ----

struct PortNetImpl : nn::Module {  // the HEED_MODULE row
  nn::Linear fc{nullptr};
  PortNetImpl() { fc = register_module("fc", nn::Linear(4, 3)); }
  Tensor forward(const Tensor& x) { return fc(x); }
};
HEED_MODULE(PortNet);

TEST_CASE("README checks, by hand: the names the tables list") {
  PortNet net;
  CHECK(net(randn({2, 4})).shape() == Shape({2, 3}));
  const Tensor logits = randn({3, 5});
  nn::LeakyReLU leaky;
  CHECK(leaky(-ones({2})).to_vector() == std::vector<real>(2, real(-0.01)));
  CHECK(randn_like(logits).shape() == logits.shape());
  CHECK(rand_like(logits).numel() == 15);
  CHECK(full_like(logits, 2).sum().item() == 30);
  CHECK(logits.add(logits).sub(logits).mul(2).div(2).to_vector() == logits.to_vector());
  CHECK(IndexTensor::empty({2}).numel() == 2);
  CHECK(IndexTensor::zeros({2}).sum().item() == 0);
  auto labelled = data::make_data_loader(
      data::datasets::TensorDataset(randn({6, 3}), IndexTensor({0, 1, 0, 1, 0, 1})).map(data::transforms::Stack<>()), 4);
  int64_t labels = 0;
  for (auto& batch : *labelled) labels += batch.target.numel();
  CHECK(labels == 6);
}

}  // namespace heed::readme
