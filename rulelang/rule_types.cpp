// The language's types, and the op a name in a rule stands for.

#include "rulelang/compiled_rule.h"

namespace sator::rulelang {

const char* type_name(Type t) {
  switch (t) {
    case Type::Tensor: return "tensor";
    case Type::Int: return "int";
    case Type::Size: return "size";
    case Type::IntList: return "int list";
    case Type::Sizes: return "size list";
    case Type::DType: return "dtype";
    case Type::Number: return "number";
    case Type::Bool: return "bool";
    case Type::Any: return "any";
  }
  return "?";
}

bool assignable(Type from, Type to) {
  if (from == to || to == Type::Any || from == Type::Any) return true;
  return (from == Type::Int && (to == Type::Size || to == Type::Number)) || (from == Type::Size && to == Type::Number) ||
         (from == Type::IntList && to == Type::Sizes);
}

Type param_type(const ParamSpec& p) {
  switch (p.type) {
    case ParamType::Tensor: return Type::Tensor;
    case ParamType::Int: return Type::Int;
    case ParamType::SymInt: return Type::Size;
    case ParamType::IntList: return Type::IntList;
    case ParamType::SymIntList: return Type::Sizes;
    case ParamType::Float:
    case ParamType::Scalar: return Type::Number;
    case ParamType::Bool: return Type::Bool;
    case ParamType::ScalarType: return Type::DType;
    default: return Type::Any;
  }
}

}  // namespace sator::rulelang
