// distributed_mpi.h - data-parallel training over MPI: every process (rank) holds a full copy
// of the model, trains on its own shard of each batch, and all ranks average their
// gradients before each optimizer step, so their parameters stay identical. This is the
// scheme of torch.nn.parallel.DistributedDataParallel and Horovod (Sergeev & Del Balso 2018),
// on Open MPI. Built only by `make USE_MPI=1` into libheed_mpi.a (pkg-config: heed-mpi);
// the rest of heed has no MPI dependency.
//
//   int main(int argc, char** argv) {
//     dist::MpiGuard mpi(argc, argv);                      // MPI_Init ... MPI_Finalize
//     auto model = std::make_shared<Net>();                // same architecture everywhere
//     dist::broadcast_parameters(*model);                  // rank 0's initial weights
//     optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
//     dist::GradientAverager sync(*model, dist::GradientAveragerOptions().bucket_bytes(25 << 20));
//     for (...) {                                          // this rank's shard of the batch
//       opt.zero_grad();
//       loss.backward();                                   // buckets reduce as grads finish
//       sync.synchronize();                                // every grad now the average
//       opt.step();                                        // identical on every rank
//     }
//   }
//   mpirun -np 2 ./train
//
// Why averaging gradients is the big-batch gradient. With the mean loss over a batch of
// B = W*b examples split into W equal shards of b,
//   L = (1/B) sum_i l_i = (1/W) sum_r [ (1/b) sum_{i in shard r} l_i ] = (1/W) sum_r L_r
// and the gradient is linear, so dL/dw = (1/W) sum_r dL_r/dw: the mean of the ranks'
// gradients. Every rank then holds the same gradient and, from the same start (the
// broadcast), takes the same optimizer step: W processes train exactly as one process
// with W times the batch, up to float rounding (tests/mpi/test_data_parallel.cpp).
// Where it breaks:
//   - unequal shards: with b_r examples on rank r the true gradient weights rank r by
//     b_r / B, not 1/W (data::DistributedSampler pads so every rank has the same count;
//     a ragged last batch, or a token-mean loss with a different number of real tokens
//     per rank, is weighted wrongly);
//   - sum-reduced losses: the sum over the big batch is the SUM of the ranks' gradients,
//     W times the average (scale the loss or the learning rate);
//   - layers with batch statistics (BatchNorm) compute them over b, not B, so the forward
//     itself differs (heed's LayerNorm is per example and unaffected);
//   - randomness (dropout) draws different masks than the one big process would: the
//     gradient is still an unbiased estimate, but not the same numbers.
//
// How the averaging is done. MPI_Allreduce(SUM) leaves on every rank the elementwise sum
// of all ranks' buffers; dividing by W gives the mean. A ring allreduce (what Open MPI
// picks for large buffers) sends and receives 2(W-1)/W * bytes per rank whatever W is,
// but every call also pays a fixed latency, and a model has many small tensors (biases,
// norms). So gradients are copied into a few flat buckets of about bucket_bytes each
// (torch's default 25 MiB) and one call reduces a whole bucket: fewer, larger messages.
// The buckets are allocated once, here; a step allocates nothing.
//
// Overlap. Backward produces the last layer's gradients first, so buckets are filled in
// reverse parameter order and, with overlap on, a bucket's reduction starts
// (MPI_Iallreduce) from the post-accumulate hook of its last gradient (Tensor::
// register_post_accumulate_grad_hook), while backward computes the earlier layers'
// gradients. Buckets are always started in the same order (0, 1, 2, ...) on every rank, as
// MPI requires of collectives. Whether it pays depends on the MPI library progressing the
// reduction in the background; Open MPI without a progress thread advances it only
// inside MPI calls (each hook calls MPI_Test). `make bench-overlap`
// (tests/bench/mpi/bench_overlap.cpp) measures both ways against compute alone.
//
// Errors. MPI errors are returned, not fatal: each becomes a heed::Error naming the MPI
// call and the MPI message. A rank that dies (a crash, or an exit with an error code) makes
// mpirun end the others (tests/mpi/dead_rank.sh proves they exit with an error rather than
// hang). Not caught: a rank that leaves the training loop early and finishes normally
// (MPI_Finalize) while the others still average gradients; MPI cannot tell it from a slow
// rank and the others wait forever (torch has the same problem, and its Join helper). So
// every rank must take the same number of steps, which data::DistributedSampler's equal
// shards give; run jobs under `timeout` when in doubt.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../layers/module.h"
#include "optimizer.h"

namespace heed::dist {

// MPI_Init_thread (funneled: only the main thread calls MPI) in the constructor,
// MPI_Finalize in the destructor. One per program, in main. Not copyable (a guard); a
// constructor that throws has not initialised MPI.
class MpiGuard {
 public:
  MpiGuard(int& argc, char**& argv);
  ~MpiGuard();
  MpiGuard(const MpiGuard&) = delete;
  MpiGuard& operator=(const MpiGuard&) = delete;
};

int rank();        // this process's number, 0 .. world_size() - 1 (0 without MPI_Init)
int world_size();  // number of processes (1 without MPI_Init)
void barrier();

// Copy rank 0's parameters and buffers into every rank's model. Throws heed::Error on
// every rank if the models' tensor counts or sizes differ across ranks.
void broadcast_parameters(nn::Module& model);

// In-place sum / mean of t across ranks (any shape, the same on every rank).
void allreduce_sum_(Tensor& t);
void allreduce_mean_(Tensor& t);
double allreduce_sum(double x);

class GradientAveragerOptions {
 public:
  HEED_ARG(int64_t, bucket_bytes) = 25 << 20;  // torch's bucket_cap_mb = 25
  HEED_ARG(bool, overlap) = true;
};

// Averages the gradients of a module's parameters across ranks (see the banner).
// Call synchronize() after each backward and before the optimizer step. A parameter that
// got no gradient this step (on this rank) contributes zeros, and after synchronize()
// every parameter has a gradient, so every rank steps the same set.
class GradientAverager {
 public:
  GradientAverager(nn::Module& model, const GradientAveragerOptions& options = {});
  ~GradientAverager();  // removes its hooks
  GradientAverager(const GradientAverager&) = delete;
  GradientAverager& operator=(const GradientAverager&) = delete;

  // Finish every bucket's reduction and write the averages into the gradients.
  void synchronize();
  // Off: backward passes do not start reductions and synchronize() is a no-op, so that
  // micro-batches accumulate locally (torch's no_sync()); turn on for the last one.
  void set_enabled(bool on) { enabled_ = on; }
  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  int64_t bucket_numel(int b) const { return static_cast<int64_t>(buckets_[b].flat.size()); }

 private:
  struct Slot {              // one parameter's place in a bucket
    Tensor param;
    int bucket;
    int64_t offset;
    bool ready;              // its gradient was copied in this step
  };
  struct Bucket {
    std::vector<real> flat;  // the parameters' gradients back to back
    int num_slots = 0;
    int num_ready = 0;
    MPI_Request request = MPI_REQUEST_NULL;  // its reduction, once started
  };
  void on_gradient(int slot);       // a parameter's gradient is final: copy it in
  void start_ready_buckets();       // start every leading bucket whose slots are all in
  void start(int b);

  GradientAveragerOptions options_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<int64_t> hooks_;
  int next_to_start_ = 0;
  bool enabled_ = true;
};

// Checkpoints under data parallelism: the ranks hold the same state, so one writes.
// save: rank 0 writes (optim/checkpoint_file.h's format), then every rank learns whether it
// succeeded (a failure is a heed::Error on all ranks, not a hang).
// load: every rank reads the file (a shared or copied path), then the ranks compare a
// fingerprint of their model and optimizer state; a difference is a heed::Error.
void save_checkpoint_on_rank0(const std::string& path, const nn::Module& model,
                              const optim::Optimizer& optimizer);
void load_checkpoint_on_all_ranks(const std::string& path, nn::Module& model,
                                  optim::Optimizer& optimizer);
// FNV-1a 64 over the bytes of every parameter, buffer and optimizer state tensor; equal
// on all ranks after a correct load or synchronized steps. Throws if the ranks differ.
uint64_t check_same_state_on_all_ranks(const nn::Module& model, const optim::Optimizer& optimizer);

}  // namespace heed::dist
