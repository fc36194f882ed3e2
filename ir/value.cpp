#include "ir/value.h"

#include <cmath>

namespace sator {

bool PackedNumbers::operator==(const PackedNumbers& o) const {
  if (leaf != o.leaf || dims != o.dims || ints != o.ints || floats.size() != o.floats.size()) return false;
  for (size_t k = 0; k < floats.size(); ++k)
    if (!((std::isnan(floats[k]) && std::isnan(o.floats[k])) || floats[k] == o.floats[k])) return false;
  return true;
}

bool Value::operator==(const Value& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::None: return true;
    case Kind::Bool: return b == o.b;
    case Kind::Int: return i == o.i;
    case Kind::Float: return (std::isnan(f) && std::isnan(o.f)) || f == o.f;
    case Kind::Node: return node == o.node;
    case Kind::Sym: return sym == o.sym;
    case Kind::List: return list == o.list;
    case Kind::Numbers: return numbers == o.numbers || (numbers && o.numbers && *numbers == *o.numbers);
    case Kind::DType: return dtype == o.dtype;
    case Kind::Str: case Kind::Device: case Kind::Enum: case Kind::Dict: case Kind::Repr: return s == o.s;
  }
  return false;
}

}  // namespace sator
