// A growable array of ids on malloc/realloc. Search results can run to
// gigabytes; glibc grows large blocks with mremap, so growing never copies
// what was already written (std::vector would copy it on every doubling).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "egraph/id.h"

namespace sator::eg {

class IdBuffer {
 public:
  IdBuffer() = default;
  IdBuffer(const IdBuffer& o) { *this = o; }
  IdBuffer(IdBuffer&& o) noexcept { swap(o); }
  IdBuffer& operator=(const IdBuffer& o) {
    if (this != &o) {
      clear();
      std::memcpy(grow(o.size_), o.data_, o.size_ * sizeof(Id));
    }
    return *this;
  }
  IdBuffer& operator=(IdBuffer&& o) noexcept {
    swap(o);
    return *this;
  }
  ~IdBuffer() { std::free(data_); }
  void swap(IdBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }

  // Appends n uninitialized ids; returns where they start.
  Id* grow(size_t n) {
    if (size_ + n > cap_) reserve(std::max(size_ + n, cap_ * 2 + 64));
    Id* p = data_ + size_;
    size_ += n;
    return p;
  }
  void push_back(Id v) { *grow(1) = v; }
  void reserve(size_t n) {
    if (n <= cap_) return;
    void* p = std::realloc(data_, n * sizeof(Id));
    if (!p) throw std::bad_alloc();
    data_ = static_cast<Id*>(p);
    cap_ = n;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  Id* data() { return data_; }
  const Id* data() const { return data_; }
  Id operator[](size_t i) const { return data_[i]; }
  const Id* begin() const { return data_; }
  const Id* end() const { return data_ + size_; }

 private:
  Id* data_ = nullptr;
  size_t size_ = 0, cap_ = 0;
};

}  // namespace sator::eg
