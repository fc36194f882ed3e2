// The language's types, and the op a name in a rule stands for.
#include <unordered_map>

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

namespace {

// Short name -> op, built once ("view" -> aten.view.default); a short name
// two ops share maps to nullptr (ambiguous).
struct ShortNames {
  std::unordered_map<std::string_view, const OpInfo*> by_name;
  std::unordered_map<std::string_view, std::string> clash;
  ShortNames() {
    for (const OpInfo& op : all_ops()) {
      std::string_view s = op.name;
      for (std::string_view prefix : {"aten.", "prims."})
        if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
      if (s.size() > 8 && s.substr(s.size() - 8) == ".default") s.remove_suffix(8);
      auto [it, fresh] = by_name.emplace(s, &op);
      if (!fresh && it->second) {
        clash[s] = it->second->name + " and " + op.name;
        it->second = nullptr;
      }
    }
  }
};

}  // namespace

const OpInfo* find_rule_op(std::string_view name, std::string* why) {
  if (const OpInfo* op = find_op(name)) return op;
  static const ShortNames names;
  const auto it = names.by_name.find(name);
  if (it != names.by_name.end() && it->second) return it->second;
  if (why) {
    // (Appended piece by piece: g++ 12 warns, wrongly, on "'" + string.)
    std::string text = it != names.by_name.end() ? "'" : "no op '";
    text.append(name);
    if (it != names.by_name.end()) text.append("' is both ").append(names.clash.at(name)).append(": write the full name");
    else text.append("' in the op table");
    *why = std::move(text);
  }
  return nullptr;
}

}  // namespace sator::rulelang
