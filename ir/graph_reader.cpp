#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ir/graph_io.h"

namespace sator {

using Json = nlohmann::ordered_json;

GraphError::GraphError(std::string file, std::string node, const std::string& message)
    : std::runtime_error(file + (node.empty() ? "" : ": node '" + node + "'") + ": " + message),
      file_(std::move(file)),
      node_(std::move(node)),
      message_(message) {}

namespace {

constexpr int kMaxValueDepth = 32;

std::string type_name(const Json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number_float()) return "a float";
  return std::string("a ") + j.type_name();
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Graph read(std::string_view text) {
    Json doc;
    try {
      doc = Json::parse(text);
    } catch (const Json::parse_error& e) {
      fail("malformed JSON: " + std::string(e.what()));
    }
    if (!doc.is_object()) fail("the document is " + type_name(doc) + ", expected an object");
    read_header(doc);
    const Json& nodes = doc["nodes"];
    if (!nodes.is_array()) fail("\"nodes\" must be an array");
    if (nodes.empty()) fail("the graph has no nodes");
    // Every name first, so a reference to a later node is reported as an
    // ordering problem (which is what a cycle looks like) and not as unknown.
    for (const Json& n : nodes)
      if (n.is_object())
        if (auto name = n.find("name"); name != n.end() && name->is_string()) all_names_.insert(name->get<std::string>());
    graph_.nodes.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) read_node(nodes[i], i);
    check_output();
    return std::move(graph_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw GraphError(file_, node_, message); }

  void check_keys(const Json& obj, std::initializer_list<std::string_view> allowed, const std::string& where) {
    for (const auto& [key, _] : obj.items()) {
      bool ok = false;
      for (auto a : allowed) ok |= key == a;
      if (!ok) fail("unknown field \"" + key + "\" in " + where);
    }
  }

  const Json& require(const Json& obj, const char* key, const std::string& where) {
    auto it = obj.find(key);
    if (it == obj.end()) fail("missing field \"" + std::string(key) + "\" in " + where);
    return *it;
  }

  std::string require_string(const Json& obj, const char* key, const std::string& where) {
    const Json& v = require(obj, key, where);
    if (!v.is_string()) fail("field \"" + std::string(key) + "\" in " + where + " is " + type_name(v) + ", expected a string");
    return v.get<std::string>();
  }

  int64_t as_int(const Json& v, const std::string& what) {
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
      return v.get<int64_t>();
    fail(what + " is " + type_name(v) + ", expected an integer");
  }

  void read_header(const Json& doc) {
    check_keys(doc, {"format", "version", "name", "source", "symbols", "nodes"}, "the document");
    const std::string format = require_string(doc, "format", "the document");
    if (format != "sator.graph") fail("\"format\" is \"" + format + "\", expected \"sator.graph\"");
    const Json& version = require(doc, "version", "the document");
    if (!version.is_number_integer() || version.get<int64_t>() != 1)
      fail("unsupported \"version\" " + version.dump() + " (this sator reads version 1)");
    graph_.name = require_string(doc, "name", "the document");
    require(doc, "nodes", "the document");
    if (auto it = doc.find("source"); it != doc.end()) {
      if (!it->is_object()) fail("\"source\" must be an object");
      graph_.source_json = it->dump();
    }
    if (auto it = doc.find("symbols"); it != doc.end()) {
      if (!it->is_array()) fail("\"symbols\" must be an array");
      for (const Json& s : *it) read_symbol(s);
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
      if (it == s.end() || it->is_null()) return std::nullopt;
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

  SymExpr parse_expr(const std::string& text) {
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
      if (!graph_.find_symbol(n)) fail("size expression \"" + text + "\" uses undeclared symbol '" + n + "'");
    expr_cache_.emplace(text, e);
    return e;
  }

  SymExpr read_size(const Json& v, const std::string& what) {
    if (v.is_string()) return parse_expr(v.get<std::string>());
    return as_int(v, what);
  }

  std::optional<int64_t> hint_of(const std::string& name) const {
    const Symbol* s = graph_.find_symbol(name);
    return s ? std::optional<int64_t>(s->hint) : std::nullopt;
  }

  TensorType read_tensor(const Json& obj, const std::string& where) {
    TensorType t;
    const Json& shape = require(obj, "shape", where);
    const Json& stride = require(obj, "stride", where);
    if (!shape.is_array()) fail(where + " \"shape\" must be an array");
    if (!stride.is_array()) fail(where + " \"stride\" must be an array");
    if (shape.size() != stride.size())
      fail(where + " has " + std::to_string(shape.size()) + " sizes but " + std::to_string(stride.size()) + " strides");
    if (shape.size() > size_t(kMaxRank)) fail(where + " has rank " + std::to_string(shape.size()) + ", beyond " + std::to_string(kMaxRank));
    int64_t numel = 1;
    for (const Json& d : shape) {
      SymExpr e = read_size(d, where + " size");
      auto value = e.evaluate([this](const std::string& n) { return hint_of(n); });
      if (!value || *value < 0 || *value > kMaxDimSize)
        fail(where + " size " + e.to_string() + " is " + (value && *value < 0 ? "negative" : "absurdly large"));
      if (__builtin_mul_overflow(numel, *value, &numel) || numel > kMaxNumel)
        fail(where + " shape " + shape.dump() + " has an absurd number of elements");
      t.shape.push_back(std::move(e));
    }
    for (const Json& d : stride) {
      SymExpr e = read_size(d, where + " stride");
      auto value = e.evaluate([this](const std::string& n) { return hint_of(n); });
      if (!value || *value < 0) fail(where + " stride " + e.to_string() + " is negative or overflows");
      t.stride.push_back(std::move(e));
    }
    const std::string dtype = require_string(obj, "dtype", where);
    auto parsed = parse_dtype(dtype);
    if (!parsed) fail(where + " has unknown dtype \"" + dtype + "\"");
    t.dtype = *parsed;
    return t;
  }

  Value read_value(const Json& j, int depth) {
    if (depth > kMaxValueDepth) fail("an argument is nested too deeply");
    switch (j.type()) {
      case Json::value_t::null: return Value::none();
      case Json::value_t::boolean: return Value::of_bool(j.get<bool>());
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned: return Value::of_int(as_int(j, "an integer argument"));
      case Json::value_t::number_float: return Value::of_float(j.get<double>());
      case Json::value_t::string: return Value::of_text(Value::Kind::Str, j.get<std::string>());
      case Json::value_t::array: {
        std::vector<Value> items;
        items.reserve(j.size());
        for (const Json& x : j) items.push_back(read_value(x, depth + 1));
        return Value::of_list(std::move(items));
      }
      case Json::value_t::object: return read_tagged(j);
      default: fail("unsupported JSON value in an argument");
    }
  }

  Value read_tagged(const Json& j) {
    if (j.size() != 1) fail("an encoded value must have exactly one key, got " + j.dump());
    const auto& [key, v] = *j.items().begin();
    auto text = [&]() -> std::string {
      if (!v.is_string()) fail("{\"" + key + "\": ...} must hold a string, got " + type_name(v));
      return v.get<std::string>();
    };
    if (key == "node") {
      const std::string ref = text();
      if (ref == node_) fail("refers to itself (a cycle)");
      auto it = index_.find(ref);
      if (it == index_.end()) {
        if (all_names_.count(ref)) fail("refers to node '" + ref + "', which comes later (nodes must be in topological order; a cycle cannot be ordered)");
        fail("refers to unknown node '" + ref + "'");
      }
      return Value::of_node(it->second);
    }
    if (key == "sym") return Value::of_sym(parse_expr(text()));
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
    fail("unknown encoded value {\"" + key + "\": ...}");
  }

  // A get_attr constant must have the nesting its shape says.
  void check_constant(const Json& v, const std::vector<SymExpr>& shape, size_t dim) {
    if (dim == shape.size()) {
      if (!(v.is_number() || v.is_boolean())) fail("constant \"value\" holds " + type_name(v) + " where a scalar belongs");
      return;
    }
    auto size = shape[dim].as_constant();
    if (!v.is_array() || !size || int64_t(v.size()) != *size)
      fail("constant \"value\" does not match shape " + shape_text(shape));
    for (const Json& x : v) check_constant(x, shape, dim + 1);
  }

  void read_node(const Json& j, size_t position) {
    node_.clear();
    if (!j.is_object()) fail("node #" + std::to_string(position) + " is " + type_name(j) + ", expected an object");
    Node n;
    n.name = require_string(j, "name", "node #" + std::to_string(position));
    if (n.name.empty()) fail("node #" + std::to_string(position) + " has an empty name");
    node_ = n.name;
    check_keys(j, {"name", "op", "role", "args", "kwargs", "shape", "stride", "dtype", "outputs", "symint", "target", "value"}, "the node");
    if (index_.count(n.name)) fail("duplicate node name");
    n.op = require_string(j, "op", "the node");
    if (n.op.empty()) fail("empty \"op\"");
    const bool placeholder = n.op == "placeholder";

    if (auto it = j.find("role"); it != j.end()) {
      if (!placeholder) fail("\"role\" is only allowed on placeholders");
      const std::string role = it->is_string() ? it->get<std::string>() : "";
      if (role == "primal") n.role = Role::Primal;
      else if (role == "tangent") n.role = Role::Tangent;
      else if (role == "input") n.role = Role::Input;
      else fail("\"role\" must be \"primal\", \"tangent\" or \"input\", got " + it->dump());
    } else if (placeholder) {
      fail("a placeholder needs a \"role\"");
    }

    auto args = j.find("args");
    if (placeholder && args != j.end()) fail("a placeholder has no \"args\"");
    if (!placeholder) {
      if (args == j.end()) fail("missing field \"args\"");
      if (!args->is_array()) fail("\"args\" is " + type_name(*args) + ", expected an array");
      for (const Json& a : *args) n.args.push_back(read_value(a, 0));
    }
    if (auto it = j.find("kwargs"); it != j.end()) {
      if (!it->is_object()) fail("\"kwargs\" is " + type_name(*it) + ", expected an object");
      for (const auto& [k, v] : it->items()) n.kwargs.emplace_back(k, read_value(v, 0));
    }

    const bool has_shape = j.contains("shape") || j.contains("stride") || j.contains("dtype");
    const int kinds = int(has_shape) + int(j.contains("outputs")) + int(j.contains("symint"));
    if (kinds > 1) fail("a node has only one of \"shape\"/\"stride\"/\"dtype\", \"outputs\" and \"symint\"");
    if (has_shape) {
      n.result = Node::Result::Tensor;
      n.tensor = read_tensor(j, "the node's");
    } else if (auto it = j.find("outputs"); it != j.end()) {
      n.result = Node::Result::Tuple;
      if (!it->is_array()) fail("\"outputs\" must be an array");
      for (size_t k = 0; k < it->size(); ++k) n.outputs.push_back(read_slot((*it)[k], k));
    } else if (auto it = j.find("symint"); it != j.end()) {
      n.result = Node::Result::SymInt;
      n.symint = read_size(*it, "\"symint\"");
    } else if (placeholder) {
      fail("a placeholder needs \"shape\", \"stride\" and \"dtype\", or \"symint\"");
    }

    const bool get_attr = n.op == "get_attr";
    if (j.contains("target") != get_attr || (j.contains("value") && !get_attr))
      fail(get_attr ? "a get_attr node needs \"target\"" : "\"target\" and \"value\" belong to get_attr nodes only");
    if (get_attr) {
      const Json& target = j["target"];
      if (!target.is_string()) fail("\"target\" must be a string");
      n.target = target.get<std::string>();
      if (auto it = j.find("value"); it != j.end()) {
        if (!it->is_null() && n.result == Node::Result::Tensor) check_constant(*it, n.tensor.shape, 0);
        n.value = read_value(*it, 0);
      }
    }
    if (n.op == "output" && seen_output_) fail("a second output node");
    if (n.op == "output") seen_output_ = true;
    else if (seen_output_) fail("a node after the output node");

    index_.emplace(n.name, static_cast<NodeId>(graph_.nodes.size()));
    graph_.nodes.push_back(std::move(n));
  }

  OutputSlot read_slot(const Json& j, size_t k) {
    OutputSlot slot;
    const std::string where = "output #" + std::to_string(k);
    if (j.is_null()) return slot;
    if (!j.is_object()) fail(where + " is " + type_name(j) + ", expected an object or null");
    if (j.contains("scalar")) {
      check_keys(j, {"scalar"}, where);
      slot.kind = OutputSlot::Kind::Scalar;
      slot.scalar = read_value(j["scalar"], 0);
      return slot;
    }
    check_keys(j, {"shape", "stride", "dtype"}, where);
    slot.kind = OutputSlot::Kind::Tensor;
    slot.tensor = read_tensor(j, where);
    return slot;
  }

  void check_output() {
    node_.clear();
    if (!seen_output_) fail("the graph has no output node");
    const Node& out = graph_.nodes.back();
    node_ = out.name;
    if (out.args.size() != 1 || !out.args[0].is_list()) fail("the output node's args must be [[results...]]");
  }

  std::string file_;
  std::string node_;  // the node being read, for messages
  Graph graph_;
  std::unordered_map<std::string, NodeId> index_;
  std::unordered_set<std::string> all_names_;
  std::unordered_map<std::string, SymExpr> expr_cache_;
  bool seen_output_ = false;

};

}  // namespace

Graph read_graph_text(std::string_view text, const std::string& file_label) {
  Reader reader(file_label);
  return reader.read(text);
}

Graph read_graph_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GraphError(path, "", "cannot open the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw GraphError(path, "", "cannot read the file");
  return read_graph_text(buf.str(), path);
}

}  // namespace sator
