#include "interp/chunked_eval.h"

#include "interp/layout_kernels.h"
#include "interp/math_kernels.h"
#include "ir/chunked_node.h"

namespace sator::interp {

EvalValue evaluate_chunked(const Graph& g, const Node& n, const std::vector<EvalValue>& values,
                           const std::function<int64_t(const SymExpr&)>& concrete, const SymbolValues& symbols,
                           const EvalOptions& options) {
  ChunkedSpec spec;
  try {
    spec = read_chunked_spec(n);
  } catch (const std::invalid_argument& e) {
    throw InterpError(e.what());
  }
  const int64_t rows = concrete(spec.rows);
  const std::vector<int64_t> bounds = chunk_bounds(rows, spec.chunks);
  std::vector<std::vector<Tensor64>> parts(spec.combines.size());
  std::vector<Tensor64> sums(spec.combines.size());
  for (size_t c = 0; c + 1 < bounds.size(); ++c) {
    const int64_t a = bounds[c], b = bounds[c + 1];
    std::vector<Tensor64> inputs;
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
      const EvalValue& v = values.at(spec.inputs[i]);
      if (v.kind != EvalValue::Kind::Tensor) throw InterpError("input #" + std::to_string(i) + " is not a tensor");
      if (!spec.slices[i]) {
        inputs.push_back(v.tensor);
        continue;
      }
      const int64_t per_row = concrete(spec.slices[i]->per_row);
      inputs.push_back(slice(v.tensor, spec.slices[i]->dim, a * per_row, b * per_row, 1));
    }
    SymbolValues inner = symbols;
    for (const Symbol& s : g.symbols)
      if (!inner.count(s.name)) inner[s.name] = concrete(SymExpr::symbol(s.name));
    inner[spec.row_symbol] = b - a;
    const std::vector<EvalValue> out = evaluate_graph(body_with_symbols(g, n, b - a), inputs, inner, options);
    if (out.size() != spec.combines.size()) throw InterpError("the body returned the wrong number of results");
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].kind != EvalValue::Kind::Tensor) throw InterpError("the body's result #" + std::to_string(i) + " is not a tensor");
      if (spec.combines[i].kind == ChunkCombine::Kind::Cat) parts[i].push_back(out[i].tensor);
      else if (c == 0) {
        sums[i] = out[i].tensor;
        sums[i].dtype = n.outputs.at(i).tensor.dtype;  // a 16-bit part summed in float32: widening is exact
      } else {
        sums[i] = zip(sums[i], out[i].tensor, [](double x, double y) { return x + y; }, sums[i].dtype);
      }
    }
  }
  std::vector<EvalValue> results;
  for (size_t i = 0; i < spec.combines.size(); ++i)
    results.push_back(EvalValue::of_tensor(spec.combines[i].kind == ChunkCombine::Kind::Cat
                                               ? cat(parts[i], spec.combines[i].dim)
                                               : sums[i]));
  return EvalValue::of_tuple(std::move(results));
}

}  // namespace sator::interp
