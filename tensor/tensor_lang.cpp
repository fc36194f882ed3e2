#include "tensor/tensor_lang.h"

#include <charconv>
#include <cstring>

#include "ir/op_table.h"

namespace sator {

// Built with append: GCC 12 warns falsely (-Wrestrict) on "x" + std::string.
void append_value_key(std::string& out, const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: out.append("N"); return;
    case Value::Kind::Bool: out.append(v.b ? "T" : "F"); return;
    case Value::Kind::Int: out.append("i").append(std::to_string(v.i)); return;
    case Value::Kind::Float: {
      uint64_t bits;
      std::memcpy(&bits, &v.f, sizeof bits);
      out.append("f").append(std::to_string(bits));  // exact: the bit pattern
      return;
    }
    case Value::Kind::Node: out.append("$").append(std::to_string(v.node)); return;
    case Value::Kind::Sym: out.append("s(").append(v.sym.to_string()).append(")"); return;
    case Value::Kind::List:
      out.append("[");
      for (const Value& x : v.list) {
        append_value_key(out, x);
        out.append(",");
      }
      out.append("]");
      return;
    case Value::Kind::DType: out.append("d").append(dtype_name(v.dtype)); return;
    case Value::Kind::Numbers:
      // Only get_attr constants are packed, and their target names them
      // (also in the key): the array's identity stands for its contents.
      out.append("P").append(std::to_string(reinterpret_cast<uintptr_t>(v.numbers.get())));
      return;
    default:
      out.append("t").append(std::to_string(static_cast<int>(v.kind))).append(":");
      out.append(std::to_string(v.s.size())).append(":").append(v.s);
      return;
  }
}

namespace {

// Replaces node references: symbolic-int nodes by their expression, tensor
// and tuple nodes by child slots (appending the node to `children`).
Value encode_value(const Graph& g, const Value& v, std::vector<NodeId>& children) {
  if (v.kind == Value::Kind::Node) {
    const Node& ref = g.nodes[v.node];
    if (ref.result == Node::Result::SymInt) return Value::of_sym(ref.symint);
    children.push_back(v.node);
    return Value::of_node(static_cast<NodeId>(children.size() - 1));
  }
  if (v.kind == Value::Kind::List) {
    std::vector<Value> items;
    items.reserve(v.list.size());
    for (const Value& x : v.list) items.push_back(encode_value(g, x, children));
    return Value::of_list(std::move(items));
  }
  return v;
}

bool must_stay_distinct(const Node& n) {
  if (n.op == "placeholder" || n.op == "get_attr") return true;
  const OpInfo* info = find_op(n.op);
  return !info || info->cls == OpClass::Random || (info->variadic && n.op != "output");
}

}  // namespace

namespace {

// The child slots encode_value appends for `v`, without building the
// encoded value (the writer asks for them once per node written: the copies
// of each node's arguments were a tenth of writing a 145,000-node graph).
void append_tensor_children(const Graph& g, const Value& v, std::vector<NodeId>& children) {
  if (v.kind == Value::Kind::Node) {
    if (g.nodes[v.node].result != Node::Result::SymInt) children.push_back(v.node);
    return;
  }
  for (const Value& x : v.list) append_tensor_children(g, x, children);
}

}  // namespace

std::vector<NodeId> tensor_children(const Graph& g, NodeId id) {
  std::vector<NodeId> children;
  const Node& n = g.nodes[id];
  for (const Value& v : n.args) append_tensor_children(g, v, children);
  for (const auto& kv : n.kwargs) append_tensor_children(g, kv.second, children);
  return children;
}

TensorLanguage::Encoded TensorLanguage::encode(const Graph& g, NodeId id) {
  const Node& n = g.nodes[id];
  Encoded e;
  e.op = op(n.op);
  NodeAttrs a;
  for (const Value& v : n.args) a.args.push_back(encode_value(g, v, e.children));
  for (const auto& [k, v] : n.kwargs) a.kwargs.emplace_back(k, encode_value(g, v, e.children));
  a.role = n.role;
  a.target = n.target;
  a.value = n.value;
  if (must_stay_distinct(n)) a.unique_name = n.name;
  e.attr = intern(a);
  return e;
}

eg::AttrId TensorLanguage::intern(const NodeAttrs& a) {
  std::string key;
  for (const Value& v : a.args) {
    append_value_key(key, v);
    key += ";";
  }
  key += "|";
  for (const auto& [k, v] : a.kwargs) {
    key.append(k).append("=");
    append_value_key(key, v);
    key += ";";
  }
  key.append("|r").append(std::to_string(static_cast<int>(a.role)));
  if (a.target) key.append("|t").append(*a.target);
  if (a.value) {
    key.append("|v");
    append_value_key(key, *a.value);
  }
  if (!a.unique_name.empty()) key.append("|n").append(a.unique_name);
  const eg::AttrId id = attr(key);
  // An attribute already interned has the same key, so the same content:
  // it is kept, not overwritten.
  if (id >= attrs_.size()) {
    attrs_.resize(id + 1);
    attrs_[id] = a;
  }
  return id;
}

std::string TensorLanguage::format_node(eg::OpId op, eg::AttrId) const { return op_name(op); }

std::optional<eg::Term> TensorLanguage::parse_token(std::string_view token, size_t arity) {
  if (token.find('@') != std::string_view::npos) return eg::Language::parse_token(token, arity);
  return eg::Term{op(token), eg::kNoAttr, true};
}

eg::AttrId TensorLanguage::view_attr(const std::vector<SymExpr>& shape) {
  NodeAttrs a;
  std::vector<Value> sizes;
  for (const SymExpr& d : shape) sizes.push_back(d.is_constant() ? Value::of_int(d.constant()) : Value::of_sym(d));
  a.args = {Value::of_node(0), Value::of_list(std::move(sizes))};
  return intern(a);
}

eg::AttrId TensorLanguage::permute_attr(const std::vector<int64_t>& dims) {
  NodeAttrs a;
  std::vector<Value> ds;
  for (int64_t d : dims) ds.push_back(Value::of_int(d));
  a.args = {Value::of_node(0), Value::of_list(std::move(ds))};
  return intern(a);
}

}  // namespace sator
