#include "onednn_matmul.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu.h"
#include "error.h"
#include "parallel.h"
#include "scratch.h"

namespace heed::detail {
namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;

// What of g's epilogue oneDNN applies: the bias, GELU and a compact residual (a strided one
// sends oneDNN to its reference kernel), but only the bias when the derivative is asked for
// (a post-op has one output). heed applies the rest after the primitive.
struct OnednnPart {
  bool bias = false;
  GemmActivation activation = GemmActivation::none;
  bool residual = false;
};
OnednnPart onednn_part(const OnednnGemm& g) {
  if (!g.ep) return {};
  const GemmEpilogue& ep = *g.ep;
  const bool d = ep.derivative != nullptr;
  return {ep.bias != nullptr, d ? GemmActivation::none : ep.activation,
          !d && ep.residual && ep.ldr == g.N};
}

// Everything a primitive is made for: bf16 | trans_a << 1 | trans_b << 2 | oneDNN's part of
// the epilogue (bias << 3 | activation << 4 | residual << 6), the sizes, alpha
// and beta by their bits (a NaN is a key too), the threads it runs on, and a batch's count
// and strides (1, 0, 0, 0 for one product). Thirteen int64s, no padding, so that it is
// compared and hashed as bytes.
struct Key {
  int64_t flags, M, N, K, lda, ldb, ldc, scales, threads, batch, batch_a, batch_b, batch_c;
  bool operator==(const Key& o) const { return std::memcmp(this, &o, sizeof(Key)) == 0; }
};

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

Key key_of(const OnednnGemm& g, int threads) {
  const OnednnPart e = onednn_part(g);
  return Key{int64_t(g.bf16) | int64_t(g.trans_a) << 1 | int64_t(g.trans_b) << 2 | int64_t(e.bias) << 3 |
                 int64_t(e.activation) << 4 | int64_t(e.residual) << 6,
             g.M, g.N, g.K, g.lda, g.ldb, g.ldc,
             int64_t(uint64_t(bits(g.alpha)) << 32 | bits(g.beta)), threads,
             g.batch, g.batch_a, g.batch_b, g.batch_c};
}

struct KeyHash {
  std::size_t operator()(const Key& k) const {  // FNV-1a over the key's bytes
    const auto* p = reinterpret_cast<const unsigned char*>(&k);
    std::size_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < sizeof k; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
  }
};

// heed's part of an epilogue on a float C. (This file is compiled into the double build too,
// whose products never reach oneDNN: core/gemm_engine.h.)
void epilogue_on(const GemmEpilogue& ep, float* C, int64_t ldc, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
#ifndef HEED_DOUBLE
  apply_epilogue(ep, C, ldc, r0, r1, c0, c1);
#endif
}

// A primitive and the memory layouts it was made for; the residual's post-op index.
struct Prepared {
  dnnl::matmul prim;
  memory::desc a, b, c, scratch, bias, residual;
  int residual_index = 0;
  bool amx = false;  // oneDNN's kernel for it runs on AMX tiles (its name says "amx")
};

struct Entry {
  std::shared_ptr<const Prepared> prepared;
  std::list<Key>::iterator age;  // position in Cache::lru
};

struct Cache {
  std::mutex lock;
  std::mutex making;  // one primitive made at a time (lookup says why)
  std::unordered_map<Key, Entry, KeyHash> entries;
  std::list<Key> lru;  // most recently used first
  std::atomic<OnednnRoute> route{OnednnRoute::automatic};
};

thread_local OnednnRoute t_last_route = OnednnRoute::automatic;
thread_local int64_t t_amx_runs = 0;

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: a GEMM may run during static destruction
  return *c;
}

// Once, before oneDNN first looks at the CPU: a level forced below the machine's with HEED_CPU
// (core/cpu.h) caps oneDNN's kernels at the same level, so that a run at HEED_CPU=v2 tests
// what a v2 CPU would run.
// (avx512 caps it at avx512_core, below avx512_core_bf16: oneDNN's bf16 matmul, if it offers
// one there, is what it runs on an AVX-512 CPU without bf16 units; onednn_has_bf16 asks it.)
bool cap_isa() {
  if (cpu_level() >= cpu_machine_level()) return true;
  switch (cpu_level()) {
    case CpuLevel::v2: dnnl_set_max_cpu_isa(dnnl_cpu_isa_sse41); break;
    case CpuLevel::avx2: dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2); break;
    case CpuLevel::avx512: dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core); break;
    case CpuLevel::avx512_bf16: break;  // the top level: never below the machine's
  }
  return true;
}

void setup() {
  static const bool done = cap_isa();
  (void)done;
}

dnnl::engine& engine() {
  setup();
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

// A oneDNN stream is not safe to share between threads: one per thread.
dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

std::string shapes(const OnednnGemm& g) {
  std::ostringstream os;
  os << (g.bf16 ? "bf16" : "f32") << " M=" << g.M << " N=" << g.N << " K=" << g.K
     << (g.trans_a ? " A^T" : "") << (g.trans_b ? " B^T" : "") << " lda=" << g.lda
     << " ldb=" << g.ldb << " ldc=" << g.ldc;
  if (g.batch > 1)
    os << " batch=" << g.batch << " strides=" << g.batch_a << "," << g.batch_b << "," << g.batch_c;
  return os.str();
}

// A (M, K) matrix stored as given: rows ld apart, or transposed ((K, M) stored, rows ld
// apart), which is the (M, K) matrix with strides (1, ld).
memory::desc matrix(int64_t rows, int64_t cols, dt type, bool transposed, int64_t ld) {
  return memory::desc({rows, cols}, type, transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

// `batch` such (rows, cols) matrices `stride` elements apart: (batch, rows, cols), or
// (1, rows, cols) for stride 0 (one matrix for the whole batch, which oneDNN's matmul
// broadcasts). A dim of size 1 has no step; it is given the matrix's extent.
memory::desc matrices(int64_t batch, int64_t stride, int64_t rows, int64_t cols, dt type,
                      bool transposed, int64_t ld) {
  const int64_t extent = (transposed ? cols : rows) * ld;
  const memory::dims step = transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
  return memory::desc({stride == 0 ? 1 : batch, rows, cols}, type,
                      {stride == 0 ? extent : stride, step[0], step[1]});
}

std::shared_ptr<const Prepared> prepare(const OnednnGemm& g) {
  auto p = std::make_shared<Prepared>();
  const dt in = g.bf16 ? dt::bf16 : dt::f32;
  if (g.batch > 1) {  // A (batch | 1, M, K) x B (batch | 1, K, N) -> C (batch, M, N)
    p->a = matrices(g.batch, g.batch_a, g.M, g.K, in, g.trans_a, g.lda);
    p->b = matrices(g.batch, g.batch_b, g.K, g.N, in, g.trans_b, g.ldb);
    p->c = matrices(g.batch, g.batch_c, g.M, g.N, dt::f32, false, g.ldc);
  } else {
    p->a = matrix(g.M, g.K, in, g.trans_a, g.lda);
    p->b = matrix(g.K, g.N, in, g.trans_b, g.ldb);
    p->c = matrix(g.M, g.N, dt::f32, false, g.ldc);
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (g.alpha != 1) attr.set_output_scales(0, {g.alpha});
  dnnl::post_ops ops;
  if (g.beta != 0) ops.append_sum(g.beta);  // C = alpha A B + beta C: the sum post-op reads C first
  const OnednnPart e = onednn_part(g);
  if (e.activation != GemmActivation::none)
    ops.append_eltwise(1.f, e.activation == GemmActivation::gelu_erf ? dnnl::algorithm::eltwise_gelu_erf
                                                                     : dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
  if (e.residual) {
    p->residual = matrix(g.M, g.N, dt::f32, false, g.N);
    p->residual_index = ops.len();
    ops.append_binary(dnnl::algorithm::binary_add, p->residual);
  }
  if (ops.len() > 0) attr.set_post_ops(ops);
  if (e.bias) p->bias = matrix(1, g.N, dt::f32, false, g.N);
  const dnnl::matmul::desc d = e.bias ? dnnl::matmul::desc(p->a, p->b, p->bias, p->c)
                                      : dnnl::matmul::desc(p->a, p->b, p->c);
  const dnnl::matmul::primitive_desc pd(d, attr, engine());
  p->scratch = pd.scratchpad_desc();
  p->amx = std::string(pd.impl_info_str()).find("amx") != std::string::npos;
  p->prim = dnnl::matmul(pd);
  return p;
}

// Makes room for one entry, dropping the least recently used one when full. Under c.lock.
void make_room(Cache& c) {
  if (c.entries.size() < kCacheCapacity) return;
  c.entries.erase(c.lru.back());
  c.lru.pop_back();
}

// The primitive for g on `threads` threads (the team gemm_threads() set on this thread):
// the cached one, or one made now and cached. Primitives are made one at a time, under
// c.making: oneDNN 2.6's primitive-descriptor creation run from two std::threads at once is
// reported by ThreadSanitizer as a race inside libdnnl, and a thread that missed while
// another made the same primitive then finds it cached instead of making a second. GEMMs
// whose primitive is cached go on meanwhile (c.lock is not held while making).
std::shared_ptr<const Prepared> lookup(const OnednnGemm& g, int threads) {
  Cache& c = cache();
  const Key k = key_of(g, threads);
  const auto find = [&]() -> std::shared_ptr<const Prepared> {
    std::lock_guard<std::mutex> hold(c.lock);
    auto it = c.entries.find(k);
    if (it == c.entries.end()) return nullptr;
    c.lru.splice(c.lru.begin(), c.lru, it->second.age);
    return it->second.prepared;
  };
  if (auto p = find()) return p;
  std::lock_guard<std::mutex> making(c.making);
  if (auto p = find()) return p;  // made by another thread while this one waited
  std::shared_ptr<const Prepared> p = prepare(g);
  std::lock_guard<std::mutex> hold(c.lock);
  make_room(c);
  c.lru.push_front(k);
  c.entries.emplace(k, Entry{p, c.lru.begin()});
  return p;
}

void run_primitive(const Prepared& p, const OnednnGemm& g) {
  dnnl::engine& e = engine();
  const Scratch<unsigned char> scratch(int64_t(p.scratch.get_size()));
  const memory a(p.a, e, const_cast<void*>(g.A)), b(p.b, e, const_cast<void*>(g.B)),
      c(p.c, e, g.C), s(p.scratch, e, scratch.data);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c},
                                       {DNNL_ARG_SCRATCHPAD, s}};
  const OnednnPart part = onednn_part(g);
  if (part.bias) args.emplace(DNNL_ARG_BIAS, memory(p.bias, e, const_cast<real*>(g.ep->bias)));
  if (part.residual)
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(p.residual_index) | DNNL_ARG_SRC_1,
                 memory(p.residual, e, const_cast<real*>(g.ep->residual)));
  dnnl::stream& st = stream();
  p.prim.execute(st, args);
  st.wait();
  t_amx_runs += p.amx;
  if (!g.ep) return;
  // the rest of the epilogue, in one pass over C (each row on one thread; any split, same bits)
  GemmEpilogue rest = *g.ep;
  rest.bias = nullptr;
  if (part.activation != GemmActivation::none) rest.activation = GemmActivation::none;
  if (part.residual) rest.residual = nullptr;
  if (rest.empty()) return;
  parallel_for(g.M, kGrainTranscendental / g.N + 1, [&](int64_t r0, int64_t r1) {
    epilogue_on(rest, g.C, g.ldc, r0, r1, 0, g.N);
  });
}

// dnnl_sgemm on one thread, for rows [r0, r1) and columns [c0, c1) of C.
dnnl_status_t sgemm_block(const OnednnGemm& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const auto* A = static_cast<const float*>(g.A);
  const auto* B = static_cast<const float*>(g.B);
  A += g.trans_a ? r0 : r0 * g.lda;  // op(A) rows r0..: A's rows, or A^T's columns
  B += g.trans_b ? c0 * g.ldb : c0;  // op(B) columns c0..
  return dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', r1 - r0, c1 - c0, g.K, g.alpha,
                    A, g.lda, B, g.ldb, g.beta, g.C + r0 * g.ldc + c0, g.ldc);
}

// dnnl_sgemm on heed's own team: C cut into fixed blocks (detail::for_each_gemm_block, core/
// gemm_epilogue.h: the longer side in whole 16-wide panels, never K), each block one
// single-threaded dnnl_sgemm (oneDNN runs on one thread inside a parallel region) followed by
// its epilogue, if any, while the block is in cache. oneDNN's own threading cuts K for some
// shapes (one row, K >= 384: its sums then follow the team's size) and allocates a partition
// table on every threaded call; this cut never cuts K, so each value of C is summed in the
// same order whatever the team, and a steady loop allocates nothing.
void run_sgemm(const OnednnGemm& g, int threads) {
  const int team = gemm_team(g.M, g.N, g.K, threads);
  std::atomic<int> failed{int(dnnl_success)};
  const auto block = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const dnnl_status_t s = sgemm_block(g, r0, r1, c0, c1);
    if (s != dnnl_success) failed.store(int(s));
    else if (g.ep) epilogue_on(*g.ep, g.C, g.ldc, r0, r1, c0, c1);
  };
#ifdef _OPENMP
  const int before = omp_get_max_threads();  // dnnl_sgemm alone would thread itself on it
  const bool serial = team <= 1 && before != 1 && !omp_in_parallel();
  if (serial) omp_set_num_threads(1);
  for_each_gemm_block(g.M, g.N, team, block);
  if (serial) omp_set_num_threads(before);
#else
  for_each_gemm_block(g.M, g.N, team, block);
#endif
  const dnnl_status_t status = dnnl_status_t(failed.load());
  HEED_CHECK(status == dnnl_success, "gemm", "oneDNN's dnnl_sgemm failed with status ",
             int(status), " (", shapes(g), ")");
}

// The kernel oneDNN picks for a typical product in `type`, or "" when it has none.
std::string kernel_for(dt type) {
  std::lock_guard<std::mutex> making(cache().making);  // as lookup: one primitive made at a time
  try {
    const memory::desc a({256, 256}, type, memory::dims{256, 1});
    const memory::desc c({256, 256}, dt::f32, memory::dims{256, 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, a, c), engine());
    return pd.impl_info_str();
  } catch (const dnnl::error&) {
    return "";
  }
}

}  // namespace

OnednnRoute onednn_route_for(const OnednnGemm& g) {
  if (g.bf16 || g.batch > 1) return OnednnRoute::primitive;  // dnnl_sgemm has no bf16, no batch
  const OnednnRoute forced = cache().route.load(std::memory_order_relaxed);
  return forced == OnednnRoute::automatic ? OnednnRoute::sgemm : forced;
}

OnednnRoute onednn_last_route() { return t_last_route; }

int64_t onednn_amx_runs() { return t_amx_runs; }

void onednn_gemm(const OnednnGemm& g) {
  HEED_CHECK(g.batch <= 1 || (!g.ep && g.batch_c > 0 && g.batch_a >= 0 && g.batch_b >= 0), "gemm",
             "a batch of products takes no epilogue and distinct C's (", shapes(g), ")");
  setup();
  try {
    const OnednnRoute route = onednn_route_for(g);
    const int threads = gemm_threads();  // oneDNN runs on the calling thread's omp_get_max_threads()
    if (route == OnednnRoute::primitive)
      run_primitive(*lookup(g, threads), g);
    else
      run_sgemm(g, threads);
    t_last_route = route;
  } catch (const dnnl::error& e) {
    fail("gemm", "oneDNN refused the product (", shapes(g), "): ", e.what());
  }
}

void set_onednn_route(OnednnRoute route) { cache().route.store(route, std::memory_order_relaxed); }

std::size_t onednn_cached_primitives() {
  Cache& c = cache();
  std::lock_guard<std::mutex> hold(c.lock);
  return c.entries.size();
}

void onednn_clear_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> hold(c.lock);
  c.entries.clear();
  c.lru.clear();
}

bool onednn_has_bf16() {
  static const bool has = !kernel_for(dt::bf16).empty();
  return has;
}

std::string onednn_describe() {
  const dnnl_version_t* v = dnnl_version();
  const std::string f32 = kernel_for(dt::f32), bf16 = kernel_for(dt::bf16);
  std::ostringstream os;
  os << "oneDNN " << v->major << "." << v->minor << "." << v->patch << " (f32 matmul: "
     << (f32.empty() ? "none on this CPU" : f32)
     << "; bf16 matmul: " << (bf16.empty() ? "none on this CPU" : bf16) << ")";
  return os.str();
}

}  // namespace heed::detail
