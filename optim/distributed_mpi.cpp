// distributed_mpi.cpp - data parallelism over MPI (the algorithm is in distributed_mpi.h).
// Built with mpicxx into libheed_mpi.a only; the Makefile keeps *_mpi.cpp out of libheed.a.
#include "distributed_mpi.h"

#include <mpi.h>

#include <cstdint>
#include <cstring>

#include "../autograd/engine/grad_mode.h"
#include "../core/error.h"
#include "checkpoint_file.h"

namespace heed::dist {

// MPI's type for heed's `real` (float, or double under -DHEED_DOUBLE).
static MPI_Datatype real_type() { return sizeof(real) == 8 ? MPI_DOUBLE : MPI_FLOAT; }

// Every MPI call goes through here: a failure is a heed::Error naming the call.
static void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fail(call, "failed on rank ", rank(), ": ", std::string(msg, len));
}

// MPI counts are ints: a tensor (or bucket) of 2^31 elements or more must be split.
static int mpi_count(int64_t n, const char* op) {
  HEED_CHECK(n <= INT32_MAX, op, n, " elements is more than one MPI call can move (2^31 - 1); "
             "use smaller buckets or split the tensor");
  return static_cast<int>(n);
}

static bool mpi_running() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

// ---------------------------------------------------------------- process group

MpiGuard::MpiGuard(int& argc, char**& argv) {
  HEED_CHECK(!mpi_running(), "MpiGuard", "MPI is already initialised; make one MpiGuard, in main");
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

MpiGuard::~MpiGuard() {
  if (mpi_running()) MPI_Finalize();
}

int rank() {
  if (!mpi_running()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  if (!mpi_running()) return 1;
  int w = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &w);
  return w;
}

void barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

// Throws on every rank (with the same message) unless x is the same on all of them.
static void check_same_on_all_ranks(int64_t x, const char* op, const char* what) {
  int64_t lo = x, hi = x;
  check(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  check(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  HEED_CHECK(lo == hi, op, what, " differs across ranks (from ", lo, " to ", hi, "; this rank ",
             rank(), " has ", x, ")");
}

void broadcast_parameters(nn::Module& model) {
  std::vector<Tensor> tensors = model.parameters();
  for (auto& [name, b] : model.named_buffers()) tensors.push_back(b);
  check_same_on_all_ranks(static_cast<int64_t>(tensors.size()), "broadcast_parameters",
                          "the number of parameters and buffers");
  for (const Tensor& t : tensors) {
    check_same_on_all_ranks(t.numel(), "broadcast_parameters", "a parameter's size");
    check(MPI_Bcast(t.data(), mpi_count(t.numel(), "broadcast_parameters"), real_type(), 0, MPI_COMM_WORLD),
          "MPI_Bcast");
    t.bump_version();  // written in place: a backward that saved it must not run on the new values
  }
}

void allreduce_sum_(Tensor& t) {
  check(MPI_Allreduce(MPI_IN_PLACE, t.data(), mpi_count(t.numel(), "allreduce_sum_"), real_type(), MPI_SUM,
                      MPI_COMM_WORLD), "MPI_Allreduce");
  t.bump_version();
}

void allreduce_mean_(Tensor& t) {
  allreduce_sum_(t);
  const real inv = real(1) / real(world_size());
  real* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] *= inv;
}

double allreduce_sum(double x) {
  check(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return x;
}

// ---------------------------------------------------------------- gradient averaging

GradientAverager::GradientAverager(nn::Module& model, const GradientAveragerOptions& options)
    : options_(options) {
  HEED_CHECK(options.bucket_bytes() > 0, "GradientAverager", "bucket_bytes must be > 0, got ",
             options.bucket_bytes());
  std::vector<Tensor> params = model.parameters();
  check_same_on_all_ranks(static_cast<int64_t>(params.size()), "GradientAverager",
                          "the number of parameters");
  // Reverse registration order: backward finishes the last layers' gradients first.
  const int64_t cap = options.bucket_bytes() / static_cast<int64_t>(sizeof(real));
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (!it->requires_grad()) continue;
    if (buckets_.empty() || (buckets_.back().num_slots > 0 &&
                             static_cast<int64_t>(buckets_.back().flat.size()) + it->numel() > cap))
      buckets_.emplace_back();
    Bucket& b = buckets_.back();
    slots_.push_back({*it, static_cast<int>(buckets_.size()) - 1,
                      static_cast<int64_t>(b.flat.size()), false});
    b.flat.resize(b.flat.size() + it->numel());
    b.num_slots++;
  }
  for (Bucket& b : buckets_)
    check_same_on_all_ranks(static_cast<int64_t>(b.flat.size()), "GradientAverager", "a bucket's size");
  if (options.overlap())
    for (size_t s = 0; s < slots_.size(); ++s)
      hooks_.push_back(slots_[s].param.register_post_accumulate_grad_hook(
          [this, s](const Tensor&) { if (enabled_) on_gradient(static_cast<int>(s)); }));
}

GradientAverager::~GradientAverager() {
  for (size_t s = 0; s < hooks_.size(); ++s) slots_[s].param.remove_post_accumulate_grad_hook(hooks_[s]);
  for (Bucket& b : buckets_)
    if (b.request != MPI_REQUEST_NULL && mpi_running()) MPI_Wait(&b.request, MPI_STATUS_IGNORE);
}

void GradientAverager::on_gradient(int s) {
  Slot& slot = slots_[s];
  Bucket& b = buckets_[slot.bucket];
  HEED_CHECK(!slot.ready, "GradientAverager", "a parameter of shape ", slot.param.shape(),
             " received a second gradient before synchronize(): call synchronize() after each "
             "backward, or set_enabled(false) for the micro-batches that only accumulate");
  const Tensor g = slot.param.grad();
  std::memcpy(b.flat.data() + slot.offset, g.data(), sizeof(real) * g.numel());
  slot.ready = true;
  b.num_ready++;
  start_ready_buckets();
  // Open MPI advances non-blocking collectives only inside MPI calls: nudge those in flight.
  for (int i = 0; i < next_to_start_; ++i) {
    int done = 0;
    MPI_Request& req = buckets_[i].request;
    if (req != MPI_REQUEST_NULL) check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
}

// Buckets start strictly in order so that every rank issues the same collectives in the
// same sequence, even if its gradients became ready in another order.
void GradientAverager::start_ready_buckets() {
  while (next_to_start_ < num_buckets() &&
         buckets_[next_to_start_].num_ready == buckets_[next_to_start_].num_slots)
    start(next_to_start_++);
}

void GradientAverager::start(int b) {
  Bucket& bucket = buckets_[b];
  check(MPI_Iallreduce(MPI_IN_PLACE, bucket.flat.data(), mpi_count(bucket.flat.size(), "GradientAverager"),
                       real_type(), MPI_SUM, MPI_COMM_WORLD, &bucket.request),
        "MPI_Iallreduce");
}

void GradientAverager::synchronize() {
  if (!enabled_) return;
  // 1. Gradients no hook delivered (overlap off, or a parameter unused this step).
  for (size_t s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    if (slot.ready) continue;
    Bucket& b = buckets_[slot.bucket];
    const Tensor g = slot.param.grad();
    if (g.defined())
      std::memcpy(b.flat.data() + slot.offset, g.data(), sizeof(real) * g.numel());
    else
      std::memset(b.flat.data() + slot.offset, 0, sizeof(real) * slot.param.numel());
    slot.ready = true;
    b.num_ready++;
  }
  // 2. Start what is left (in order), wait for all.
  start_ready_buckets();
  for (Bucket& b : buckets_)
    check(MPI_Wait(&b.request, MPI_STATUS_IGNORE), "MPI_Wait");
  // 3. grad = sum / W, back into each parameter's gradient.
  const real inv = real(1) / real(world_size());
  NoGradGuard no_grad;
  for (Slot& slot : slots_) {
    if (!slot.param.grad().defined()) slot.param.set_grad(zeros(slot.param.shape()));
    real* g = slot.param.grad().data();
    const real* src = buckets_[slot.bucket].flat.data() + slot.offset;
    for (int64_t i = 0; i < slot.param.numel(); ++i) g[i] = src[i] * inv;
    slot.ready = false;
  }
  for (Bucket& b : buckets_) b.num_ready = 0;
  next_to_start_ = 0;
}

// ---------------------------------------------------------------- checkpoints

// The ranks agree on whether an action succeeded: an error on one rank becomes an error on
// all, instead of the others waiting forever in the next collective.
static void agree(bool ok_here, const std::string& error_here, const char* op) {
  int ok = ok_here ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (!ok_here) throw Error(error_here);
  HEED_CHECK(ok, op, "failed on another rank (its own error says why)");
}

void save_checkpoint_on_rank0(const std::string& path, const nn::Module& model,
                              const optim::Optimizer& optimizer) {
  bool ok = true;
  std::string err;
  if (rank() == 0) {
    try {
      save_checkpoint(path, model, optimizer);
    } catch (const Error& e) {
      ok = false;
      err = e.what();
    }
  }
  // Rank 0's result for everyone; also keeps the others from reading a half-written file.
  int ok0 = ok ? 1 : 0;
  check(MPI_Bcast(&ok0, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (!ok) throw Error(err);
  HEED_CHECK(ok0, "save_checkpoint_on_rank0", "rank 0 could not write ", path);
}

void load_checkpoint_on_all_ranks(const std::string& path, nn::Module& model,
                                  optim::Optimizer& optimizer) {
  bool ok = true;
  std::string err;
  try {
    load_checkpoint(path, model, optimizer);
  } catch (const Error& e) {
    ok = false;
    err = e.what();
  }
  agree(ok, err, "load_checkpoint_on_all_ranks");
  check_same_state_on_all_ranks(model, optimizer);
}

static void fnv1a(uint64_t& h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) { h ^= p[i]; h *= 1099511628211ull; }
}

uint64_t check_same_state_on_all_ranks(const nn::Module& model, const optim::Optimizer& optimizer) {
  uint64_t h = 14695981039346656037ull;
  auto add = [&](const Tensor& t) { fnv1a(h, t.data(), sizeof(real) * t.numel()); };
  for (const Tensor& p : model.parameters()) add(p);
  for (auto& [name, b] : model.named_buffers()) add(b);
  for (auto& [name, s] : optimizer.state()) add(s);
  const int64_t step = optimizer.step_count();
  fnv1a(h, &step, sizeof step);
  uint64_t lo = h, hi = h;
  check(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  check(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  HEED_CHECK(lo == hi, "check_same_state_on_all_ranks", "the ranks hold different model or "
             "optimizer state (this rank ", rank(), " has fingerprint ", h, ")");
  return h;
}

}  // namespace heed::dist
