#include "ir/value.h"

#include <cmath>

namespace sator {

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
    case Kind::DType: return dtype == o.dtype;
    case Kind::Str: case Kind::Device: case Kind::Enum: case Kind::Dict: case Kind::Repr: return s == o.s;
  }
  return false;
}

}  // namespace sator
