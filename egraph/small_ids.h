// A vector of ids that keeps up to two inline: most e-classes hold one or two
// nodes and have few parents, so classes need no heap block of their own.
// 16 bytes, against 24 for std::vector plus a malloc'd block.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <utility>

#include "egraph/id.h"

namespace sator::eg {

class SmallIds {
 public:
  SmallIds() = default;
  explicit SmallIds(Id first) : size_(1) { inline_[0] = first; }
  SmallIds(const SmallIds&) = delete;
  SmallIds& operator=(const SmallIds&) = delete;
  SmallIds(SmallIds&& o) noexcept { steal(o); }
  SmallIds& operator=(SmallIds&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallIds() { release(); }

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t capacity() const { return cap_; }
  bool on_heap() const { return cap_ > kInline; }
  Id* data() { return on_heap() ? heap_ : inline_; }
  const Id* data() const { return on_heap() ? heap_ : inline_; }
  Id* begin() { return data(); }
  Id* end() { return data() + size_; }
  const Id* begin() const { return data(); }
  const Id* end() const { return data() + size_; }
  Id front() const { return data()[0]; }
  Id operator[](size_t i) const { return data()[i]; }
  operator std::span<const Id>() const { return {data(), size_}; }

  void push_back(Id v) {
    if (size_ == cap_) grow(size_ + 1);
    data()[size_++] = v;
  }
  void append(const SmallIds& o) {
    if (size_ + o.size_ > cap_) grow(size_ + o.size_);
    std::memcpy(data() + size_, o.data(), o.size_ * sizeof(Id));
    size_ += o.size_;
  }
  void truncate(uint32_t n) { size_ = n; }
  void swap(SmallIds& o) noexcept {
    SmallIds t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }
  template <class Pred>
  uint32_t erase_if(Pred keep_not) {
    Id* d = data();
    uint32_t w = 0;
    for (uint32_t r = 0; r < size_; ++r)
      if (!keep_not(d[r])) d[w++] = d[r];
    const uint32_t removed = size_ - w;
    size_ = w;
    return removed;
  }
  size_t heap_bytes() const { return on_heap() ? cap_ * sizeof(Id) : 0; }

 private:
  static constexpr uint32_t kInline = 2;

  void grow(uint32_t need) {
    uint32_t cap = std::max<uint32_t>(need, cap_ * 2);
    Id* block = static_cast<Id*>(std::malloc(cap * sizeof(Id)));
    if (!block) throw std::bad_alloc();
    std::memcpy(block, data(), size_ * sizeof(Id));
    release();
    heap_ = block;
    cap_ = cap;
  }
  void release() {
    if (on_heap()) std::free(heap_);
    cap_ = kInline;
  }
  void steal(SmallIds& o) {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.on_heap()) heap_ = o.heap_;
    else std::memcpy(inline_, o.inline_, sizeof inline_);
    o.size_ = 0;
    o.cap_ = kInline;
  }

  union {
    Id inline_[kInline];
    Id* heap_;
  };
  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
};

}  // namespace sator::eg
