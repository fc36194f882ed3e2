#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "ir/graph_io.h"
#include "ir/input_file.h"
#include "ir/json_doc.h"
#include "ir/name_index.h"
#include "ir/packed_constant.h"

namespace sator {

GraphError::GraphError(std::string file, std::string node, const std::string& message)
    : std::runtime_error((file.empty() ? std::string() : file + (node.empty() ? "" : ": node '" + node + "'") + ": ") +
                         message),
      file_(std::move(file)),
      node_(std::move(node)),
      message_(message) {}

namespace {

constexpr int kMaxValueDepth = 32;

using Json = JsonRef;

std::string type_name(const Json& j) { return j.type_name(); }

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Graph read(std::string_view text) {
    std::optional<JsonDoc> parsed;
    try {
      parsed.emplace(text);
    } catch (const JsonSyntaxError& e) {
      fail("malformed JSON: " + std::string(e.what()));
    }
    const Json doc = parsed->root();
    if (!doc.is_object()) fail("the document is " + type_name(doc) + ", expected an object");
    read_header(doc);
    read_nodes(*doc.find("nodes"));
    return std::move(graph_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw GraphError(file_, node_.empty() ? std::string(node_) : prefix_ + std::string(node_), message);
  }

  void read_nodes(const Json& nodes) {
    if (!nodes.is_array()) fail("\"nodes\" must be an array");
    if (nodes.size() == 0) fail("the graph has no nodes");
    nodes_ = nodes;
    index_.reserve(nodes.size());
    graph_.nodes.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) read_node(nodes[i], i);
    check_output();
  }

  // A `sator.chunked` node's subgraph: read by a reader of its own (its node
  // names are its own), which sees the outer symbols; messages name its
  // nodes as "outer/inner".
  Graph read_body(const Json& b) {
    if (!b.is_object()) fail("\"body\" is " + type_name(b) + ", expected an object");
    check_keys(b, {"symbols", "nodes"}, "the body");
    Reader inner(file_);
    inner.prefix_ = prefix_ + std::string(node_) + "/";
    inner.graph_.symbols = graph_.symbols;
    const size_t outer = graph_.symbols.size();
    if (auto it = b.find("symbols")) {
      if (!it->is_array()) fail("the body's \"symbols\" must be an array");
      for (size_t i = 0; i < it->size(); ++i) inner.read_symbol((*it)[i]);
    }
    auto nodes = b.find("nodes");
    if (!nodes) fail("missing field \"nodes\" in the body");
    inner.read_nodes(*nodes);
    Graph body = std::move(inner.graph_);
    body.symbols.erase(body.symbols.begin(), body.symbols.begin() + static_cast<std::ptrdiff_t>(outer));
    return body;
  }

  void check_keys(const Json& obj, std::initializer_list<std::string_view> allowed, const std::string& where) {
    for (size_t i = 0; i < obj.size(); ++i) {
      bool ok = false;
      for (auto a : allowed) ok |= obj.key(i) == a;
      if (!ok) fail("unknown field \"" + std::string(obj.key(i)) + "\" in " + where);
    }
  }

  Json require(const Json& obj, const char* key, const std::string& where) {
    auto it = obj.find(key);
    if (!it) fail("missing field \"" + std::string(key) + "\" in " + where);
    return *it;
  }

  std::string require_string(const Json& obj, const char* key, const std::string& where) {
    const Json v = require(obj, key, where);
    if (!v.is_string()) fail("field \"" + std::string(key) + "\" in " + where + " is " + type_name(v) + ", expected a string");
    return std::string(v.as_string());
  }

  int64_t as_int(const Json& v, const std::string& what) {
    if (v.int_overflow()) fail(what + " is beyond the 64-bit integer range");
    if (v.is_int()) return v.as_int();
    fail(what + " is " + type_name(v) + ", expected an integer");
  }

  void read_header(const Json& doc) {
    check_keys(doc, {"format", "version", "name", "source", "symbols", "nodes"}, "the document");
    const std::string format = require_string(doc, "format", "the document");
    if (format != "sator.graph") fail("\"format\" is \"" + format + "\", expected \"sator.graph\"");
    const Json version = require(doc, "version", "the document");
    if (!version.is_int() || version.as_int() != 1)
      fail("unsupported \"version\" " + version.dump() + " (this sator reads version 1)");
    graph_.name = require_string(doc, "name", "the document");
    require(doc, "nodes", "the document");
    if (auto it = doc.find("source")) {
      if (!it->is_object()) fail("\"source\" must be an object");
      graph_.source_json = it->dump();
    }
    if (auto it = doc.find("symbols")) {
      if (!it->is_array()) fail("\"symbols\" must be an array");
      for (size_t i = 0; i < it->size(); ++i) read_symbol((*it)[i]);
    }
  }

  void read_symbol(const Json& s) {
    if (!s.is_object()) fail("a symbol is " + type_name(s) + ", expected an object");
    check_keys(s, {"name", "hint", "min", "max"}, "a symbol");
    Symbol sym;
    sym.name = require_string(s, "name", "a symbol");
    const std::string where = "symbol '" + sym.name + "'";
    if (sym.name.empty() || !(std::isalpha(static_cast<unsigned char>(sym.name[0])) || sym.name[0] == '_'))
      fail(where + ": not an identifier");
    for (char c : sym.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') fail(where + ": not an identifier");
    if (sym.name == "Max" || sym.name == "Min" || sym.name == "Mod" || sym.name == "FloorDiv")
      fail(where + ": the name is reserved for a function");
    if (graph_.find_symbol(sym.name)) fail("duplicate " + where);
    sym.hint = as_int(require(s, "hint", where), where + " \"hint\"");
    auto bound = [&](const char* key) -> std::optional<int64_t> {
      auto it = s.find(key);
      if (!it || it->is_null()) return std::nullopt;
      return as_int(*it, where + " \"" + key + "\"");
    };
    sym.min = bound("min");
    sym.max = bound("max");
    if (sym.min && sym.max && *sym.min > *sym.max) fail(where + ": min " + std::to_string(*sym.min) + " > max " + std::to_string(*sym.max));
    if (sym.hint < 0 || (sym.min && sym.hint < *sym.min) || (sym.max && sym.hint > *sym.max))
      fail(where + ": hint " + std::to_string(sym.hint) + " is outside its range");
    if (sym.hint > kMaxDimSize) fail(where + ": hint " + std::to_string(sym.hint) + " is absurdly large");
    graph_.symbols.push_back(std::move(sym));
  }

  SymExpr parse_expr(std::string_view text) {
    auto it = expr_cache_.find(text);
    if (it != expr_cache_.end()) return it->second;
    SymExpr e;
    try {
      e = parse_sym_expr(text);
    } catch (const SymParseError& err) {
      fail(err.what());
    }
    std::vector<std::string> names;
    e.collect_symbols(names);
    for (const std::string& n : names)
      if (!graph_.find_symbol(n))
        fail("size expression \"" + std::string(text) + "\" uses undeclared symbol '" + n + "'");
    expr_cache_.emplace(text, e);
    return e;
  }

  SymExpr read_size(const Json& v, const std::string& what) {
    if (v.is_string()) return parse_expr(v.as_string());
    return as_int(v, what);
  }

  std::optional<int64_t> hint_of(const std::string& name) const {
    const Symbol* s = graph_.find_symbol(name);
    return s ? std::optional<int64_t>(s->hint) : std::nullopt;
  }

  // The tensor fields of a node or an output element: all three or none.
  struct TensorFields {
    std::optional<Json> shape, stride, dtype;
    bool any() const { return shape || stride || dtype; }
  };

  std::optional<int64_t> size_value(const SymExpr& e) const {
    if (auto c = e.as_constant()) return c;
    return e.evaluate([this](const std::string& n) { return hint_of(n); });
  }

  TensorType read_tensor(const TensorFields& f, const char* where) {
    const std::string w = where;
    if (!f.shape) fail("missing field \"shape\" in " + w);
    if (!f.stride) fail("missing field \"stride\" in " + w);
    if (!f.dtype) fail("missing field \"dtype\" in " + w);
    const Json shape = *f.shape, stride = *f.stride;
    if (!shape.is_array()) fail("\"shape\" of " + w + " must be an array");
    if (!stride.is_array()) fail("\"stride\" of " + w + " must be an array");
    if (shape.size() != stride.size())
      fail(w + " has " + std::to_string(shape.size()) + " sizes but " + std::to_string(stride.size()) + " strides");
    if (shape.size() > size_t(kMaxRank)) fail(w + " has rank " + std::to_string(shape.size()) + ", beyond " + std::to_string(kMaxRank));
    TensorType t;
    t.shape.reserve(shape.size());
    t.stride.reserve(shape.size());
    int64_t numel = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      SymExpr e = read_size(shape[k], "a size");
      auto value = size_value(e);
      if (!value || *value < 0 || *value > kMaxDimSize)
        fail(w + " size " + e.to_string() + " is " + (value && *value < 0 ? "negative" : "absurdly large"));
      if (__builtin_mul_overflow(numel, *value, &numel) || numel > kMaxNumel)
        fail(w + " shape " + shape.dump() + " has an absurd number of elements");
      t.shape.push_back(std::move(e));
    }
    for (size_t k = 0; k < stride.size(); ++k) {
      SymExpr e = read_size(stride[k], "a stride");
      auto value = size_value(e);
      if (!value || *value < 0) fail(w + " stride " + e.to_string() + " is negative or overflows");
      t.stride.push_back(std::move(e));
    }
    if (!f.dtype->is_string()) fail(w + " \"dtype\" is " + type_name(*f.dtype) + ", expected a string");
    auto parsed = parse_dtype(f.dtype->as_string());
    if (!parsed) fail(w + " has unknown dtype \"" + std::string(f.dtype->as_string()) + "\"");
    t.dtype = *parsed;
    return t;
  }

  Value read_value(const Json& j, int depth) {
    if (depth > kMaxValueDepth) fail("an argument is nested too deeply");
    switch (j.type()) {
      case Json::Type::Null: return Value::none();
      case Json::Type::Bool: return Value::of_bool(j.as_bool());
      case Json::Type::Int: return Value::of_int(as_int(j, "an integer argument"));
      case Json::Type::Float: return Value::of_float(j.as_double());
      case Json::Type::String: return Value::of_text(Value::Kind::Str, std::string(j.as_string()));
      case Json::Type::Array: {
        std::vector<Value> items;
        items.reserve(j.size());
        for (size_t k = 0; k < j.size(); ++k) items.push_back(read_value(j[k], depth + 1));
        return Value::of_list(std::move(items));
      }
      case Json::Type::Object: return read_tagged(j);
    }
    fail("unsupported JSON value in an argument");
  }

  // A constant's nested lists (check_constant has checked their nesting):
  // packed where packable (ir/packed_constant.h), else the general form.
  Value read_constant(const Json& j) {
    if (auto p = pack_constant(j)) return Value::of_numbers(std::move(p));
    return read_value(j, 0);
  }

  Value read_tagged(const Json& j) {
    if (j.size() != 1) fail("an encoded value must have exactly one key, got " + j.dump());
    const std::string_view key = j.key(0);
    const Json v = j.value(0);
    auto text = [&]() -> std::string {
      if (!v.is_string()) fail("{\"" + std::string(key) + "\": ...} must hold a string, got " + type_name(v));
      return std::string(v.as_string());
    };
    if (key == "node") {
      if (!v.is_string()) text();  // reports the type
      const std::string_view ref = v.as_string();
      if (ref == node_) fail("refers to itself (a cycle)");
      const std::optional<NodeId> id = index_.find(ref);
      if (!id) {
        if (names_a_node(ref))
          fail("refers to node '" + std::string(ref) +
               "', which comes later (nodes must be in topological order; a cycle cannot be ordered)");
        fail("refers to unknown node '" + std::string(ref) + "'");
      }
      return Value::of_node(*id);
    }
    if (key == "sym") {
      if (!v.is_string()) text();
      return Value::of_sym(parse_expr(v.as_string()));
    }
    if (key == "float") {
      const std::string f = text();
      if (f == "inf") return Value::of_float(INFINITY);
      if (f == "-inf") return Value::of_float(-INFINITY);
      if (f == "nan") return Value::of_float(NAN);
      fail("{\"float\": \"" + f + "\"} is not inf, -inf or nan");
    }
    if (key == "dtype") {
      const std::string name = text();
      auto t = parse_dtype(name);
      if (!t) fail("unknown dtype \"" + name + "\"");
      return Value::of_dtype(*t);
    }
    if (key == "device") return Value::of_text(Value::Kind::Device, text());
    if (key == "enum") return Value::of_text(Value::Kind::Enum, text());
    if (key == "repr") return Value::of_text(Value::Kind::Repr, text());
    if (key == "dict") {
      if (!v.is_object()) fail("{\"dict\": ...} must hold an object");
      return Value::of_text(Value::Kind::Dict, v.dump());
    }
    fail("unknown encoded value {\"" + std::string(key) + "\": ...}");
  }

  // A get_attr constant must have the nesting its shape says.
  void check_constant(const Json& v, const std::vector<SymExpr>& shape, size_t dim) {
    if (dim == shape.size()) {
      if (!(v.is_number() || v.is_bool())) fail("constant \"value\" holds " + type_name(v) + " where a scalar belongs");
      return;
    }
    auto size = shape[dim].as_constant();
    if (!v.is_array() || !size || int64_t(v.size()) != *size)
      fail("constant \"value\" does not match shape " + shape_text(shape));
    for (size_t k = 0; k < v.size(); ++k) check_constant(v[k], shape, dim + 1);
  }

  struct NodeFields {
    std::optional<Json> name, op, role, args, kwargs, outputs, symint, target, value, body;
    TensorFields tensor;
    std::optional<std::string_view> unknown;  // the first member not in the format
  };

  // One pass over a node's members; anything not in the format is reported
  // once the node's name is known.
  NodeFields node_fields(const Json& j) {
    NodeFields f;
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string_view k = j.key(i);
      std::optional<Json>* slot = k == "name"     ? &f.name
                                  : k == "op"     ? &f.op
                                  : k == "args"   ? &f.args
                                  : k == "shape"  ? &f.tensor.shape
                                  : k == "stride" ? &f.tensor.stride
                                  : k == "dtype"  ? &f.tensor.dtype
                                  : k == "kwargs" ? &f.kwargs
                                  : k == "role"   ? &f.role
                                  : k == "outputs" ? &f.outputs
                                  : k == "symint" ? &f.symint
                                  : k == "target" ? &f.target
                                  : k == "value"  ? &f.value
                                  : k == "body"   ? &f.body
                                                  : nullptr;
      if (!slot) {
        if (!f.unknown) f.unknown = k;
        continue;
      }
      *slot = j.value(i);
    }
    return f;
  }

  void read_node(const Json& j, size_t position) {
    node_ = {};
    const std::string at = "node #" + std::to_string(position);
    if (!j.is_object()) fail(at + " is " + type_name(j) + ", expected an object");
    NodeFields f = node_fields(j);
    if (!f.name) fail("missing field \"name\" in " + at);
    if (!f.name->is_string()) fail("field \"name\" in " + at + " is " + type_name(*f.name) + ", expected a string");
    const std::string_view name = f.name->as_string();
    if (name.empty()) fail(at + " has an empty name");
    node_ = name;
    if (f.unknown) fail("unknown field \"" + std::string(*f.unknown) + "\" in the node");
    Node n;
    n.name = std::string(name);
    // Entered now (one hash lookup, not two): a reference to the node from
    // its own arguments is caught as a cycle before the index is read.
    if (!index_.add(name)) fail("duplicate node name");
    if (!f.op) fail("missing field \"op\"");
    if (!f.op->is_string()) fail("field \"op\" is " + type_name(*f.op) + ", expected a string");
    n.op = std::string(f.op->as_string());
    if (n.op.empty()) fail("empty \"op\"");
    const bool placeholder = n.op == "placeholder";

    if (f.role) {
      if (!placeholder) fail("\"role\" is only allowed on placeholders");
      const std::string_view role = f.role->is_string() ? f.role->as_string() : "";
      if (role == "primal") n.role = Role::Primal;
      else if (role == "tangent") n.role = Role::Tangent;
      else if (role == "input") n.role = Role::Input;
      else fail("\"role\" must be \"primal\", \"tangent\" or \"input\", got " + f.role->dump());
    } else if (placeholder) {
      fail("a placeholder needs a \"role\"");
    }

    if (placeholder && f.args) fail("a placeholder has no \"args\"");
    if (!placeholder) {
      if (!f.args) fail("missing field \"args\"");
      if (!f.args->is_array()) fail("\"args\" is " + type_name(*f.args) + ", expected an array");
      n.args.reserve(f.args->size());
      for (size_t k = 0; k < f.args->size(); ++k) n.args.push_back(read_value((*f.args)[k], 0));
    }
    if (f.kwargs) {
      if (!f.kwargs->is_object()) fail("\"kwargs\" is " + type_name(*f.kwargs) + ", expected an object");
      for (size_t k = 0; k < f.kwargs->size(); ++k)
        n.kwargs.emplace_back(std::string(f.kwargs->key(k)), read_value(f.kwargs->value(k), 0));
    }

    const int kinds = int(f.tensor.any()) + int(f.outputs.has_value()) + int(f.symint.has_value());
    if (kinds > 1) fail("a node has only one of \"shape\"/\"stride\"/\"dtype\", \"outputs\" and \"symint\"");
    if (f.tensor.any()) {
      n.result = Node::Result::Tensor;
      n.tensor = read_tensor(f.tensor, "the node");
    } else if (f.outputs) {
      n.result = Node::Result::Tuple;
      if (!f.outputs->is_array()) fail("\"outputs\" must be an array");
      for (size_t k = 0; k < f.outputs->size(); ++k) n.outputs.push_back(read_slot((*f.outputs)[k], k));
    } else if (f.symint) {
      n.result = Node::Result::SymInt;
      n.symint = read_size(*f.symint, "\"symint\"");
    } else if (placeholder) {
      fail("a placeholder needs \"shape\", \"stride\" and \"dtype\", or \"symint\"");
    }

    const bool get_attr = n.op == "get_attr";
    if (f.target.has_value() != get_attr || (f.value && !get_attr))
      fail(get_attr ? "a get_attr node needs \"target\"" : "\"target\" and \"value\" belong to get_attr nodes only");
    if (get_attr) {
      if (!f.target->is_string()) fail("\"target\" must be a string");
      n.target = std::string(f.target->as_string());
      if (f.value) {
        if (!f.value->is_null() && n.result == Node::Result::Tensor) check_constant(*f.value, n.tensor.shape, 0);
        n.value = f.value->is_array() && n.result == Node::Result::Tensor ? read_constant(*f.value)
                                                                          : read_value(*f.value, 0);
      }
    }
    if (f.body.has_value() != (n.op == "sator.chunked"))
      fail(f.body ? "\"body\" belongs to sator.chunked nodes only" : "a sator.chunked node needs a \"body\"");
    if (f.body) n.body.push_back(read_body(*f.body));
    if (n.op == "output" && seen_output_) fail("a second output node");
    if (n.op == "output") seen_output_ = true;
    else if (seen_output_) fail("a node after the output node");

    graph_.nodes.push_back(std::move(n));
  }

  // A reference not yet defined: to a later node (an ordering problem, which
  // is what a cycle looks like) or to none. Searched only then: a set of
  // every name built up front took 10% of loading a 165,000-node graph.
  bool names_a_node(std::string_view ref) const {
    for (size_t i = 0; nodes_ && i < nodes_->size(); ++i)
      if (auto name = (*nodes_)[i].find("name"); name && name->is_string() && name->as_string() == ref) return true;
    return false;
  }

  OutputSlot read_slot(const Json& j, size_t k) {
    OutputSlot slot;
    const std::string where = "output #" + std::to_string(k);
    if (j.is_null()) return slot;
    if (!j.is_object()) fail(where + " is " + type_name(j) + ", expected an object or null");
    if (j.contains("scalar")) {
      check_keys(j, {"scalar"}, where);
      slot.kind = OutputSlot::Kind::Scalar;
      slot.scalar = read_value(*j.find("scalar"), 0);
      return slot;
    }
    check_keys(j, {"shape", "stride", "dtype"}, where);
    slot.kind = OutputSlot::Kind::Tensor;
    slot.tensor = read_tensor(TensorFields{j.find("shape"), j.find("stride"), j.find("dtype")}, where.c_str());
    return slot;
  }

  void check_output() {
    node_ = {};
    if (!seen_output_) fail("the graph has no output node");
    const Node& out = graph_.nodes.back();
    node_ = out.name;
    if (out.args.size() != 1 || !out.args[0].is_list()) fail("the output node's args must be [[results...]]");
  }

  std::string file_;
  // Views into the JSON document's strings, which outlive the reader's use.
  std::string_view node_;  // the node being read, for messages
  std::string prefix_;     // "outer/" inside a sator.chunked body
  Graph graph_;
  NameIndex index_;  // id = the count of nodes read before
  std::optional<Json> nodes_;  // the array being read
  std::unordered_map<std::string_view, SymExpr> expr_cache_;
  bool seen_output_ = false;

};

}  // namespace

Graph read_graph_text(std::string_view text, const std::string& file_label) {
  Reader reader(file_label);
  return reader.read(text);
}

Graph read_graph_file(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, kMaxGraphFileBytes);
  } catch (const InputFileError& e) {
    const std::string why = e.what();
    throw GraphError(path, "", why == "is a directory, not a file" ? "is a directory, expected a sator.graph JSON file" : why);
  }
  return read_graph_text(text, path);
}

}  // namespace sator
