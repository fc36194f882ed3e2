#include "interp/compare.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace sator::interp {

std::vector<Tensor64> random_inputs(const Graph& g, const SymbolValues& symbols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> bit(0, 1);
  std::vector<Tensor64> inputs;
  for (const InputSpec& spec : input_specs(g, symbols)) {
    Tensor64 t = Tensor64::filled(spec.shape, 0.0, spec.dtype);
    for (double& x : t.data) x = is_floating(spec.dtype) ? normal(rng) : static_cast<double>(bit(rng));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

SymbolValues small_symbols(const Graph& g) {
  SymbolValues values;
  int64_t next = 3;
  for (const Symbol& s : g.symbols) {
    int64_t v = next++;
    if (s.min) v = std::max(v, *s.min);
    if (s.max) v = std::min(v, *s.max);
    values[s.name] = v;
  }
  return values;
}

double max_output_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b) {
  if (a.size() != b.size())
    throw InterpError(std::to_string(a.size()) + " outputs against " + std::to_string(b.size()));
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string where = "output #" + std::to_string(i) + ": ";
    if (a[i].kind != b[i].kind) throw InterpError(where + "different kinds of value");
    if (a[i].kind == EvalValue::Kind::Tensor) {
      if (a[i].tensor.shape != b[i].tensor.shape) throw InterpError(where + "different shapes");
      worst = std::max(worst, max_relative_error(a[i].tensor, b[i].tensor));
    } else if (a[i].kind == EvalValue::Kind::Number) {
      const double d = std::abs(a[i].number - b[i].number) / std::max(std::abs(b[i].number), 1e-12);
      worst = std::max(worst, d);
    } else if (a[i].kind == EvalValue::Kind::Tuple) {
      worst = std::max(worst, max_output_error(a[i].items, b[i].items));
    }
  }
  return worst;
}

GraphComparison compare_graphs(const Graph& a, const Graph& b, const SymbolValues& symbols, uint64_t seed,
                               const EvalOptions& options) {
  const auto inputs = random_inputs(a, symbols, seed);
  const auto x = evaluate_graph(a, inputs, symbols, options);
  const auto y = evaluate_graph(b, inputs, symbols, options);
  return {max_output_error(y, x), x.size()};
}

}  // namespace sator::interp
