#include "tensor/graph_text.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <functional>
#include <unordered_map>

#include "ir/graph_builder.h"
#include "ir/graph_io.h"
#include "ir/infer_context.h"
#include "ir/input_file.h"
#include "ir/op_table.h"
#include "ir/shape_prover.h"
#include "tensor/written_layout.h"

namespace sator {

namespace {

struct Token {
  enum class Kind { Ident, Int, Float, String, Punct, End } kind = Kind::End;
  std::string text;
  int64_t i = 0;
  double f = 0;
  size_t col = 1;  // 1-based
};

// One line's tokens ('#' starts a comment).
class Lexer {
 public:
  Lexer(std::string_view line, const std::function<void(size_t, const std::string&)>& fail) : s_(line), fail_(fail) {}

  std::vector<Token> all() {
    std::vector<Token> out;
    for (;;) {
      while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
      Token t;
      t.col = p_ + 1;
      if (p_ >= s_.size() || s_[p_] == '#') {
        out.push_back(t);
        return out;
      }
      const char c = s_[p_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const size_t b = p_;
        while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' || s_[p_] == '.')) ++p_;
        t.kind = Token::Kind::Ident;
        t.text = std::string(s_.substr(b, p_ - b));
      } else if (std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+') && p_ + 1 < s_.size() &&
                                                                  (std::isdigit(static_cast<unsigned char>(s_[p_ + 1])) || s_[p_ + 1] == '.'))) {
        number(t);
      } else if (c == '-' && s_.substr(p_, 4) == "-inf") {
        t.kind = Token::Kind::Float;
        t.f = -std::numeric_limits<double>::infinity();
        t.text = "-inf";
        p_ += 4;
      } else if (c == '"') {
        const size_t b = ++p_;
        while (p_ < s_.size() && s_[p_] != '"') ++p_;
        if (p_ >= s_.size()) fail_(t.col, "a string not closed");
        t.kind = Token::Kind::String;
        t.text = std::string(s_.substr(b, p_ - b));
        ++p_;
      } else if (std::string_view("()[],=").find(c) != std::string_view::npos) {
        t.kind = Token::Kind::Punct;
        t.text = std::string(1, c);
        ++p_;
      } else {
        fail_(t.col, std::string("unexpected character '") + c + "'");
      }
      out.push_back(std::move(t));
    }
  }

 private:
  void number(Token& t) {
    const size_t b = p_;
    if (s_[p_] == '-' || s_[p_] == '+') ++p_;
    bool is_float = false;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '.' ||
                              ((s_[p_] == '-' || s_[p_] == '+') && (s_[p_ - 1] == 'e' || s_[p_ - 1] == 'E')))) {
      is_float = is_float || s_[p_] == '.' || s_[p_] == 'e' || s_[p_] == 'E';
      ++p_;
    }
    t.text = std::string(s_.substr(b, p_ - b));
    size_t used = 0;
    try {
      if (is_float) {
        t.kind = Token::Kind::Float;
        t.f = std::stod(t.text, &used);
      } else {
        t.kind = Token::Kind::Int;
        t.i = std::stoll(t.text, &used);
      }
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.text.size()) fail_(t.col, "not a number: '" + t.text + "'");
  }

  std::string_view s_;
  size_t p_ = 0;
  const std::function<void(size_t, const std::string&)>& fail_;
};

class TextReader {
 public:
  explicit TextReader(std::string file) : file_(std::move(file)) {}

  Graph read(std::string_view text) {
    g_.name = file_;
    const size_t slash = g_.name.find_last_of('/');
    if (slash != std::string::npos) g_.name = g_.name.substr(slash + 1);
    if (const size_t dot = g_.name.rfind('.'); dot != std::string::npos && dot > 0) g_.name = g_.name.substr(0, dot);
    g_.source_json = "{\"note\": \"written by sator graph from " + g_.name + "\"}";
    std::vector<Value> outputs;
    bool has_output = false;
    size_t start = 0;
    for (line_ = 1; start <= text.size(); ++line_) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      Lexer lex(text.substr(start, end - start), fail_at_);
      toks_ = lex.all();
      k_ = 0;
      if (peek().kind != Token::Kind::End) {
        if (has_output) fail(peek().col, "nothing may follow output(...)");
        has_output = statement(outputs);
      }
      start = end + 1;
    }
    if (g_.nodes.empty()) throw GraphError(file_, "", "no nodes (a line such as: x = input([4, 8]))");
    if (!has_output) outputs.push_back(Value::of_node(static_cast<NodeId>(g_.nodes.size() - 1)));
    Node out;
    out.name = "output";
    out.op = "output";
    out.has_args = true;
    out.args = {Value::of_list(std::move(outputs))};
    g_.nodes.push_back(std::move(out));
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail_line(size_t line, size_t col, const std::string& message) const {
    throw GraphError(file_ + ":" + std::to_string(line) + ":" + std::to_string(col), "", message);
  }
  [[noreturn]] void fail(size_t col, const std::string& message) const { fail_line(line_, col, message); }
  const Token& peek() const { return toks_[k_]; }
  const Token& next() { return toks_[k_ < toks_.size() - 1 ? k_++ : k_]; }
  bool is(const char* punct) const { return peek().kind == Token::Kind::Punct && peek().text == punct; }
  void expect(const char* punct) {
    if (!is(punct)) fail(peek().col, std::string("expected '") + punct + "'" + got());
    next();
  }
  std::string got() const {
    return peek().kind == Token::Kind::End ? ", got the end of the line" : ", got '" + peek().text + "'";
  }

  // One line; true for output(...).
  bool statement(std::vector<Value>& outputs) {
    std::string name;
    size_t name_col = 0;
    if (peek().kind == Token::Kind::Ident && toks_.size() > 2 && toks_[1].kind == Token::Kind::Punct && toks_[1].text == "=") {
      name = next().text;
      name_col = toks_[0].col;
      next();
      if (names_.count(name) || sizes_.count(name)) fail(name_col, "'" + name + "' is named twice");
    }
    if (peek().kind != Token::Kind::Ident) fail(peek().col, "expected an op's name" + got());
    const Token op = next();
    expect("(");
    std::vector<Value> args;
    std::vector<std::pair<std::string, Value>> kwargs;
    std::vector<size_t> cols;
    while (!is(")")) {
      if (!args.empty() || !kwargs.empty()) expect(",");
      cols.push_back(peek().col);
      if (peek().kind == Token::Kind::Ident && toks_.size() > k_ + 1 && toks_[k_ + 1].kind == Token::Kind::Punct &&
          toks_[k_ + 1].text == "=") {
        const std::string key = next().text;
        next();
        kwargs.emplace_back(key, value());
      } else {
        if (!kwargs.empty()) fail(peek().col, "a positional argument after a keyword one");
        args.push_back(value());
      }
    }
    expect(")");
    if (peek().kind != Token::Kind::End) fail(peek().col, "expected the end of the line" + got());
    if (op.text == "output") {
      if (!name.empty()) fail(name_col, "output(...) has no name");
      for (size_t i = 0; i < args.size(); ++i)
        if (!args[i].is_node()) fail(cols[i], "output(...) takes nodes");
      outputs = std::move(args);
      return true;
    }
    if (op.text == "size") {
      if (name.empty()) fail(op.col, "size(HINT [, MIN]) needs a name: B = size(4)");
      if (args.empty() || args.size() > 2 || args[0].kind != Value::Kind::Int ||
          (args.size() == 2 && args[1].kind != Value::Kind::Int))
        fail(op.col, "size(HINT [, MIN]) takes one or two integers");
      const int64_t hint = args[0].i, min = args.size() == 2 ? args[1].i : std::min<int64_t>(2, hint);
      if (hint < 0 || min < 0 || min > hint) fail(op.col, "size(HINT, MIN): 0 <= MIN <= HINT");
      g_.symbols.push_back({name, hint, min, std::nullopt});
      sizes_.emplace(name, SymExpr::symbol(name));
      return false;
    }
    Node n;
    n.name = name.empty() ? fresh_name() : name;
    if (op.text == "input") {
      input(n, op, args, kwargs);
    } else if (op.text == "getitem") {
      getitem(n, op, args);
    } else {
      call(n, op, std::move(args), std::move(kwargs));
    }
    names_.emplace(n.name, static_cast<NodeId>(g_.nodes.size()));
    g_.nodes.push_back(std::move(n));
    return false;
  }

  Value value() {
    const Token t = next();
    switch (t.kind) {
      case Token::Kind::Int: return Value::of_int(t.i);
      case Token::Kind::Float: return Value::of_float(t.f);
      case Token::Kind::String: return Value::of_text(Value::Kind::Device, t.text);
      case Token::Kind::Punct:
        if (t.text == "[") {
          std::vector<Value> items;
          while (!is("]")) {
            if (!items.empty()) expect(",");
            items.push_back(value());
          }
          expect("]");
          return Value::of_list(std::move(items));
        }
        break;
      case Token::Kind::Ident: {
        if (const auto it = names_.find(t.text); it != names_.end()) return Value::of_node(it->second);
        if (const auto it = sizes_.find(t.text); it != sizes_.end()) return Value::of_sym(it->second);
        if (const auto d = parse_dtype(t.text)) return Value::of_dtype(*d);
        if (t.text == "true" || t.text == "false") return Value::of_bool(t.text == "true");
        if (t.text == "none") return Value::none();
        if (t.text == "inf") return Value::of_float(std::numeric_limits<double>::infinity());
        if (t.text.rfind("torch.", 0) == 0) return Value::of_text(Value::Kind::Enum, t.text);
        fail(t.col, "'" + t.text + "' names no node, size or dtype before this line");
      }
      case Token::Kind::End: break;
    }
    fail(t.col, "expected a value" + (t.kind == Token::Kind::End ? std::string(", got the end of the line")
                                                                  : ", got '" + t.text + "'"));
  }

  std::string fresh_name() {
    std::string s;
    do s = "n" + std::to_string(fresh_++);
    while (names_.count(s));
    return s;
  }

  std::vector<SymExpr> sizes_of(const Value& v, const Token& op) const {
    std::vector<SymExpr> out;
    if (v.kind != Value::Kind::List) fail(op.col, op.text + ": the shape is a list of sizes");
    for (const Value& x : v.list) {
      if (x.kind == Value::Kind::Int && x.i >= 0) out.push_back(SymExpr(x.i));
      else if (x.kind == Value::Kind::Sym) out.push_back(x.sym);
      else fail(op.col, op.text + ": a size is a non-negative integer or a name from size(...)");
    }
    return out;
  }

  // input(SHAPE [, DTYPE]): a placeholder, contiguous.
  void input(Node& n, const Token& op, const std::vector<Value>& args, const std::vector<std::pair<std::string, Value>>& kw) {
    if (args.empty() || args.size() > 2 || !kw.empty() || (args.size() == 2 && args[1].kind != Value::Kind::DType))
      fail(op.col, "input(SHAPE [, DTYPE]), e.g. input([4, 8], bfloat16)");
    n.op = "placeholder";
    n.role = Role::Input;
    n.result = Node::Result::Tensor;
    n.tensor.shape = sizes_of(args[0], op);
    n.tensor.dtype = args.size() == 2 ? args[1].dtype : DType::Float32;
    n.tensor.stride = contiguous_strides(n.tensor.shape);
  }

  // getitem(TUPLE, INDEX): one result of a tuple op.
  void getitem(Node& n, const Token& op, const std::vector<Value>& args) {
    if (args.size() != 2 || !args[0].is_node() || args[1].kind != Value::Kind::Int)
      fail(op.col, "getitem(NODE, INDEX)");
    const Node& t = g_.nodes[args[0].node];
    if (t.result != Node::Result::Tuple || args[1].i < 0 || static_cast<size_t>(args[1].i) >= t.outputs.size() ||
        t.outputs[static_cast<size_t>(args[1].i)].kind != OutputSlot::Kind::Tensor)
      fail(op.col, "getitem: '" + t.name + "' has no tensor result " + std::to_string(args[1].i));
    n.op = "getitem";
    n.has_args = true;
    n.args = args;
    n.result = Node::Result::Tensor;
    n.tensor = t.outputs[static_cast<size_t>(args[1].i)].tensor;
  }

  void call(Node& n, const Token& op, std::vector<Value> args, std::vector<std::pair<std::string, Value>> kwargs) {
    std::string why;
    const OpInfo* info = find_op_by_short_name(op.text, &why);
    if (!info) fail(op.col, why + " (`sator ops` lists them)");
    if (!info->shape_fn) fail(op.col, info->name + ": sator has no shape function for it");
    n.op = info->name;
    n.has_args = true;
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    try {
      ShapeProver prover(g_.symbols);
      InferContext ctx(g_, n, *info, prover);
      set_inferred_type(n, info->shape_fn(ctx));
    } catch (const ShapeError& e) {
      fail(op.col, e.what());
    }
    if (n.result == Node::Result::SymInt) return;
    const Node* in = !n.args.empty() && n.args[0].is_node() ? &g_.nodes[n.args[0].node] : nullptr;
    if (n.result == Node::Result::Tensor) {
      n.tensor.stride = strides(n, in, op);
      return;
    }
    if (in && in->result == Node::Result::Tensor)
      if (const auto pieces = view_pieces_strides(n, *in))
        for (size_t i = 0; i < pieces->size() && i < n.outputs.size(); ++i) n.outputs[i].tensor.stride = (*pieces)[i];
  }

  // PyTorch's strides for the result: a view's where its input's allow it
  // (view refuses otherwise, reshape copies), layout ops' from their input,
  // anything else contiguous.
  std::vector<SymExpr> strides(const Node& n, const Node* in, const Token& op) const {
    const std::vector<SymExpr> fresh = contiguous_strides(n.tensor.shape);
    if (!in || in->result != Node::Result::Tensor) return fresh;
    const bool view = n.op == "aten.view.default" || n.op == "aten._unsafe_view.default";
    if (view || n.op == "aten.reshape.default") {
      if (is_contiguous(in->tensor.shape, in->tensor.stride)) return fresh;
      std::vector<int64_t> shape, stride, new_shape;
      const auto constants = [](const std::vector<SymExpr>& v, std::vector<int64_t>& out) {
        for (const SymExpr& e : v) {
          if (!e.as_constant()) return false;
          out.push_back(*e.as_constant());
        }
        return true;
      };
      if (constants(in->tensor.shape, shape) && constants(in->tensor.stride, stride) &&
          constants(n.tensor.shape, new_shape))
        if (const auto s = view_strides(shape, stride, new_shape)) return std::vector<SymExpr>(s->begin(), s->end());
      if (view)
        fail(op.col, "view of '" + in->name +
                         "', whose strides do not allow these sizes: PyTorch refuses it (write reshape, which copies)");
      return fresh;
    }
    if (op_has(n.op, OpFact::Aliases))
      if (const auto s = layout_op_strides(n, *in)) return *s;
    // A clone keeps its input's layout unless told otherwise
    // (preserve_format), and TensorIterator lays a pointwise result out in
    // the order of its first input of the result's shape.
    bool keeps_layout = false;
    if (n.op == "aten.clone.default") {
      keeps_layout = true;
      for (const auto& [key, v] : n.kwargs)
        if (key == "memory_format" && v.kind == Value::Kind::Enum && v.s != "torch.preserve_format") keeps_layout = false;
    } else if (const OpInfo* info = find_op(n.op); info && info->cls == OpClass::Pointwise) {
      keeps_layout = in->tensor.shape == n.tensor.shape;
    }
    return keeps_layout ? clone_strides(g_, in->tensor) : fresh;
  }

  std::string file_;
  Graph g_;
  size_t line_ = 0, k_ = 0, fresh_ = 0;
  std::vector<Token> toks_;
  std::unordered_map<std::string, NodeId> names_;
  std::unordered_map<std::string, SymExpr> sizes_;
  const std::function<void(size_t, const std::string&)> fail_at_ = [this](size_t col, const std::string& m) { fail(col, m); };
};

}  // namespace

Graph read_text_graph(std::string_view text, const std::string& file_label) { return TextReader(file_label).read(text); }

Graph read_text_graph_file(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, kMaxRuleFileBytes);  // a few lines; a rule file's limit
  } catch (const InputFileError& e) {
    throw GraphError(path, "", e.what());
  }
  return read_text_graph(text, path);
}

}  // namespace sator
