// node_list.h - NodeList, a Node's edges (node.h): the small vector that holds them.
#pragma once
#include <cstdint>
#include <iterator>
#include <memory>
#include <utility>

namespace heed {

struct Node;

// A Node's edges: the producer of each input. Most ops have one or two inputs, so up to two
// edges live inside the Node itself: recording such an op costs no allocation for its edge
// list, and the engine finds a node's edges in the node's own cache lines. Ops with more
// inputs (cat, stack, layer norm) keep them in an array from the caching allocator.
// Only what the engine needs: push_back, indexing and iteration.
class NodeList {
 public:
  using Edge = std::shared_ptr<Node>;
  NodeList() = default;
  NodeList(const NodeList&) = delete;
  NodeList& operator=(const NodeList&) = delete;
  ~NodeList() { clear(); }

  void reserve(std::size_t n) { while (cap_ < n) grow(); }
  void push_back(Edge e) {
    if (n_ == cap_) grow();
    data()[n_++] = std::move(e);
  }
  void clear();  // drop every edge (and the heap array)
  std::size_t size() const { return n_; }
  Edge& operator[](std::size_t i) { return data()[i]; }
  const Edge& operator[](std::size_t i) const { return data()[i]; }
  Edge* begin() { return data(); }
  Edge* end() { return data() + n_; }
  const Edge* begin() const { return data(); }
  const Edge* end() const { return data() + n_; }
  std::reverse_iterator<const Edge*> rbegin() const { return std::reverse_iterator<const Edge*>(end()); }
  std::reverse_iterator<const Edge*> rend() const { return std::reverse_iterator<const Edge*>(begin()); }

 private:
  static constexpr std::size_t kInline = 2;
  Edge* data() { return heap_ ? heap_ : inline_; }
  const Edge* data() const { return heap_ ? heap_ : inline_; }
  void grow();  // double the capacity, moving the edges to a new heap array

  Edge inline_[kInline];
  Edge* heap_ = nullptr;  // cap_ edges when more than kInline were needed
  std::uint32_t n_ = 0, cap_ = kInline;
};

}  // namespace heed
