// block_layout.cpp - building a block layout from a rule, and the generators.
//
// Every layout is built the same way (build, below): a block-level rule says which blocks may
// hold a visible entry (cheap, one test per block), the token-level rule is then read on
// those blocks only; a block with no visible entry is dropped, one with some keeps its mask.
// So a generator's cost is O(blocks + kept blocks * b^2), never O(T^2) unless the layout is.
#include "block_layout.h"

#include <algorithm>
#include <new>
#include <string>
#include <unordered_map>

#include "../../../core/error.h"
#include "../../../core/random.h"
#include "sliding_window_attention.h"

namespace heed {

namespace {

// First row (or column) of block I and its length, for a length T cut into blocks of b.
int64_t block_len(int64_t I, int64_t b, int64_t T) { return std::min(b, T - I * b); }

// ceil(T / b) without the overflow of (T + b - 1) / b; T >= 0, b >= 1.
int64_t blocks_of(int64_t T, int64_t b) { return T / b + (T % b != 0); }

// The largest grid (heads x query blocks x key blocks) and partial-block mask (b * b bytes) a
// layout is built for; past them a generator would spin for minutes or fail to allocate.
constexpr int64_t kMaxGridBlocks = int64_t(1) << 31;
constexpr int64_t kMaxMaskBytes = int64_t(1) << 24;  // block <= 4096

// Sizes every layout checks before it allocates or loops: b >= 1, Tq, Tk >= 0, heads >= 1,
// and the block grid and a block's mask within the limits above. Returns nothing: throws.
void check_sizes(const char* op, int64_t Tq, int64_t Tk, int64_t b, int64_t heads) {
  HEED_CHECK(b >= 1, op, "block must be >= 1, got ", b);
  HEED_CHECK(Tq >= 0 && Tk >= 0, op, "lengths must be >= 0, got Tq ", Tq, ", Tk ", Tk);
  HEED_CHECK(heads >= 1, op, "heads must be >= 1, got ", heads);
  HEED_CHECK(b <= kMaxMaskBytes / b, op, "block ", b, " is too large: a partial block's mask takes "
             "block * block bytes, over the limit of ", kMaxMaskBytes);
  int64_t grid = 0;
  const bool over = __builtin_mul_overflow(heads, blocks_of(Tq, b), &grid) ||
                    __builtin_mul_overflow(grid, blocks_of(Tk, b), &grid) || grid > kMaxGridBlocks;
  HEED_CHECK(!over, op, "Tq ", Tq, ", Tk ", Tk, " in blocks of ", b, " over ", heads,
             " head(s) make more than ", kMaxGridBlocks, " blocks: use a larger block or shorter "
             "sequences");
}

// The layout whose kept blocks are those with a visible entry: block_may(h, I, J) must hold
// for every block with one (it may hold for more), visible(h, i, j) is the token-level rule.
template <class BlockMay, class Visible>
BlockLayout build_checked(const char* op, int64_t Tq, int64_t Tk, int64_t b, int64_t heads,
                          const BlockMay& block_may, const Visible& visible) {
  auto d = std::make_shared<BlockLayout::Data>();
  d->Tq = Tq, d->Tk = Tk, d->block = b, d->heads = heads;
  d->nq = blocks_of(Tq, b), d->nk = blocks_of(Tk, b);
  std::unordered_map<std::string, int32_t> seen;  // a partial mask's bytes -> its index
  std::string m(size_t(b * b), '\0');
  d->row_start.push_back(0);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t I = 0; I < d->nq; ++I) {
      for (int64_t J = 0; J < d->nk; ++J) {
        if (!block_may(h, I, J)) continue;
        const int64_t br = block_len(I, b, Tq), bc = block_len(J, b, Tk);
        int64_t n = 0;
        std::fill(m.begin(), m.end(), '\0');
        for (int64_t r = 0; r < br; ++r)
          for (int64_t c = 0; c < bc; ++c)
            if (visible(h, I * b + r, J * b + c)) m[size_t(r * b + c)] = 1, ++n;
        if (n == 0) continue;  // dropped
        int32_t index = -1;    // full
        if (n < br * bc) {
          auto [it, fresh] = seen.emplace(m, int32_t(seen.size()));
          if (fresh) d->masks.insert(d->masks.end(), m.begin(), m.end());
          index = it->second;
        }
        d->cols.push_back(J);
        d->mask_of.push_back(index);
      }
      d->row_start.push_back(int64_t(d->cols.size()));
    }
  // the same blocks by (head, key block): count, then place in row order (I ascending)
  d->col_start.assign(size_t(heads * d->nk + 1), 0);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t I = 0; I < d->nq; ++I)
      for (int64_t e = d->row_start[h * d->nq + I]; e < d->row_start[h * d->nq + I + 1]; ++e)
        ++d->col_start[h * d->nk + d->cols[e] + 1];
  for (size_t s = 1; s < d->col_start.size(); ++s) d->col_start[s] += d->col_start[s - 1];
  d->rows.resize(d->cols.size());
  std::vector<int64_t> next(d->col_start.begin(), d->col_start.end() - 1);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t I = 0; I < d->nq; ++I)
      for (int64_t e = d->row_start[h * d->nq + I]; e < d->row_start[h * d->nq + I + 1]; ++e)
        d->rows[next[h * d->nk + d->cols[e]]++] = I;
  return BlockLayout(std::move(d));
}

template <class BlockMay, class Visible>
BlockLayout build(const char* op, int64_t Tq, int64_t Tk, int64_t b, int64_t heads,
                  const BlockMay& block_may, const Visible& visible) {
  check_sizes(op, Tq, Tk, b, heads);
  try {
    return build_checked(op, Tq, Tk, b, heads, block_may, visible);
  } catch (const std::bad_alloc&) {
    fail(op, "out of memory for a layout of Tq ", Tq, ", Tk ", Tk, ", block ", b, ", ", heads,
         " head(s)");
  }
}

// The first and last token of block I.
int64_t first_of(int64_t I, int64_t b) { return I * b; }
int64_t last_of(int64_t I, int64_t b, int64_t T) { return std::min(T, I * b + b) - 1; }

// Whether some (i, j) of block (I, J) lies in the window |i - j| <= w (causal: 0 <= i - j).
bool window_meets(int64_t I, int64_t J, int64_t b, int64_t T, int64_t w, bool causal) {
  const int64_t i0 = first_of(I, b), i1 = last_of(I, b, T);
  const int64_t j0 = first_of(J, b), j1 = last_of(J, b, T);
  if (causal && j0 > i1) return false;
  return j0 - i1 <= w && i0 - j1 <= w;
}

}  // namespace

BlockLayout BlockLayout::from_pattern(const Tensor& pattern, int64_t block) {
  constexpr const char* op = "BlockLayout::from_pattern";
  HEED_CHECK(pattern.defined() && (pattern.dim() == 2 || pattern.dim() == 3), op,
             "the pattern must be (Tq, Tk) or (heads, Tq, Tk), got ",
             pattern.defined() ? pattern.shape() : Shape{});
  const Tensor p = pattern.contiguous();
  const real* v = p.data();
  for (int64_t e = 0; e < p.numel(); ++e)
    HEED_CHECK(v[e] == 0 || v[e] == 1, op, "the pattern must hold only 0 and 1 (1 = may attend), found ",
               v[e]);
  const int64_t H = p.dim() == 3 ? p.size(0) : 1, Tq = p.size(-2), Tk = p.size(-1);
  HEED_CHECK(H >= 1, op, "the pattern has no heads: ", p.shape());
  return build(op, Tq, Tk, block, H, [](int64_t, int64_t, int64_t) { return true; },
               [=](int64_t h, int64_t i, int64_t j) { return v[(h * Tq + i) * Tk + j] != 0; });
}

const BlockLayout::Data& BlockLayout::data(const char* what) const {
  HEED_CHECK(d_, "BlockLayout", what, " of an undefined layout (default-constructed: no layout); "
             "build one with BlockLayout::from_pattern or a generator (strided_layout, ...)");
  return *d_;
}

int64_t BlockLayout::row(const char* what, int64_t h, const char* which, int64_t I, int64_t n) const {
  const Data& d = data(what);
  HEED_CHECK(h >= 0 && (d.heads == 1 || h < d.heads), "BlockLayout", what, ": head ", h,
             " is outside [0, ", d.heads == 1 ? std::string("any") : std::to_string(d.heads), ")");
  HEED_CHECK(I >= 0 && I < n, "BlockLayout", what, ": block ", which, " = ", I, " is outside [0, ",
             n, ")");
  return (d.heads == 1 ? 0 : h) * n + I;
}

int64_t BlockLayout::partial_blocks() const {
  const Data& d = data("partial_blocks()");
  return int64_t(std::count_if(d.mask_of.begin(), d.mask_of.end(), [](int32_t m) { return m >= 0; }));
}

double BlockLayout::density() const {
  const Data& d = data("density()");
  if (d.Tq == 0 || d.Tk == 0) return 0;
  double area = 0;
  for (int64_t h = 0; h < d.heads; ++h)
    for (int64_t I = 0; I < d.nq; ++I)
      for (int64_t J : key_blocks(h, I))
        area += double(block_len(I, d.block, d.Tq)) * double(block_len(J, d.block, d.Tk));
  return area / (double(d.heads) * double(d.Tq) * double(d.Tk));
}

BlockLayout::Span BlockLayout::key_blocks(int64_t h, int64_t I) const {
  const int64_t r = row("key_blocks", h, "I", I, q_blocks());
  return {d_->cols.data() + d_->row_start[r], d_->cols.data() + d_->row_start[r + 1]};
}

BlockLayout::Span BlockLayout::query_blocks(int64_t h, int64_t J) const {
  const int64_t c = row("query_blocks", h, "J", J, k_blocks());
  return {d_->rows.data() + d_->col_start[c], d_->rows.data() + d_->col_start[c + 1]};
}

bool BlockLayout::kept(int64_t h, int64_t I, int64_t J) const {
  row("kept", h, "J", J, k_blocks());
  const Span s = key_blocks(h, I);
  return std::binary_search(s.begin(), s.end(), J);
}

const uint8_t* BlockLayout::block_mask(int64_t h, int64_t I, int64_t J) const {
  row("block_mask", h, "J", J, k_blocks());
  const Span s = key_blocks(h, I);
  const int64_t* at = std::lower_bound(s.begin(), s.end(), J);
  if (at == s.end() || *at != J) return nullptr;
  const int32_t m = d_->mask_of[at - d_->cols.data()];
  return m < 0 ? nullptr : d_->masks.data() + size_t(m) * size_t(d_->block * d_->block);
}

Tensor BlockLayout::pattern() const {
  const Data& d = data("pattern()");
  const int64_t b = d.block;
  Tensor p = d.heads == 1 ? zeros({d.Tq, d.Tk}) : zeros({d.heads, d.Tq, d.Tk});
  real* out = p.data();
  for (int64_t h = 0; h < d.heads; ++h)
    for (int64_t I = 0; I < d.nq; ++I)
      for (int64_t J : key_blocks(h, I)) {
        const uint8_t* m = block_mask(h, I, J);
        for (int64_t r = 0; r < block_len(I, b, d.Tq); ++r)
          for (int64_t c = 0; c < block_len(J, b, d.Tk); ++c)
            out[(h * d.Tq + I * b + r) * d.Tk + J * b + c] = !m || m[r * b + c] ? real(1) : real(0);
      }
  return p;
}

// Block-level rules, then the token rule: inside a kept block, j <= i when causal.

BlockLayout strided_layout(int64_t T, int64_t b, int64_t local, int64_t stride, bool causal) {
  constexpr const char* op = "strided_layout";
  HEED_CHECK(local >= 0 && stride >= 1, op, "need local >= 0 and stride >= 1 (in blocks), got local ",
             local, ", stride ", stride);
  auto keep = [=](int64_t I, int64_t J) {
    const int64_t d = I - J, a = d < 0 ? -d : d;
    return (!causal || d >= 0) && (a <= local || a % stride == 0);
  };
  return build(op, T, T, b, 1, [=](int64_t, int64_t I, int64_t J) { return keep(I, J); },
               [=](int64_t, int64_t i, int64_t j) { return keep(i / b, j / b) && (!causal || j <= i); });
}

BlockLayout fixed_layout(int64_t T, int64_t b, int64_t l, int64_t c, bool causal) {
  constexpr const char* op = "fixed_layout";
  HEED_CHECK(l >= 1 && c >= 0 && c <= l, op, "need l >= 1 and 0 <= c <= l (in blocks), got l ", l,
             ", c ", c);
  auto keep = [=](int64_t I, int64_t J) { return (!causal || J <= I) && (J / l == I / l || J % l >= l - c); };
  return build(op, T, T, b, 1, [=](int64_t, int64_t I, int64_t J) { return keep(I, J); },
               [=](int64_t, int64_t i, int64_t j) { return keep(i / b, j / b) && (!causal || j <= i); });
}

BlockLayout sliding_window_layout(int64_t T, int64_t b, int64_t w, bool causal) {
  constexpr const char* op = "sliding_window_layout";
  HEED_CHECK(w >= 0, op, "window must be >= 0, got ", w);
  return build(op, T, T, b, 1,
               [=](int64_t, int64_t I, int64_t J) { return window_meets(I, J, b, T, w, causal); },
               [=](int64_t, int64_t i, int64_t j) { return in_window(i, j, T, w, causal); });
}

BlockLayout longformer_layout(int64_t T, int64_t b, int64_t w, const std::vector<int64_t>& globals,
                              bool causal) {
  constexpr const char* op = "longformer_layout";
  HEED_CHECK(w >= 0, op, "need window >= 0, got ", w);
  check_sizes(op, T, T, b, 1);  // before the per-token tables
  std::vector<char> global(size_t(std::max<int64_t>(T, 0)), 0), global_block(size_t(std::max<int64_t>(T, 0) / b + 1), 0);
  for (int64_t g : globals) {
    HEED_CHECK(g >= 0 && g < T, op, "global token ", g, " is outside [0, ", T, ")");
    global[g] = 1, global_block[g / b] = 1;
  }
  return build(op, T, T, b, 1,
               [&](int64_t, int64_t I, int64_t J) {
                 return window_meets(I, J, b, T, w, causal) ||
                        ((global_block[I] || global_block[J]) && (!causal || J <= I));
               },
               [&](int64_t, int64_t i, int64_t j) {
                 return in_window(i, j, T, w, causal) || ((global[i] || global[j]) && (!causal || j <= i));
               });
}

BlockLayout bigbird_layout(int64_t T, int64_t b, int64_t w, int64_t g, int64_t r, bool causal,
                           int64_t heads) {
  constexpr const char* op = "bigbird_layout";
  HEED_CHECK(w >= 0 && g >= 0 && r >= 0 && heads >= 1 && b >= 1 && T >= 0, op,
             "need window, global and random blocks >= 0, heads >= 1, block >= 1, T >= 0; got w ", w,
             ", g ", g, ", r ", r, ", heads ", heads, ", block ", b, ", T ", T);
  check_sizes(op, T, T, b, heads);  // before the (heads, n, n) table
  const int64_t n = blocks_of(T, b);
  auto fixed = [=](int64_t I, int64_t J) { return (J > I ? J - I : I - J) <= w || I < g || J < g; };
  // r random key blocks per (head, query block) among those the window and globals leave,
  // a partial Fisher-Yates shuffle on heed's generator
  std::vector<char> random(size_t(heads * n * n), 0);
  {
    Draws draw;
    std::vector<int64_t> free;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t I = g; I < n; ++I) {
        free.clear();
        for (int64_t J = 0; J < (causal ? I + 1 : n); ++J)
          if (!fixed(I, J)) free.push_back(J);
        for (int64_t k = 0; k < std::min<int64_t>(r, int64_t(free.size())); ++k) {
          const int64_t pick = k + std::min<int64_t>(int64_t(draw.uniform() * double(free.size() - k)),
                                                     int64_t(free.size()) - k - 1);
          std::swap(free[k], free[pick]);
          random[size_t((h * n + I) * n + free[k])] = 1;
        }
      }
  }
  auto keep = [&](int64_t h, int64_t I, int64_t J) {
    return (!causal || J <= I) && (fixed(I, J) || random[size_t((h * n + I) * n + J)]);
  };
  return build(op, T, T, b, heads, keep, [&](int64_t h, int64_t i, int64_t j) {
    return keep(h, i / b, j / b) && (!causal || j <= i);
  });
}

}  // namespace heed
