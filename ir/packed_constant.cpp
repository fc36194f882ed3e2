#include "ir/packed_constant.h"

namespace sator {

namespace {

bool pack_leaves(const JsonRef& v, PackedNumbers& p) {
  if (v.is_array()) {
    for (size_t k = 0; k < v.size(); ++k)
      if (!pack_leaves(v[k], p)) return false;
    return true;
  }
  switch (p.leaf) {
    case PackedNumbers::Leaf::Bool:
      if (!v.is_bool()) return false;
      p.ints.push_back(v.as_bool() ? 1 : 0);
      return true;
    case PackedNumbers::Leaf::Int:
      if (!v.is_int() || v.int_overflow()) return false;
      p.ints.push_back(v.as_int());
      return true;
    case PackedNumbers::Leaf::Float:
      if (v.type() != JsonRef::Type::Float) return false;
      p.floats.push_back(v.as_double());
      return true;
  }
  return false;
}

}  // namespace

std::shared_ptr<const PackedNumbers> pack_constant(const JsonRef& value) {
  auto p = std::make_shared<PackedNumbers>();
  JsonRef first = value;
  while (first.is_array()) {
    if (first.size() == 0) return nullptr;
    p->dims.push_back(static_cast<int64_t>(first.size()));
    first = first[0];
  }
  if (first.is_bool()) p->leaf = PackedNumbers::Leaf::Bool;
  else if (first.is_int()) p->leaf = PackedNumbers::Leaf::Int;
  else if (first.type() == JsonRef::Type::Float) p->leaf = PackedNumbers::Leaf::Float;
  else return nullptr;
  if (!pack_leaves(value, *p)) return nullptr;
  return p;
}

}  // namespace sator
