// A FIFO of ids that holds each id at most once (egg's UniqueQueue).
#pragma once

#include <vector>

#include "egraph/id.h"

namespace sator::eg {

class UniqueQueue {
 public:
  void push(Id id) {
    if (id >= queued_.size()) queued_.resize(static_cast<size_t>(id) * 2 + 16, 0);
    if (queued_[id]) return;
    queued_[id] = 1;
    items_.push_back(id);
  }
  template <class Range>
  void extend(const Range& ids) {
    for (Id id : ids) push(id);
  }
  bool empty() const { return head_ == items_.size(); }
  Id pop() {
    const Id id = items_[head_++];
    queued_[id] = 0;
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    }
    return id;
  }
  // Frees the item buffer when empty (the membership flags stay).
  void release() {
    if (empty() && items_.capacity() > (1u << 16)) items_ = std::vector<Id>();
  }
  size_t memory_bytes() const { return items_.capacity() * sizeof(Id) + queued_.capacity(); }

 private:
  std::vector<Id> items_;
  size_t head_ = 0;
  std::vector<uint8_t> queued_;
};

}  // namespace sator::eg
