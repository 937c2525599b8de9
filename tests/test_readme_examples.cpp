// test_readme_examples.cpp - every one-line example in README.md, compiled and run, so the
// README cannot drift from the API. Keep the two in step. The README's complete program is
// below with its body verbatim, and the code excerpts of README.md and autograd/README.md
// (adding an op) are checked against the files they name.
#include <fstream>
#include <sstream>

#include <heed/core/random.h>
#include <heed/autograd/arith.h>
#include <heed/autograd/autograd.h>
#include <heed/autograd/node.h>
#include <heed/autograd/linalg.h>
#include <heed/autograd/loss_ops.h>
#include <heed/autograd/reduce.h>
#include <heed/autograd/softmax.h>
#include <heed/autograd/unary.h>
#include <heed/layers/activation.h>
#include <heed/layers/dropout.h>
#include <heed/layers/sampling.h>
#include <heed/layers/transformer_model.h>
#include <heed/layers/transformer_encoder.h>
#include <heed/layers/attention/multihead_attention.h>
#include <heed/optim/safetensors.h>
#include <heed/autograd/grad_mode.h>
#include <heed/layers/embedding.h>
#include <heed/layers/gru.h>
#include <heed/layers/init.h>
#include <heed/layers/layer_norm.h>
#include <heed/layers/linear.h>
#include <heed/layers/loss.h>
#include <heed/layers/lstm.h>
#include <heed/layers/sequential.h>
#include <heed/optim/adam.h>
#include <heed/optim/checkpoint_file.h>
#include <heed/optim/data/data.h>
#include <heed/optim/clip.h>
#include <heed/optim/optimizer.h>
#include <heed/optim/schedule.h>
#include <heed/optim/sgd.h>
#include "helpers.h"

using namespace heed;
namespace F = heed::nn::functional;

TEST_CASE("README one-line examples compile and run") {
  Tensor x = randn({2, 784});
  CHECK(randn({3, 4}, requires_grad()).requires_grad()); CHECK(ones(3, kFloat).numel() == 3);
  nn::Linear fc(nn::LinearOptions(784, 10).bias(false)); Tensor y = fc(x);
  int64_t V = 10; IndexTensor ids({1, 2, 0});
  nn::Embedding emb(nn::EmbeddingOptions(V, 64).padding_idx(0)); y = emb(ids);
  auto emb2 = nn::Embedding::from_pretrained(randn({5, 3}), /*freeze=*/true);
  nn::Dropout drop(0.1); y = drop(x);
  nn::LayerNorm ln(nn::LayerNormOptions({784}).eps(1e-5)); y = ln(x);
  nn::GELU gelu(nn::GELUOptions().approximate("tanh"));
  nn::Sequential mlp(nn::Linear(4, 8), nn::ReLU(), nn::Functional(heed::tanh));
  CHECK(mlp(randn({2, 4})).abs().max().item() < 1);
  nn::LSTMCell cell(nn::LSTMCellOptions(64, 128)); Tensor xt = randn({2, 64}), h = zeros({2,128}), c = zeros({2,128});
  auto [h2, c2] = cell(xt, std::make_tuple(h, c));
  nn::LSTM lstm(nn::LSTMOptions(64, 128).num_layers(2).bidirectional(true)); std::vector<int64_t> lengths{3, 2};
  Tensor xs = randn({2, 3, 64});
  auto [out, h_n, c_n] = lstm->forward(xs, {}, lengths);
  nn::GRU gru(nn::GRUOptions(64, 128)); auto [gout, gh_n] = gru(xs);
  Tensor w = randn({8, 8});
  nn::init::xavier_uniform_(w); nn::init::kaiming_normal_(w, 0, "fan_out", "relu"); nn::init::orthogonal_(w);
  Tensor logits = randn({3, 5}); IndexTensor targets({1, 0, 4});
  F::cross_entropy(logits, targets, nn::CrossEntropyOptions().ignore_index(0).label_smoothing(0.1));
  F::nll_loss(log_softmax(logits, 1), targets);
  F::mse_loss(logits, logits, nn::MSEOptions().reduction(nn::Reduction::Sum));
  F::binary_cross_entropy_with_logits(logits, sigmoid(logits), nn::BCEWithLogitsOptions().pos_weight(ones({5})));
  { Tensor x = logits, y = rand({3, 5});
    F::binary_cross_entropy(sigmoid(x), y, F::BinaryCrossEntropyFuncOptions().reduction(kSum)); nn::BCELoss(); }
  nn::LeakyReLU leaky; CHECK(leaky(-ones({2})).to_vector() == std::vector<real>(2, real(-0.01)));
  CHECK(randn_like(logits).shape() == logits.shape()); CHECK(rand_like(logits).numel() == 15);
  CHECK(full_like(logits, 2).sum().item() == 30);
  CHECK(randint(0, 10, {3}).numel() == 3); CHECK(randint(0, 10, {3}, kFloat).max().item() < 10);
  CHECK(logits.view_as(zeros({5, 3})).sizes() == Shape({5, 3}));
  CHECK(logits.movedim(0, 1).swapaxes(0, 1).to_vector() == logits.to_vector());
  CHECK(logits.add(logits).sub(logits).mul(2).div(2).to_vector() == logits.to_vector());
  IndexTensor next = nn::sample(logits, nn::SamplingOptions().temperature(0.8).top_k(20).top_p(0.9));
  {
    nn::Transformer model(nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).norm_first(true));
    Tensor src = randn({2, 5, 8}), tgt = randn({2, 3, 8}), src_real = ones({2, 5});
    auto pad = nn::AttentionMask().key_padding(src_real); Tensor y = model(src, tgt, pad, nn::AttentionMask().causal(), pad);
    CHECK(y.shape() == Shape({2, 3, 8}));
  }
  CHECK(next.shape() == Shape({3}));
  auto params = fc->parameters(); auto body = params; auto head = params;
  { optim::SGD opt(params, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-4)); }
  { optim::Adam opt(params, optim::AdamOptions(1e-3).betas({0.9, 0.98}).eps(1e-9).amsgrad(true)); }
  { optim::AdamW opt(params, optim::AdamWOptions(1e-3).weight_decay(0.01)); }
  auto p2 = mlp->parameters();
  optim::Adam opt({optim::ParamGroup(p2), optim::ParamGroup(head, optim::AdamOptions(1e-2))});
  optim::TransformerWarmup s(optim::TransformerWarmupOptions(512, 4000)); s.apply(opt, opt.step_count());
  optim::LinearWarmupCosine s2(optim::WarmupDecayOptions(3e-4, 1000, 100000));
  optim::LinearWarmupLinearDecay s3(optim::WarmupDecayOptions(3e-4, 1000, 100000));
  optim::StepDecay s4(optim::StepDecayOptions(0.1, 30).gamma(0.1));
  double norm = optim::clip_grad_norm_(fc->parameters(), 1.0); (void)norm;
  optim::clip_grad_value_(fc->parameters(), 0.5);
  heed::save_checkpoint("/tmp/heed_readme_ckpt.bin", mlp, opt); heed::load_checkpoint("/tmp/heed_readme_ckpt.bin", mlp, opt);
    CHECK(out.shape() == Shape{2, 3, 256});
  CHECK(h_n.shape() == Shape{4, 2, 128});
  CHECK(gout.shape() == Shape{2, 3, 128});
  CHECK(y.shape() == Shape{2, 784});
}

namespace {

// The README's complete program, its body verbatim; returns the loss after training.
double readme_program() {
  manual_seed(0);
  Tensor x = rand({256, 1}) * 4 - 2;  // (N, 1) inputs in [-2, 2)
  Tensor y = exp(-4 * x * x);         // (N, 1) the bump to learn
  nn::Sequential model(nn::Linear(1, 32), nn::Tanh(), nn::Linear(32, 1));
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
  for (int step = 0; step <= 1000; ++step) {
    Tensor loss = nn::functional::mse_loss(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step % 100 == 0) std::printf("step %4d  loss %.6f\n", step, double(loss.item()));
  }
  return double(nn::functional::mse_loss(model->forward(x), y).item());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Block {
  std::string first;  // the first line
  std::string rest;   // the lines after it, each ending in a newline
};

// The fenced code blocks of a markdown text.
std::vector<Block> code_blocks(const std::string& md) {
  std::vector<Block> blocks;
  std::istringstream in(md);
  std::string line;
  bool inside = false;
  Block b;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (inside) blocks.push_back(b);
      inside = !inside;
      b = Block();
      n = 0;
    } else if (inside) {
      if (n++ == 0) b.first = line;
      else b.rest += line + "\n";
    }
  }
  return blocks;
}

}  // namespace

TEST_CASE("README: the complete program is the one run here, and it learns") {
  const std::string readme = read_text("README.md"), self = read_text("tests/test_readme_examples.cpp");
  REQUIRE(!readme.empty());
  const size_t begin = readme.find("int main() {\n"), end = readme.find("\n}\n```", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string body = readme.substr(begin + 13, end - begin - 13 + 1);
  CHECK_MESSAGE(self.find(body) != std::string::npos, "README's program body is not readme_program()'s:\n", body);
  CHECK(readme_program() < 1e-3);
}

TEST_CASE("README: a Hessian-vector product by double backward, against finite differences of the gradient") {
  manual_seed(35);
  Tensor x = randn({8, 3});
  Tensor w = randn({2, 3}).requires_grad_();
  Tensor v = randn({2, 3});                                      // the direction
  Tensor loss = tanh(matmul(x, w.transpose(0, 1))).pow(2).sum();
  Tensor g = autograd::grad({loss}, {w}, {}, std::nullopt, /*create_graph=*/true)[0];  // dL/dw
  Tensor hv = autograd::grad({(g * v).sum()}, {w})[0];           // H v, shape (2, 3)
  // (g(w + e v) - g(w - e v)) / 2e
  auto grad_at = [&](real e) {
    Tensor we = (w.detach() + v * e).requires_grad_();
    return autograd::grad({tanh(matmul(x, we.transpose(0, 1))).pow(2).sum()}, {we})[0];
  };
  const real e = 1e-2f;
  Tensor fd = (grad_at(e) - grad_at(-e)) / (2 * e);
  CHECK(heed::test::allclose(hv, fd, 2e-2, 2e-2));
}

TEST_CASE("README: each code excerpt that starts with a file name appears verbatim in that file") {
  int checked = 0;
  for (const char* doc : {"README.md", "autograd/README.md"}) {
    for (const Block& b : code_blocks(read_text(doc))) {
      std::string path;
      if (b.first.rfind("// ", 0) == 0) path = b.first.substr(3);
      else if (b.first.rfind("# ", 0) == 0) path = b.first.substr(2);
      if (path.empty() || path.find(' ') != std::string::npos || !std::ifstream(path)) continue;
      CAPTURE(path);
      CHECK_MESSAGE(read_text(path).find(b.rest) != std::string::npos, "not in ", path, ":\n", b.rest);
      ++checked;
    }
  }
  CHECK(checked >= 6);  // autograd/README.md's five excerpts of adding an op, README's Hessian-vector product
}

// A dataset of six examples, for the data loader row.
struct PortData : heed::data::datasets::Dataset<PortData> {
  heed::data::Example<> get(size_t i) override { return {full({3}, real(i)), full({}, real(i % 2))}; }
  std::optional<size_t> size() const override { return 6; }
};

// The heed column of README's "Coming from libtorch" table, each row that exists here.
struct PortNetImpl : nn::Module {
  nn::Linear fc{nullptr};
  PortNetImpl() { fc = register_module("fc", nn::Linear(4, 3)); }
  Tensor forward(const Tensor& x) { return fc(x); }
};
HEED_MODULE(PortNet);

TEST_CASE("README: coming from libtorch, the heed column") {
  const Tensor x = randn({2, 4});
  nn::LSTM lstm(nn::LSTMOptions(4, 5).batch_first(false));
  CHECK(lstm(randn({3, 2, 4})).output.shape() == Shape({3, 2, 5}));  // (T, B, H)
  nn::Linear fc(4, 3); Tensor w = fc->weight; Tensor y = fc(x);
  CHECK(y.shape() == Shape({2, 3}));
  PortNet net;
  CHECK(net(x).shape() == Shape({2, 3}));
  nn::Linear b = fc->clone();
  CHECK(b->weight.impl() != fc->weight.impl());
  nn::Linear nb(nn::LinearOptions(4, 3).bias(false));
  CHECK_FALSE(nb->bias.defined());
  Tensor real = ones({2, 5});
  nn::AttentionMask pad = nn::AttentionMask().key_padding(real);
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2), 1));
  Tensor src = randn({2, 5, 8}), bias = zeros({5, 5});
  CHECK(enc(src, nn::AttentionMask(), bias).shape() == Shape({2, 5, 8}));
  CHECK(enc(src, pad).shape() == Shape({2, 5, 8}));
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  CHECK(mha->forward(src, src, src, {}, bias).output.shape() == Shape({2, 5, 8}));
  Tensor t = tensor({{1, 2}, {3, 4}});
  IndexTensor ids({1, 0, 2});
  Device device(kCPU); fc->to(device); CHECK(x.to(device).impl() == x.impl());
  safetensors::save_model(fc, "/tmp/heed_readme_port.safetensors");
  CHECK(safetensors::load_model(b, "/tmp/heed_readme_port.safetensors").empty());
  CHECK(b->weight.to_vector() == fc->weight.to_vector());
  Tensor p = fc->weight;
  { NoGradGuard g; p.mul_(2); }
  CHECK(t.shape() == Shape({2, 2}));
  CHECK(t.sum().item<float>() == 10.f);
  using heed::indexing::Slice;
  using heed::indexing::None;
  Tensor z = zeros({2, 4});
  z.index_put_({Slice(), Slice(0, None, 2)}, ones({2, 2}));
  CHECK(z.to_vector() == std::vector<heed::real>{1, 0, 1, 0, 1, 0, 1, 0});
  z[1].fill_(7);
  z.narrow(0, 0, 1).copy_(full({1, 4}, 3));
  z.select(0, 1).zero_();
  CHECK(z.to_vector() == std::vector<heed::real>{3, 3, 3, 3, 0, 0, 0, 0});
  CHECK(heed::test::error_of([&] { z.t().fill_(1); }).find("copy made by transpose") != std::string::npos);
  z.split(1)[1].fill_(2);
  z.unbind(0)[1].add_(1);
  CHECK(z[1].to_vector() == std::vector<heed::real>(4, 3));
  CHECK(heed::test::error_of([&] { z.movedim(0, 1).fill_(1); }).find("copy made by movedim") != std::string::npos);
  CHECK(heed::test::error_of([&] { z.swapaxes(0, 1).fill_(1); }).find("copy made by swapaxes") != std::string::npos);
  CHECK(z.max(1).indices.shape() == Shape({2}));
  auto [zmax, zarg] = z.max(1);
  CHECK(zarg.vec() == std::vector<int64_t>{0, 0});
  CHECK(zmax.to_vector() == std::vector<heed::real>{3, 3});  // both rows hold 3 only
  z.index_put_({Slice(), Slice(1, 2)}, 5);
  CHECK(z.at({1, 1}) == 5);
  PortData ds;
  auto loader = heed::data::make_data_loader(ds.map(heed::data::transforms::Stack<>()), heed::data::DataLoaderOptions(4));
  int64_t rows = 0;
  for (auto& batch : *loader) rows += batch.data.size(0);
  CHECK(rows == 6);
  IndexTensor pads = IndexTensor::full({3}, -100);
  CHECK(pads.vec() == std::vector<int64_t>(3, -100));
  CHECK(IndexTensor::empty({2}).numel() == 2);
  CHECK(IndexTensor::zeros({2}).sum().item() == 0);
  std::vector<int64_t> raw = {4, 5};
  IndexTensor from_raw = from_blob(raw.data(), {2}, kLong);
  CHECK(from_raw.vec() == raw);
  Tensor images = randn({6, 3});
  auto tds = heed::data::datasets::TensorDataset(images, IndexTensor({0, 1, 0, 1, 0, 1}));
  auto labelled = heed::data::make_data_loader(tds.map(heed::data::transforms::Stack<>()), 4);
  int64_t labels = 0;
  for (auto& batch : *labelled) labels += batch.target.numel();
  CHECK(labels == 6);
  CHECK(heed::data::datasets::TensorDataset(images).get(2).data.shape() == Shape({3}));
  IndexTensor label = tensor(int64_t(7));
  CHECK(label.item() == 7);
  CHECK(p.detach().data_ptr<float>() == p.data());
  p.mutable_grad() = Tensor();
  CHECK_FALSE(p.grad().defined());
  std::ostringstream printed;
  printed << ones({2, 3}) << ' ' << (p * 2).grad_fn();
  CHECK(printed.str().find("[ CPUFloatType{2,3} ]") != std::string::npos);
  CHECK((p + p).grad_fn()->name() == "AddBackward0");
}
