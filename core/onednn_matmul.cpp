#include "onednn_matmul.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

#include "allocator.h"
#include "cpu.h"
#include "error.h"
#include "parallel.h"

namespace heed::detail {
namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;

// Everything a primitive is made for: bf16 | trans_a << 1 | trans_b << 2, the sizes, and
// alpha and beta by their bits (a NaN is a key too). Eight int64s, no padding, so that it is
// compared and hashed as bytes.
struct Key {
  int64_t flags, M, N, K, lda, ldb, ldc, scales;
  bool operator==(const Key& o) const { return std::memcmp(this, &o, sizeof(Key)) == 0; }
};

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

Key key_of(const OnednnGemm& g) {
  return Key{int64_t(g.bf16) | int64_t(g.trans_a) << 1 | int64_t(g.trans_b) << 2,
             g.M, g.N, g.K, g.lda, g.ldb, g.ldc,
             int64_t(uint64_t(bits(g.alpha)) << 32 | bits(g.beta))};
}

struct KeyHash {
  std::size_t operator()(const Key& k) const {  // FNV-1a over the key's bytes
    const auto* p = reinterpret_cast<const unsigned char*>(&k);
    std::size_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < sizeof k; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
  }
};

// A primitive and the memory layouts it was made for.
struct Prepared {
  dnnl::matmul prim;
  memory::desc a, b, c, scratch;
  bool same_as_sgemm = false;  // its kernel is the gemm:jit that dnnl_sgemm runs
};

// What the cache knows of a key: seen once (prepared == nullptr), or its primitive.
struct Entry {
  std::shared_ptr<const Prepared> prepared;
  std::list<Key>::iterator age;  // position in Cache::lru
};

struct Cache {
  std::mutex lock;
  std::unordered_map<Key, Entry, KeyHash> entries;
  std::list<Key> lru;  // most recently used first
  OnednnRoute route = OnednnRoute::automatic;
};

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
  return os.str();
}

// A (M, K) matrix stored as given: rows ld apart, or transposed ((K, M) stored, rows ld
// apart), which is the (M, K) matrix with strides (1, ld).
memory::desc matrix(int64_t rows, int64_t cols, dt type, bool transposed, int64_t ld) {
  return memory::desc({rows, cols}, type, transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

std::shared_ptr<const Prepared> prepare(const OnednnGemm& g) {
  auto p = std::make_shared<Prepared>();
  const dt in = g.bf16 ? dt::bf16 : dt::f32;
  p->a = matrix(g.M, g.K, in, g.trans_a, g.lda);
  p->b = matrix(g.K, g.N, in, g.trans_b, g.ldb);
  p->c = matrix(g.M, g.N, dt::f32, false, g.ldc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (g.alpha != 1) attr.set_output_scales(0, {g.alpha});
  if (g.beta != 0) {  // C = alpha A B + beta C: oneDNN's sum post-op reads C before writing it
    dnnl::post_ops ops;
    ops.append_sum(g.beta);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a, p->b, p->c), attr, engine());
  p->scratch = pd.scratchpad_desc();
  p->same_as_sgemm = !g.bf16 && std::string(pd.impl_info_str()).rfind("gemm:", 0) == 0;
  p->prim = dnnl::matmul(pd);
  return p;
}

// A new entry for k (nothing made yet), the least recently used one dropped when full. Under
// c.lock.
std::unordered_map<Key, Entry, KeyHash>::iterator remember(Cache& c, const Key& k) {
  if (c.entries.size() >= kCacheCapacity) {
    c.entries.erase(c.lru.back());
    c.lru.pop_back();
  }
  c.lru.push_front(k);
  return c.entries.emplace(k, Entry{nullptr, c.lru.begin()}).first;
}

// The primitive for g, or nullptr when g should run on dnnl_sgemm.
std::shared_ptr<const Prepared> lookup(const OnednnGemm& g) {
  Cache& c = cache();
  const Key k = key_of(g);
  std::unique_lock<std::mutex> hold(c.lock);
  const OnednnRoute route = g.bf16 ? OnednnRoute::primitive : c.route;
  if (route == OnednnRoute::sgemm) return nullptr;
  if (route == OnednnRoute::automatic && g.M == 1) return nullptr;  // a matrix-vector product
  auto it = c.entries.find(k);
  if (it != c.entries.end()) {
    c.lru.splice(c.lru.begin(), c.lru, it->second.age);
    if (it->second.prepared) {
      const auto& p = it->second.prepared;
      return route == OnednnRoute::automatic && p->same_as_sgemm ? nullptr : p;
    }
  } else if (route == OnednnRoute::automatic) {  // first sighting: sgemm, remember the shape
    remember(c, k);
    return nullptr;
  }
  hold.unlock();  // making a primitive takes long: other threads' GEMMs go on meanwhile
  std::shared_ptr<const Prepared> p = prepare(g);
  hold.lock();
  it = c.entries.find(k);
  if (it == c.entries.end()) it = remember(c, k);
  it->second.prepared = p;
  return route == OnednnRoute::automatic && p->same_as_sgemm ? nullptr : p;
}

void run_primitive(const Prepared& p, const OnednnGemm& g) {
  dnnl::engine& e = engine();
  const std::size_t scratch_bytes = p.scratch.get_size();
  void* scratch = scratch_bytes ? alloc::allocate(scratch_bytes) : nullptr;
  struct Free {
    void* p;
    std::size_t n;
    ~Free() {
      if (p) alloc::deallocate(p, n);
    }
  } free_scratch{scratch, scratch_bytes};
  const memory a(p.a, e, const_cast<void*>(g.A)), b(p.b, e, const_cast<void*>(g.B)),
      c(p.c, e, g.C), s(p.scratch, e, scratch);
  dnnl::stream& st = stream();
  p.prim.execute(st, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c},
                      {DNNL_ARG_SCRATCHPAD, s}});
  st.wait();
}

void run_sgemm(const OnednnGemm& g) {
  const dnnl_status_t status =
      dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.M, g.N, g.K, g.alpha,
                 static_cast<const float*>(g.A), g.lda, static_cast<const float*>(g.B), g.ldb,
                 g.beta, g.C, g.ldc);
  HEED_CHECK(status == dnnl_success, "gemm", "oneDNN's dnnl_sgemm failed with status ",
             int(status), " (", shapes(g), ")");
}

// The kernel oneDNN picks for a typical product in `type`, or "" when it has none.
std::string kernel_for(dt type) {
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

void onednn_gemm(const OnednnGemm& g) {
  setup();
  try {
    std::shared_ptr<const Prepared> p = lookup(g);
    threads_now();  // oneDNN runs on the calling thread's omp_get_max_threads() threads
    if (p)
      run_primitive(*p, g);
    else
      run_sgemm(g);
  } catch (const dnnl::error& e) {
    fail("gemm", "oneDNN refused the product (", shapes(g), "): ", e.what());
  }
}

void set_onednn_route(OnednnRoute route) {
  Cache& c = cache();
  std::lock_guard<std::mutex> hold(c.lock);
  c.route = route;
}

std::size_t onednn_cached_primitives() {
  Cache& c = cache();
  std::lock_guard<std::mutex> hold(c.lock);
  std::size_t n = 0;
  for (const auto& [k, e] : c.entries) n += e.prepared != nullptr;
  return n;
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
