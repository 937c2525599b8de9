// block_layout.h - which (query block, key block) tiles of the scores a block-sparse attention
// computes: a boolean (ceil(Tq/b), ceil(Tk/b)) grid of blocks of b x b scores, shared by all
// heads or one grid per head, and the generators for the patterns people use.
//
//   block (I, J) holds the scores of queries [I b, I b + b) and keys [J b, J b + b)
//   (the last row and column of blocks are shorter when b does not divide Tq or Tk).
//   kept     the kernel computes the block (autograd/ops/attention/block_sparse_attention.h)
//   dropped  it is never read, computed or stored: its scores are masked out
//   partial  a kept block whose entries are not all 1 keeps its own b x b 0/1 mask
// The pattern a layout stands for, pattern(), is the (Tq, Tk) 0/1 tensor (or (heads, Tq, Tk))
// that is 1 exactly on the visible entries of kept blocks: block-sparse attention with a
// layout equals sparse_attention (dense, masked) with its pattern, which is how the tests
// check it.
//
// Storage, proportional to the kept blocks: for each (head, query block) the ascending list
// of its kept key blocks, the same per (head, key block) for the backward's column walks, and
// one b x b byte mask per distinct partial block (a generator's diagonal blocks share one).
//
// Sizes: a layout holds a grid of heads * ceil(Tq/b) * ceil(Tk/b) blocks and a b x b byte
// mask per distinct partial block; from_pattern and the generators refuse (heed::Error naming
// the generator and the sizes) a grid over 2^31 blocks or b * b over 2^31 bytes, before
// allocating or looping, instead of overflowing, spinning or throwing std::bad_alloc.
// Copying: a BlockLayout is an immutable value; a copy shares the (read-only) blocks and the
// tiles_visited() counter. A throwing call changes nothing.
//
// Generators (T x T, block b; I, J block indices, i, j token positions; causal keeps only
// j <= i, so a causal layout's diagonal blocks are partial, lower-triangular). Child et al.
// 2019, "Generating Long Sequences with Sparse Transformers", define strided and fixed for
// token positions and run them on blocks; here they are written on blocks directly:
//   strided_layout(T, b, local, stride)   J in [I - local, I], or I - J a multiple of stride
//                                         (non-causal: |I - J| <= local or |I - J| % stride = 0)
//                                         local = stride = l is Child et al.'s strided pattern
//   fixed_layout(T, b, l, c)              J / l = I / l (the own window of l blocks), or J in
//                                         the last c blocks of its window (the summaries)
//   sliding_window_layout(T, b, w)        tokens |i - j| <= w (causal: 0 <= i - j <= w); the
//                                         band's edge blocks are partial
//   longformer_layout(T, b, w, globals)   the window, plus global tokens that see and are
//                                         seen by every token (Beltagy et al. 2020, sec. 3.1)
//   bigbird_layout(T, b, w, g, r)         blocks |I - J| <= w, the first g blocks global (rows
//                                         and columns), and r random key blocks per query
//                                         block, drawn from heed's generator (manual_seed
//                                         repeats them), per head (Zaheer et al. 2020, "Big
//                                         Bird", sec. 2 and appendix D)
// and from_pattern(pattern, b) for any 0/1 pattern: a block is kept when any entry is 1.
//
// Example:
//   BlockLayout L = strided_layout(16384, 64, 7, 16);        // about 6% of the scores
//   Tensor o = heed::block_sparse_attention(q, k, v, L, AttentionMask().causal());
//   std::printf("%.3f\n", L.density());
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "../../../core/tensor.h"

namespace heed {

class BlockLayout {
 public:
  BlockLayout() = default;  // undefined: no layout (every block, as in dense attention)

  // A block is kept when any of its entries is 1; a kept block with a 0 keeps its mask.
  // pattern (Tq, Tk) shared by every head, or (heads, Tq, Tk); 0/1 values; block >= 1.
  static BlockLayout from_pattern(const Tensor& pattern, int64_t block);

  // Every accessor below is a heed::Error naming BlockLayout on an undefined layout, and
  // every index is checked: h in [0, heads()) (any h >= 0 when shared), I in
  // [0, q_blocks()), J in [0, k_blocks()); no negative index counts from the end.
  bool defined() const { return d_ != nullptr; }
  int64_t block() const { return data("block()").block; }
  int64_t q_len() const { return data("q_len()").Tq; }
  int64_t k_len() const { return data("k_len()").Tk; }
  int64_t heads() const { return data("heads()").heads; }  // 1: shared by every head
  int64_t q_blocks() const { return data("q_blocks()").nq; }
  int64_t k_blocks() const { return data("k_blocks()").nk; }
  int64_t kept_blocks() const { return int64_t(data("kept_blocks()").cols.size()); }  // over all heads
  int64_t partial_blocks() const;
  // The fraction of the scores in kept blocks, what the kernel computes: sum of the kept
  // blocks' areas / (heads Tq Tk). Near the fraction of kept blocks when b divides T.
  double density() const;

  // A sorted list of block indices, read with a range for.
  struct Span {
    const int64_t *first, *last;
    const int64_t* begin() const { return first; }
    const int64_t* end() const { return last; }
    int64_t size() const { return last - first; }
  };
  // head h (any h when shared); the kept key blocks of query block I, ascending
  Span key_blocks(int64_t h, int64_t I) const;
  // the query blocks that keep key block J, ascending
  Span query_blocks(int64_t h, int64_t J) const;
  bool kept(int64_t h, int64_t I, int64_t J) const;
  // A kept partial block's mask, (block, block) bytes row-major, 1 = visible (entries past
  // Tq or Tk are 0); null for a full or dropped block.
  const uint8_t* block_mask(int64_t h, int64_t I, int64_t J) const;

  Tensor pattern() const;  // (Tq, Tk), or (heads, Tq, Tk): the dense reference mask

  // Tiles the kernel has computed with this layout (or a copy of it): one per kept tile per
  // forward, one or two per backward (FlashBackward). For the test that a dropped block is
  // never visited.
  int64_t tiles_visited() const { return data("tiles_visited()").tiles.load(std::memory_order_relaxed); }
  void reset_tiles_visited() const { data("reset_tiles_visited()").tiles.store(0, std::memory_order_relaxed); }
  void count_tile() const { d_->tiles.fetch_add(1, std::memory_order_relaxed); }  // kernel-only, hot

  struct Data {
    int64_t Tq = 0, Tk = 0, block = 1, heads = 1, nq = 0, nk = 0;
    std::vector<int64_t> row_start, cols;  // CSR by (head, query block): kept key blocks
    std::vector<int32_t> mask_of;          // per entry of cols: index into masks, or -1 (full)
    std::vector<int64_t> col_start, rows;  // CSR by (head, key block): kept query blocks
    std::vector<uint8_t> masks;            // the partial blocks' masks, block * block each
    mutable std::atomic<int64_t> tiles{0};
  };
  explicit BlockLayout(std::shared_ptr<Data> d) : d_(std::move(d)) {}

 private:
  const Data& data(const char* what) const;  // *d_, or heed::Error: undefined layout
  // The (head, block) row of the CSR lists, checked: which = "I" (n blocks) or "J".
  int64_t row(const char* what, int64_t h, const char* which, int64_t I, int64_t n) const;
  std::shared_ptr<Data> d_;
};

BlockLayout strided_layout(int64_t T, int64_t block, int64_t local, int64_t stride,
                           bool causal = true);
BlockLayout fixed_layout(int64_t T, int64_t block, int64_t l, int64_t c, bool causal = true);
BlockLayout sliding_window_layout(int64_t T, int64_t block, int64_t w, bool causal = true);
// globals: token positions in [0, T)
BlockLayout longformer_layout(int64_t T, int64_t block, int64_t w,
                              const std::vector<int64_t>& globals, bool causal = false);
// w, g, r in blocks; heads > 1 draws each head's random blocks separately
BlockLayout bigbird_layout(int64_t T, int64_t block, int64_t w, int64_t g, int64_t r,
                           bool causal = false, int64_t heads = 1);

}  // namespace heed
