#include "ir/infer_context.h"

#include <cstdlib>

namespace sator {

InferredSlot tensor_slot(std::vector<SymExpr> shape, DType dtype) {
  InferredSlot s;
  s.kind = InferredSlot::Kind::Tensor;
  s.shape = std::move(shape);
  s.dtype = dtype;
  return s;
}

Inferred Inferred::tensor(std::vector<SymExpr> shape, DType dtype) {
  Inferred r;
  r.result = Node::Result::Tensor;
  r.slots.push_back(tensor_slot(std::move(shape), dtype));
  return r;
}

Inferred Inferred::sym(SymExpr value) {
  Inferred r;
  r.result = Node::Result::SymInt;
  r.symint = std::move(value);
  return r;
}

Inferred Inferred::tuple(std::vector<InferredSlot> slots) {
  Inferred r;
  r.result = Node::Result::Tuple;
  r.slots = std::move(slots);
  return r;
}

Value parse_default(const ParamSpec& p) {
  const std::string& t = p.default_text;
  if (t == "None") return Value::none();
  if (t == "True") return Value::of_bool(true);
  if (t == "False") return Value::of_bool(false);
  if (t == "[]") return Value::of_list({});
  if (t.find('.') != std::string::npos) return Value::of_float(std::strtod(t.c_str(), nullptr));
  return Value::of_int(std::strtoll(t.c_str(), nullptr, 10));
}

namespace {

bool is_number_value(const Value& v) {
  return v.kind == Value::Kind::Int || v.kind == Value::Kind::Float || v.kind == Value::Kind::Bool;
}

std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return "a bool";
    case Value::Kind::Int: return "an int";
    case Value::Kind::Float: return "a float";
    case Value::Kind::Str: return "a string";
    case Value::Kind::Node: return "a node";
    case Value::Kind::Sym: return "a symbolic int";
    case Value::Kind::List: return "a list";
    case Value::Kind::Numbers: return "a constant's numbers";
    case Value::Kind::DType: return "a dtype";
    case Value::Kind::Device: return "a device";
    case Value::Kind::Enum: return "an enum";
    case Value::Kind::Dict: return "a dict";
    case Value::Kind::Repr: return "a repr";
  }
  return "?";
}

}  // namespace

InferContext::InferContext(const Graph& g, const Node& n, const OpInfo& op, ShapeProver& prover)
    : g_(g), n_(n), op_(op), prover_(prover) {
  bind();
}

void InferContext::fail(const std::string& message) const { throw ShapeError(message); }

void InferContext::bind() {
  const auto& params = op_.params;
  bound_.assign(params.size(), Value::none());
  std::vector<bool> given(params.size(), false);
  size_t positional = 0;
  for (const ParamSpec& p : params) positional += !p.kwarg_only;
  if (n_.args.size() > positional)
    fail(op_.name + " takes at most " + std::to_string(positional) + " positional arguments, got " +
         std::to_string(n_.args.size()));
  for (size_t i = 0; i < n_.args.size(); ++i) {
    bound_[i] = n_.args[i];
    given[i] = true;
  }
  for (const auto& [key, value] : n_.kwargs) {
    size_t i = 0;
    while (i < params.size() && params[i].name != key) ++i;
    if (i == params.size()) fail(op_.name + " has no parameter '" + key + "'");
    if (given[i]) fail("argument '" + key + "' of " + op_.name + " given twice");
    bound_[i] = value;
    given[i] = true;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[i];
    if (!given[i]) {
      if (!p.has_default) fail(op_.name + " is missing its argument '" + p.name + "'");
      bound_[i] = parse_default(p);
    }
    check_type(p, bound_[i]);
  }
}

void InferContext::check_type(const ParamSpec& p, const Value& v) const {
  auto bad = [&](const char* expected) {
    fail("argument '" + p.name + "' of " + op_.name + " is " + describe(v) + ", expected " + expected);
  };
  if (v.is_none()) {
    if (!p.optional && !p.has_default) bad("a value (it is not optional)");
    return;
  }
  auto node_result = [&](const Value& x) { return g_.nodes[x.node].result; };
  auto is_symint = [&](const Value& x) {
    return x.kind == Value::Kind::Int || x.kind == Value::Kind::Sym ||
           (x.is_node() && node_result(x) == Node::Result::SymInt);
  };
  auto is_tensor_node = [&](const Value& x) { return x.is_node() && node_result(x) == Node::Result::Tensor; };
  switch (p.type) {
    case ParamType::Tensor:
      if (!is_tensor_node(v) && !is_number_value(v)) bad("a tensor");
      break;
    case ParamType::TensorList:
      if (!v.is_list()) bad("a list of tensors");
      for (const Value& x : v.list)
        if (!is_tensor_node(x) && !(p.optional && x.is_none())) bad("a list of tensors");
      break;
    case ParamType::Int:
      if (v.kind != Value::Kind::Int) bad("an int");
      break;
    case ParamType::SymInt:
      if (!is_symint(v)) bad("an int or symbolic int");
      break;
    case ParamType::IntList:
    case ParamType::SymIntList:
      if (v.kind == Value::Kind::Int) break;  // int[1] accepts a bare int
      if (!v.is_list()) bad("a list of ints");
      for (const Value& x : v.list)
        if (p.type == ParamType::IntList ? x.kind != Value::Kind::Int : !is_symint(x)) bad("a list of ints");
      break;
    case ParamType::Float:
      if (v.kind != Value::Kind::Float && v.kind != Value::Kind::Int) bad("a float");
      break;
    case ParamType::Bool:
      if (v.kind != Value::Kind::Bool) bad("a bool");
      break;
    case ParamType::BoolList:
      if (!v.is_list()) bad("a list of bools");
      for (const Value& x : v.list)
        if (x.kind != Value::Kind::Bool) bad("a list of bools");
      break;
    case ParamType::Scalar:
      if (!is_number_value(v) && !is_symint(v)) bad("a number");
      break;
    case ParamType::ScalarType:
      if (v.kind != Value::Kind::DType) bad("a dtype");
      break;
    case ParamType::Layout:
    case ParamType::MemoryFormat:
      if (v.kind != Value::Kind::Enum) bad("an enum");
      break;
    case ParamType::Device:
      if (v.kind != Value::Kind::Device) bad("a device");
      break;
    case ParamType::Str:
      if (v.kind != Value::Kind::Str) bad("a string");
      break;
    case ParamType::Any: break;
  }
}

size_t InferContext::index_of(std::string_view name) const {
  for (size_t i = 0; i < op_.params.size(); ++i)
    if (op_.params[i].name == name) return i;
  throw std::logic_error("shape function of " + op_.name + " asks for unknown parameter " + std::string(name));
}

const Value& InferContext::arg(std::string_view name) const { return bound_[index_of(name)]; }

const TensorType& InferContext::tensor(std::string_view name) const {
  const Value& v = arg(name);
  if (!v.is_node()) fail("argument '" + std::string(name) + "' of " + op_.name + " must be a tensor here");
  return g_.nodes[v.node].tensor;
}

bool InferContext::is_number(std::string_view name) const { return is_number_value(arg(name)); }

DType InferContext::scalar_dtype(const Value& v) const {
  switch (v.kind) {
    case Value::Kind::Bool: return DType::Bool;
    case Value::Kind::Float: return DType::Float64;
    default: return DType::Int64;
  }
}

DType InferContext::number_dtype(std::string_view name) const { return scalar_dtype(arg(name)); }

std::vector<const TensorType*> InferContext::tensor_list(std::string_view name) const {
  std::vector<const TensorType*> out;
  for (const Value& v : arg(name).list) out.push_back(v.is_node() ? &g_.nodes[v.node].tensor : nullptr);
  return out;
}

int64_t InferContext::int_arg(std::string_view name) const { return arg(name).i; }

double InferContext::float_arg(std::string_view name) const {
  const Value& v = arg(name);
  return v.kind == Value::Kind::Int ? static_cast<double>(v.i) : v.f;
}

bool InferContext::bool_arg(std::string_view name) const { return arg(name).b; }

SymExpr InferContext::to_sym(const Value& v, std::string_view what) const {
  switch (v.kind) {
    case Value::Kind::Int: return v.i;
    case Value::Kind::Sym: return v.sym;
    case Value::Kind::Node:
      if (g_.nodes[v.node].result == Node::Result::SymInt) return g_.nodes[v.node].symint;
      break;
    default: break;
  }
  fail(std::string(what) + " of " + op_.name + " is " + describe(v) + ", expected an integer");
}

SymExpr InferContext::sym_arg(std::string_view name) const { return to_sym(arg(name), name); }

std::vector<int64_t> InferContext::int_list(std::string_view name) const {
  const Value& v = arg(name);
  if (v.kind == Value::Kind::Int) return {v.i};
  std::vector<int64_t> out;
  for (const Value& x : v.list) out.push_back(x.i);
  return out;
}

std::vector<SymExpr> InferContext::sym_list(std::string_view name) const {
  const Value& v = arg(name);
  if (v.kind == Value::Kind::Int) return {v.i};
  std::vector<SymExpr> out;
  for (const Value& x : v.list) out.push_back(to_sym(x, name));
  return out;
}

std::vector<bool> InferContext::bool_list(std::string_view name) const {
  std::vector<bool> out;
  for (const Value& x : arg(name).list) out.push_back(x.b);
  return out;
}

std::optional<DType> InferContext::dtype_arg(std::string_view name) const {
  const Value& v = arg(name);
  if (v.is_none()) return std::nullopt;
  return v.dtype;
}

size_t InferContext::wrap_dim(int64_t dim, size_t rank) const {
  const int64_t r = static_cast<int64_t>(rank == 0 ? 1 : rank);  // scalars accept dim 0 / -1
  if (dim < -r || dim >= r)
    fail("dimension " + std::to_string(dim) + " out of range for a tensor of rank " + std::to_string(rank));
  return static_cast<size_t>(dim < 0 ? dim + r : dim);
}

}  // namespace sator
