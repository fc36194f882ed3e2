#include "egraph/hashcons.h"

namespace sator::eg {

uint32_t Hashcons::hash(OpId op, AttrId attr, std::span<const Id> children) {
  // A multiply-xorshift mix per word; children are the bulk of the key.
  uint64_t h = (uint64_t{op} << 32 | attr) * 0x9E3779B97F4A7C15ULL;
  for (Id c : children) {
    h ^= c;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  h ^= h >> 29;
  h *= 0x94D049BB133111EBULL;
  h ^= h >> 32;
  return static_cast<uint32_t>(h);
}

Id Hashcons::find(const NodeStore& store, OpId op, AttrId attr, std::span<const Id> children, uint32_t h) const {
  if (slots_.empty()) return kNoId;
  for (size_t i = h & mask();; i = (i + 1) & mask()) {
    const uint64_t s = slots_[i];
    if (s == kEmpty) return kNoId;
    if (static_cast<uint32_t>(s >> 32) == h && store.equals(static_cast<Id>(s), op, attr, children))
      return static_cast<Id>(s);
  }
}

void Hashcons::insert(Id n, uint32_t h) {
  if ((size_ + 1) * 8 > slots_.size() * 7) grow();  // load factor <= 7/8
  size_t i = h & mask();
  while (slots_[i] != kEmpty) i = (i + 1) & mask();
  slots_[i] = uint64_t{h} << 32 | n;
  ++size_;
}

bool Hashcons::erase(Id n, uint32_t h) {
  if (slots_.empty()) return false;
  size_t i = h & mask();
  for (;; i = (i + 1) & mask()) {
    const uint64_t s = slots_[i];
    if (s == kEmpty) return false;
    if (static_cast<Id>(s) == n && static_cast<uint32_t>(s >> 32) == h) break;
  }
  // Backward-shift deletion: pull later entries of the probe run into the gap.
  size_t gap = i;
  for (size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
    const uint64_t s = slots_[j];
    if (s == kEmpty) break;
    const size_t home = static_cast<uint32_t>(s >> 32) & mask();
    // Move s into the gap unless its home lies cyclically in (gap, j].
    const bool home_after_gap = gap <= j ? (home > gap && home <= j) : (home > gap || home <= j);
    if (!home_after_gap) {
      slots_[gap] = s;
      gap = j;
    }
  }
  slots_[gap] = kEmpty;
  --size_;
  return true;
}

void Hashcons::grow() {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, kEmpty);
  for (uint64_t s : old) {
    if (s == kEmpty) continue;
    size_t i = static_cast<uint32_t>(s >> 32) & mask();
    while (slots_[i] != kEmpty) i = (i + 1) & mask();
    slots_[i] = s;
  }
}

}  // namespace sator::eg
