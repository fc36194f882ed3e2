#include "ir/chunked_node.h"

#include <algorithm>
#include <stdexcept>

#include "ir/shape_check.h"

namespace sator {

namespace {

const Value& kwarg_or_throw(const Node& n, const char* key) {
  const Value* v = n.kwarg(key);
  if (!v) throw std::invalid_argument(std::string("missing kwarg \"") + key + "\"");
  return *v;
}

SymExpr size_value(const Value& v, const char* what) {
  if (v.kind == Value::Kind::Int) return SymExpr(v.i);
  if (v.kind == Value::Kind::Sym) return v.sym;
  throw std::invalid_argument(std::string(what) + " must be an integer or {\"sym\": ...}");
}

Value size_encoded(const SymExpr& e) {
  if (auto c = e.as_constant()) return Value::of_int(*c);
  return Value::of_sym(e);
}

}  // namespace

ChunkedSpec read_chunked_spec(const Node& n) {
  ChunkedSpec s;
  if (n.args.size() != 1 || !n.args[0].is_list()) throw std::invalid_argument("args must be [[inputs...]]");
  for (const Value& v : n.args[0].list) {
    if (!v.is_node()) throw std::invalid_argument("every input must be a node reference");
    s.inputs.push_back(v.node);
  }
  s.rows = size_value(kwarg_or_throw(n, "rows"), "\"rows\"");
  const Value& chunks = kwarg_or_throw(n, "chunks");
  if (chunks.kind != Value::Kind::Int || chunks.i < 1) throw std::invalid_argument("\"chunks\" must be a positive integer");
  s.chunks = chunks.i;
  const Value& sym = kwarg_or_throw(n, "row_symbol");
  if (sym.kind != Value::Kind::Str || sym.s.empty()) throw std::invalid_argument("\"row_symbol\" must be a symbol name");
  s.row_symbol = sym.s;
  const Value& ins = kwarg_or_throw(n, "inputs");
  if (!ins.is_list() || ins.list.size() != s.inputs.size())
    throw std::invalid_argument("\"inputs\" must have one entry per input");
  for (const Value& v : ins.list) {
    if (v.is_none()) {
      s.slices.push_back(std::nullopt);
      continue;
    }
    if (!v.is_list() || v.list.size() != 2 || v.list[0].kind != Value::Kind::Int)
      throw std::invalid_argument("an \"inputs\" entry must be null or [dim, per_row]");
    s.slices.push_back(ChunkSlice{v.list[0].i, size_value(v.list[1], "per_row")});
  }
  const Value& outs = kwarg_or_throw(n, "outputs");
  if (!outs.is_list()) throw std::invalid_argument("\"outputs\" must be a list");
  for (const Value& v : outs.list) {
    const bool ok = v.is_list() && !v.list.empty() && v.list[0].kind == Value::Kind::Str;
    if (ok && v.list[0].s == "sum" && v.list.size() == 1) {
      s.combines.push_back({ChunkCombine::Kind::Sum, 0, SymExpr(0)});
    } else if (ok && v.list[0].s == "cat" && v.list.size() == 3 && v.list[1].kind == Value::Kind::Int) {
      s.combines.push_back({ChunkCombine::Kind::Cat, v.list[1].i, size_value(v.list[2], "per_row")});
    } else {
      throw std::invalid_argument("an \"outputs\" entry must be [\"sum\"] or [\"cat\", dim, per_row]");
    }
  }
  return s;
}

void write_chunked_spec(const ChunkedSpec& s, Node& n) {
  n.op = kChunkedOp;
  n.has_args = true;
  std::vector<Value> ins;
  for (NodeId id : s.inputs) ins.push_back(Value::of_node(id));
  n.args = {Value::of_list(std::move(ins))};
  std::vector<Value> slices, combines;
  for (const auto& sl : s.slices)
    slices.push_back(sl ? Value::of_list({Value::of_int(sl->dim), size_encoded(sl->per_row)}) : Value::none());
  for (const ChunkCombine& c : s.combines)
    combines.push_back(c.kind == ChunkCombine::Kind::Sum
                           ? Value::of_list({Value::of_text(Value::Kind::Str, "sum")})
                           : Value::of_list({Value::of_text(Value::Kind::Str, "cat"), Value::of_int(c.dim),
                                             size_encoded(c.per_row)}));
  n.kwargs = {{"rows", size_encoded(s.rows)},
              {"chunks", Value::of_int(s.chunks)},
              {"row_symbol", Value::of_text(Value::Kind::Str, s.row_symbol)},
              {"inputs", Value::of_list(std::move(slices))},
              {"outputs", Value::of_list(std::move(combines))}};
}

Graph body_with_symbols(const Graph& outer, const Node& n, int64_t rows) {
  Graph body = n.body.at(0);
  std::vector<Symbol> symbols = outer.symbols;
  for (Symbol s : body.symbols) {
    const Value* row = n.kwarg("row_symbol");
    if (row && row->kind == Value::Kind::Str && s.name == row->s) {
      s.hint = rows;
      s.min = std::min<int64_t>(s.min.value_or(1), rows);
      if (s.max && *s.max < rows) s.max = rows;
    }
    symbols.push_back(std::move(s));
  }
  body.symbols = std::move(symbols);
  if (body.name.empty()) body.name = outer.name + "/" + n.name;
  return body;
}

std::vector<int64_t> chunk_bounds(int64_t rows, int64_t chunks) {
  std::vector<int64_t> b{0};
  if (rows <= 0) return b;
  const int64_t per = (rows + chunks - 1) / std::max<int64_t>(chunks, 1);
  for (int64_t r = per; r < rows; r += per) b.push_back(r);
  b.push_back(rows);
  return b;
}

std::string check_chunked_node(const Graph& g, NodeId id) {
  const Node& n = g.nodes[id];
  ChunkedSpec spec;
  try {
    spec = read_chunked_spec(n);
  } catch (const std::invalid_argument& e) {
    return std::string("sator.chunked: ") + e.what();
  }
  if (n.body.size() != 1) return "sator.chunked: needs exactly one body";
  const Graph& raw = n.body[0];
  const auto row = std::find_if(raw.symbols.begin(), raw.symbols.end(), [&](const Symbol& s) { return s.name == spec.row_symbol; });
  if (row == raw.symbols.end())
    return "sator.chunked: the body does not declare its row symbol '" + spec.row_symbol + "'";
  const Graph body = body_with_symbols(g, n, row->hint);
  ShapeProver prover(body.symbols);
  const ShapeCheckReport report = check_shapes(body, prover);
  if (!report.issues.empty())
    return "body node '" + body.nodes[report.issues.front().node].name + "': " + report.issues.front().message;
  const SymExpr k = SymExpr::symbol(spec.row_symbol);
  auto same_except = [&](const TensorType& a, const TensorType& b, int64_t dim, const SymExpr& a_dim,
                         const SymExpr& b_dim) -> bool {
    if (a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
    for (size_t i = 0; i < a.shape.size(); ++i) {
      if (static_cast<int64_t>(i) == dim) {
        if (!prover.is_equal(a.shape[i], a_dim) || !prover.is_equal(b.shape[i], b_dim)) return false;
      } else if (!prover.is_equal(a.shape[i], b.shape[i])) {
        return false;
      }
    }
    return true;
  };
  size_t input = 0;
  for (const Node& b : body.nodes) {
    if (b.op != "placeholder") continue;
    if (input >= spec.inputs.size()) return "sator.chunked: the body has more placeholders than inputs";
    const TensorType* outer = tensor_of(g, spec.inputs[input]);
    if (!outer || b.result != Node::Result::Tensor) return "sator.chunked: input #" + std::to_string(input) + " is not a tensor";
    const auto& sl = spec.slices[input];
    const int64_t dim = sl ? sl->dim : -1;
    if (sl && (dim < 0 || dim >= static_cast<int64_t>(outer->shape.size())))
      return "sator.chunked: input #" + std::to_string(input) + " is sliced along a dim it does not have";
    if (!same_except(b.tensor, *outer, dim, sl ? k * sl->per_row : SymExpr(0), sl ? spec.rows * sl->per_row : SymExpr(0)))
      return "sator.chunked: body placeholder '" + b.name + "' has shape " + shape_text(b.tensor.shape) +
             ", which does not fit input #" + std::to_string(input) + " " + shape_text(outer->shape);
    ++input;
  }
  if (input != spec.inputs.size()) return "sator.chunked: the body has fewer placeholders than inputs";
  const Node& out = body.nodes.back();
  const auto& results = out.args.at(0).list;
  if (results.size() != spec.combines.size() || n.result != Node::Result::Tuple || n.outputs.size() != results.size())
    return "sator.chunked: the body's outputs, \"outputs\" and the node's results differ in number";
  for (size_t i = 0; i < results.size(); ++i) {
    const TensorType* inner = results[i].is_node() ? tensor_of(body, results[i].node) : nullptr;
    if (!inner || n.outputs[i].kind != OutputSlot::Kind::Tensor) return "sator.chunked: output #" + std::to_string(i) + " is not a tensor";
    const ChunkCombine& c = spec.combines[i];
    const bool cat = c.kind == ChunkCombine::Kind::Cat;
    TensorType part = *inner;
    // A sum is taken in the result's dtype, which may be a wider float than
    // the body's (16-bit parts summed in float32, as the unchunked graph's
    // widening conversion after its matmul did).
    if (!cat && is_floating(part.dtype) && is_floating(n.outputs[i].tensor.dtype) &&
        dtype_bytes(n.outputs[i].tensor.dtype) > dtype_bytes(part.dtype))
      part.dtype = n.outputs[i].tensor.dtype;
    if (!same_except(part, n.outputs[i].tensor, cat ? c.dim : -1, cat ? k * c.per_row : SymExpr(0),
                     cat ? spec.rows * c.per_row : SymExpr(0)))
      return "sator.chunked: output #" + std::to_string(i) + " " + std::string(dtype_name(n.outputs[i].tensor.dtype)) +
             shape_text(n.outputs[i].tensor.shape) + " is not what " + (cat ? "concatenating" : "summing") + " the body's " +
             std::string(dtype_name(inner->dtype)) + shape_text(inner->shape) + " gives" +
             (cat ? "" : " (a sum may widen a float, not narrow it or change its kind)");
  }
  return {};
}

}  // namespace sator
