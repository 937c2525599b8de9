// test_bad_input_bounds.cpp - bad input at the edges of the integer and floating-point
// ranges: ranges whose start + length overflows int64, huge steps and offsets, thread
// counts, schedule steps and sampler sizes near INT64_MAX, initialisers given impossible
// spreads, masks holding NaN, names DOT cannot hold, class weights that sum to 0, and files
// that are not checkpoints. Each case gives PyTorch's (or Python's) result or a heed::Error
// whose message names the op and the offending value, as the bad-input catalogue
// (test_bad_input_catalogue.cpp) asks.
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>

#include <heed/heed.h>
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using heed::test::error_of;
using heed::test::TmpDir;

namespace {

constexpr int64_t kBig = std::numeric_limits<int64_t>::max();

// CHECKs that the heed::Error f throws names every part (the op, then the value).
template <class Fn>
void refused(const Fn& f, std::initializer_list<std::string> parts) {
  const std::string msg = error_of(f);
  for (const auto& p : parts) {
    INFO("message \"", msg, "\" should contain \"", p, "\"");
    CHECK(msg.find(p) != std::string::npos);
  }
}

// True when every line of DOT text closes each double-quoted string it opens (a quote
// inside a string must be written \", and a backslash escapes the character after it).
bool dot_strings_balanced(const std::string& text) {
  bool in = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' && in) return false;
    if (in && c == '\\') ++i;
    else if (c == '"') in = !in;
  }
  return !in;
}

}  // namespace

TEST_CASE("bounds: narrow and slice never overflow start + length") {
  const Tensor x = arange(6).reshape({2, 3}).requires_grad_();
  refused([&] { x.narrow(1, kBig, 1); }, {"narrow", "start 9223372036854775807", "(2,3)"});
  refused([&] { narrow(x, 1, kBig - 1000000, 1000002); }, {"narrow", "start 9223372036853775807", "length 1000002"});
  refused([&] { narrow(x, 1, 1, kBig); }, {"narrow", "length 9223372036854775807"});
  CHECK(narrow(x, 1, 3, 0).shape() == Shape({2, 0}));  // an empty range at the end, as PyTorch

  // Python's x[:, 0:3:step]: a step past the end keeps the first column only
  const Tensor c0 = slice(x, 1, 0, 3, kBig);
  CHECK(c0.shape() == Shape({2, 1}));
  CHECK(test::allclose(c0, from_vector({0, 3}, {2, 1}), 0, 0));
  CHECK(test::allclose(slice(x, 1, 1, kBig, kBig), from_vector({1, 4}, {2, 1}), 0, 0));
  CHECK(test::allclose(slice(x, 1, std::numeric_limits<int64_t>::min(), kBig), x, 0, 0));
  CHECK(slice(x, 1, kBig, 3).shape() == Shape({2, 0}));
  // its backward scatters into the one column it read
  slice(x, 1, 0, 3, kBig).sum().backward();
  CHECK(test::allclose(x.grad(), from_vector({1, 0, 0, 1, 0, 0}, {2, 3}), 0, 0));

  // cat of empty tensors whose joined size overflows
  refused([] { cat({zeros({kBig, 0}), zeros({1, 0})}, 0); }, {"cat", "overflows", "(1,0)"});
}

TEST_CASE("bounds: RoPE positions, offsets past the table and T = 0") {
  manual_seed(1);
  const Tensor x = randn({1, 2, 4});  // (B, T, D)
  refused([&] { nn::apply_rotary(x, kBig); }, {"apply_rotary", "offset 9223372036854775807"});
  refused([&] { nn::apply_rotary(x, kMaxRotaryPosition); }, {"apply_rotary", "offset 2147483647", "T = 2"});
  CHECK(nn::apply_rotary(x.narrow(1, 0, 1), kMaxRotaryPosition).shape() == Shape({1, 1, 4}));
  refused([] { rotary_table(2, 4, 10000, kBig); }, {"rotary_table", "first 9223372036854775807"});
  const RotaryTable t = rotary_table(4, 4);
  refused([&] { rotary(x, t, kBig); }, {"rotary", "row 9223372036854775807"});
  refused([&] { rotary(x, t, 3); }, {"rotary", "row 3", "4 positions"});

  nn::RotaryEmbedding rope(4);
  // T = 0: an empty result, as PyTorch's ops on an empty sequence
  const Tensor e = randn({2, 0, 4});
  CHECK(rope->forward(e).shape() == Shape({2, 0, 4}));
  CHECK(rope->forward(e, 1000000000).shape() == Shape({2, 0, 4}));
  CHECK(nn::apply_rotary(e, 5).shape() == Shape({2, 0, 4}));
  // a far offset costs its own T rows, and gives apply_rotary's values
  const int64_t far = 1000000000;
  CHECK(test::allclose(rope->forward(x, far), nn::apply_rotary(x, far), 0, 0));
  CHECK(test::allclose(rope->forward(x, 3), nn::apply_rotary(x, 3), 0, 0));  // the cache still serves near ones
  refused([&] { rope->forward(x, kBig); }, {"RotaryEmbedding", "offset 9223372036854775807"});
  refused([&] { rope->forward(randn({1, 2, 6})); }, {"RotaryEmbedding", "(1,2,6)", "dim 4"});
}

TEST_CASE("bounds: initialisers refuse impossible spreads as PyTorch does") {
  Tensor t = zeros({3, 4});
  refused([&] { nn::init::normal_(t, 0, -1); }, {"normal_", "std = -1"});
  refused([&] { nn::init::normal_(t, 0, NAN); }, {"normal_", "std = nan"});
  refused([&] { nn::init::normal_(t, INFINITY, 1); }, {"normal_", "mean inf"});
  refused([&] { nn::init::uniform_(t, 1, 0); }, {"uniform_", "a = 1 > b = 0"});
  refused([&] { nn::init::uniform_(t, NAN, 1); }, {"uniform_", "a = nan"});
  refused([&] { nn::init::uniform_(t, 0, INFINITY); }, {"uniform_", "b = inf"});
  refused([&] { nn::init::uniform_(t, -3e38, 3e38); }, {"uniform_", "b - a = 6e+38"});
  refused([&] { nn::init::xavier_uniform_(t, -1); }, {"xavier_uniform_", "gain = -1"});
  refused([&] { nn::init::xavier_normal_(t, NAN); }, {"xavier_normal_", "gain = nan"});
  refused([&] { nn::init::orthogonal_(t, INFINITY); }, {"orthogonal_", "gain = inf"});
  refused([&] { nn::init::kaiming_uniform_(t, NAN); }, {"calculate_gain", "negative_slope nan"});
  CHECK(t.abs().sum().item() == 0);  // every refusal left t as it was
  // the edges PyTorch accepts
  nn::init::uniform_(t, 1, 1);
  CHECK(test::allclose(t, ones({3, 4}), 0, 0));
  nn::init::normal_(t, 2, 0);
  CHECK(test::allclose(t, full({3, 4}, 2), 0, 0));
  nn::init::orthogonal_(t, -1);  // a negative gain only flips the signs, as in PyTorch
  CHECK(std::isfinite(t.sum().item()));
}

TEST_CASE("bounds: causal_mask names itself and its arguments") {
  refused([] { nn::causal_mask(3, 3, 2, 5); }, {"causal_mask", "rows 5", "first_row 2", "Tq = 3"});
  refused([] { nn::causal_mask(-1, 3); }, {"causal_mask", "Tq = -1"});
  refused([] { nn::causal_mask(3, -2); }, {"causal_mask", "Tk = -2"});
  refused([] { nn::causal_mask(3, 3, 4); }, {"causal_mask", "first_row 4"});
  refused([] { nn::causal_mask(3, 3, -1, 1); }, {"causal_mask", "first_row -1"});
  refused([] { nn::causal_mask(3, 3, 0, -2); }, {"causal_mask", "rows -2"});
  CHECK(test::allclose(nn::causal_mask(3, 3, 2, 1), ones({1, 3}), 0, 0));
  CHECK(test::allclose(nn::causal_mask(3, 3, 1), from_vector({1, 1, 0, 1, 1, 1}, {2, 3}), 0, 0));
  CHECK(nn::causal_mask(3, 3, 3).shape() == Shape({0, 3}));
}

TEST_CASE("bounds: recurrent padding masks take only 0 and 1, as attention masks") {
  manual_seed(2);
  const Tensor x = randn({2, 3, 4});  // (B, T, In), batch first
  Tensor m = ones({2, 3});
  m.data()[2] = NAN;
  nn::LSTM lstm(nn::LSTMOptions(4, 5).batch_first(true));
  nn::GRU gru(nn::GRUOptions(4, 5).batch_first(true));
  refused([&] { lstm->forward(x, {}, m); }, {"LSTM", "padding mask", "nan", "flat index 2"});
  refused([&] { gru->forward(x, Tensor(), m); }, {"GRU", "padding mask", "nan"});
  m.data()[2] = 2;
  refused([&] { gru->forward(x, Tensor(), m); }, {"GRU", "padding mask", "holds 2"});
  m.data()[2] = 0;  // right padding: valid
  CHECK(gru->forward(x, Tensor(), m).output.shape() == Shape({2, 3, 5}));
}

TEST_CASE("bounds: to_dot escapes quotes, backslashes and newlines in names") {
  Tensor w = ones({2}).requires_grad_();
  Tensor y = (w * w).sum();
  const std::string dot =
      to_dot(y, DotOptions().names({{"say \"hi\" \\ back\nslash", w}}).title("a \"title\" \\"));
  CHECK(dot_strings_balanced(dot));
  CHECK(dot.find("say \\\"hi\\\" \\\\ back\\nslash") != std::string::npos);
  CHECK(dot.find("a \\\"title\\\" \\\\\"") != std::string::npos);
  CHECK(!dot_strings_balanced("label=\"a\"b\"\n"));  // the checker itself sees a bare quote
}

TEST_CASE("bounds: cross-entropy and nll with negative or zero class weights match PyTorch") {
  const Tensor logits = from_vector({1, 2, 3, 1, 0, -1}, {2, 3});
  const IndexTensor target({0, 2}, {2});
  // torch: weight [-1, 1, 1] -> mean nan (the weights of the counted targets sum to 0), sum 0
  const Tensor w = from_vector({-1, 1, 1}, {3});
  CHECK(std::isnan(cross_entropy_loss(logits, target, w, Reduction::Mean, -100, 0).item()));
  CHECK(std::isnan(cross_entropy_loss_reference(logits, target, w, Reduction::Mean, -100, 0).item()));
  CHECK(std::isnan(nll_loss(log_softmax(logits, 1), target, w, Reduction::Mean, -100).item()));
  CHECK(std::isnan(cross_entropy_loss(logits, target, zeros({3}), Reduction::Mean, -100, 0).item()));
  CHECK(std::fabs(cross_entropy_loss(logits, target, w, Reduction::Sum, -100, 0).item()) < 1e-5);
  // weight [-1, 1, -1] -> mean 2.4076059 (torch), with a finite gradient
  const Tensor x = logits.detach().requires_grad_();
  const Tensor w2 = from_vector({-1, 1, -1}, {3});
  const Tensor l = cross_entropy_loss(x, target, w2, Reduction::Mean, -100, 0);
  CHECK(l.item() == doctest::Approx(2.4076059).epsilon(1e-6));
  l.backward();
  CHECK(std::isfinite(x.grad().sum().item()));
  // every target ignored: still heed's 0 with zero gradient (README: not NaN)
  const IndexTensor ignored({-100, -100}, {2});
  CHECK(cross_entropy_loss(logits, ignored, w, Reduction::Mean, -100, 0).item() == 0);
}

TEST_CASE("bounds: DistributedSampler sizes near INT64_MAX") {
  using data::DistributedSampler;
  using data::DistributedSamplerOptions;
  CHECK(DistributedSampler(DistributedSamplerOptions(kBig, 0, 3)).size() == 3074457345618258603);
  CHECK(DistributedSampler(DistributedSamplerOptions(kBig, 2, 3).drop_last(true)).size() ==
        3074457345618258602);
  CHECK(DistributedSampler(DistributedSamplerOptions(kBig, 0, 1)).size() == kBig);
  refused([] { DistributedSampler(DistributedSamplerOptions(kBig, 0, 1)).indices(); },
          {"DistributedSampler", "num_samples 9223372036854775807"});
  CHECK(DistributedSampler(DistributedSamplerOptions(7, 1, 3).shuffle(false)).indices() ==
        std::vector<int64_t>({1, 4, 0}));
}

TEST_CASE("bounds: every schedule at step INT64_MAX is PyTorch's value or its limit") {
  const Tensor w = zeros({1}).requires_grad_();
  const optim::SGD sgd(std::vector<Tensor>{w}, optim::SGDOptions(1e-3));  // the schedules' lr
  const optim::SGD sgd_half(std::vector<Tensor>{w}, optim::SGDOptions(0.5));
  const optim::SGD sgd_tenth(std::vector<Tensor>{w}, optim::SGDOptions(0.1));
  const optim::SGD sgd_zero(std::vector<Tensor>{w}, optim::SGDOptions(0));
  const optim::TransformerWarmup tw(sgd, optim::TransformerWarmupOptions(512, 4000));
  const double lr = tw.lr_at(kBig);
  CHECK(std::isfinite(lr));
  CHECK(lr == doctest::Approx(std::pow(512.0, -0.5) * std::pow(9.223372036854775808e18, -0.5)));
  const optim::WarmupDecayOptions o(100, 1000);
  CHECK(optim::LinearWarmupCosine(sgd, o).lr_at(kBig) == 0);
  CHECK(optim::LinearWarmupLinearDecay(sgd, o).lr_at(kBig) == 0);
  CHECK(optim::LinearWarmupCosine(sgd, optim::WarmupDecayOptions(0, kBig)).lr_at(kBig) == 0);
  CHECK(optim::LinearWarmupCosine(sgd, optim::WarmupDecayOptions(kBig, kBig)).lr_at(kBig - 1) ==
        doctest::Approx(1e-3));
  CHECK(optim::Constant(sgd_half, optim::ConstantOptions().warmup_steps(kBig)).lr_at(kBig - 1) ==
        doctest::Approx(0.5));
  CHECK(optim::StepDecay(sgd_tenth, optim::StepDecayOptions(1)).lr_at(kBig) == 0);
  CHECK(optim::StepDecay(sgd_tenth, optim::StepDecayOptions(1).gamma(1)).lr_at(kBig) == doctest::Approx(0.1));
  CHECK(optim::StepDecay(sgd_zero, optim::StepDecayOptions(1).gamma(2)).lr_at(kBig) == 0);
  refused([&] { optim::StepDecay(sgd_tenth, optim::StepDecayOptions(1).gamma(2)).lr_at(2000); },
          {"StepDecay", "step 2000", "overflows"});
  refused([&] { optim::TransformerWarmup(sgd, optim::TransformerWarmupOptions(8, 4).scale(NAN)); },
          {"TransformerWarmup", "scale nan"});
  const optim::SGD sgd_inf(std::vector<Tensor>{w}, optim::SGDOptions(INFINITY));  // SGD takes it
  refused([&] { optim::LinearWarmupCosine(sgd_inf, optim::WarmupDecayOptions(0, 10)); },
          {"LinearWarmupCosine", "lr inf"});
  refused([&] { optim::StepDecay(sgd_tenth, optim::StepDecayOptions(1).gamma(INFINITY)); },
          {"StepDecay", "gamma inf"});
}

TEST_CASE("bounds: HEED_DYNAMIC_THREADS is 0 or 1, anything else an error naming it") {
  CHECK(detail::dynamic_threads_setting(nullptr));
  CHECK(detail::dynamic_threads_setting("1"));
  CHECK_FALSE(detail::dynamic_threads_setting("0"));
  for (const char* bad : {"", "off", "false", "00", "2", "1 "})
    refused([&] { detail::dynamic_threads_setting(bad); }, {"HEED_DYNAMIC_THREADS", std::string("'") + bad + "'"});
}

TEST_CASE("bounds: thread counts past kMaxThreads are errors, not a libgomp abort") {
  const int before = get_num_threads();
  const bool dynamic = get_dynamic_threads();
  set_dynamic_threads(false);
  refused([] { set_num_threads(std::numeric_limits<int>::max()); }, {"set_num_threads", "2147483647", "1024"});
  refused([] { set_num_threads(kMaxThreads + 1); }, {"set_num_threads", "1025"});
  refused([] { set_num_threads(0); }, {"set_num_threads", "got 0"});
  CHECK(get_num_threads() == before);  // a refused count changes nothing
  CHECK(sum(ones({1000})).item() == 1000);
  set_dynamic_threads(dynamic);
}

TEST_CASE("bounds: gradcheck options and the float build") {
  // The setters store what they are given; gradcheck() refuses it before any evaluation.
  const Tensor x = from_vector({0.3, 0.7, -1.1}, {3}).requires_grad_();
  const auto f = [](const std::vector<Tensor>& v) { return tanh(v[0]); };
  refused([&] { gradcheck(f, {x}, GradcheckOptions().eps(0)); }, {"GradcheckOptions", "eps = 0"});
  refused([&] { gradcheck(f, {x}, GradcheckOptions().eps(-1e-6)); }, {"GradcheckOptions", "eps = -1e-06"});
  refused([&] { gradcheck(f, {x}, GradcheckOptions().atol(-1)); }, {"GradcheckOptions", "atol = -1"});
  refused([&] { gradcheck(f, {x}, GradcheckOptions().rtol(NAN)); }, {"GradcheckOptions", "rtol = nan"});
  // this binary is the float build: the default check fails and says why
  CHECK(sizeof(real) == 4);
  const GradcheckResult r = gradcheck(f, {x});
  CHECK(!r.ok);
  CHECK(r.message.find("-DHEED_DOUBLE") != std::string::npos);
  CHECK(r.message.find("libheed_f64.a") != std::string::npos);
  // gradgradcheck's failure in the float build says the same (tanh's second derivative
  // is not checkable by float finite differences at the default eps)
  const GradcheckResult rr = gradgradcheck(f, {x});
  CHECK(!rr.ok);
  CHECK(rr.message.find("gradgradcheck") != std::string::npos);
  CHECK(rr.message.find("-DHEED_DOUBLE") != std::string::npos);
  CHECK(rr.message.find("libheed_f64.a") != std::string::npos);
}

TEST_CASE("bounds: load_checkpoint reads nothing but a regular file, header first") {
  TmpDir tmp;
  nn::Linear model(4, 2);
  refused([&] { load_checkpoint("/dev/zero", model); }, {"load_checkpoint", "/dev/zero", "character device"});
  refused([&] { load_checkpoint(tmp.dir.string(), model); }, {"load_checkpoint", tmp.dir.string(), "a directory"});
  const std::string fifo = tmp.file("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  refused([&] { load_checkpoint(fifo, model); }, {"load_checkpoint", fifo, "a FIFO"});

  // 512 MiB of the wrong kind, sparse (no disk used): refused from its header alone
  const std::string big = tmp.file("big.bin");
  std::ofstream(big).put('x');
  std::filesystem::resize_file(big, std::uintmax_t(512) << 20);
  refused([&] { load_checkpoint(big, model); }, {"load_checkpoint", big, "not a heed checkpoint"});

  // a valid header that declares 1 TiB in a file of a few hundred bytes
  const std::string good = tmp.file("good.ckpt"), bad = tmp.file("bad.ckpt");
  save_checkpoint(good, model);
  test::Bytes b = test::read_bytes(good);
  const uint64_t huge = uint64_t(1) << 40;
  for (int i = 0; i < 8; ++i) b[16 + i] = uint8_t(huge >> (8 * i));
  test::write_bytes(bad, b, b.size());
  refused([&] { load_checkpoint(bad, model); },
          {"load_checkpoint", "truncated", std::to_string(b.size()) + " of its 1099511627776 bytes"});
  // and the same header on a sparse file of 512 MiB: more bytes than declared, refused
  for (int i = 0; i < 8; ++i) b[16 + i] = uint8_t(uint64_t(b.size()) >> (8 * i));
  test::write_bytes(bad, b, b.size());
  std::filesystem::resize_file(bad, std::uintmax_t(512) << 20);
  refused([&] { load_checkpoint(bad, model); }, {"load_checkpoint", "declares", "536870912"});
  load_checkpoint(good, model);  // the good one still loads
}

TEST_CASE("bounds: absolute positions past max_len, however large the offset") {
  nn::SinusoidalPositionalEncoding pe(nn::SinusoidalPositionalEncodingOptions(4).max_len(8));
  nn::LearnedPositionalEmbedding le(8, 4);
  const Tensor x = zeros({1, 3, 4});
  refused([&] { pe->forward(x, kBig); }, {"offset 9223372036854775807", "T = 3", "max_len 8"});
  refused([&] { le->forward(x, kBig - 1); }, {"offset 9223372036854775806", "max_len 8"});
  refused([&] { pe->forward(x, 6); }, {"offset 6", "max_len 8"});
  CHECK(pe->forward(x, 5).shape() == Shape({1, 3, 4}));
}

// An empty tensor may have dims whose product overflows int64 (its element count is 0):
// ops that see it as (outer, n, inner) must do no work, not loop a wrapped-around count.
TEST_CASE("bounds: empty tensors whose other dims multiply past INT64_MAX") {
  const int64_t a = int64_t(3) << 31;  // a * a = 9 * 2^62: overflows
  const Tensor x = zeros({0, a, a});     // inner = a * a past dim 0
  CHECK(topk(x, 0, 0).values.shape() == Shape({0, a, a}));
  CHECK(index_select(x, 0, IndexTensor(std::vector<int64_t>{}, {0})).shape() == Shape({0, a, a}));
  CHECK(tril(x).shape() == Shape({0, a, a}));
  CHECK(sum(x, 2).shape() == Shape({0, a}));
  refused([&] { sum(x, 0); }, {"(6442450944,6442450944)", "overflows"});  // (a, a) has too many
}
