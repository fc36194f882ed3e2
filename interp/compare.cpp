#include "interp/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "interp/rounding.h"

namespace sator::interp {

std::vector<Tensor64> random_inputs(const Graph& g, const SymbolValues& symbols, uint64_t seed) {
  // splitmix64: fast enough for the hundred million weights of a whole model.
  uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  auto next = [&state]() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  std::vector<Tensor64> inputs;
  for (const InputSpec& spec : input_specs(g, symbols)) {
    Tensor64 t = Tensor64::filled(spec.shape, 0.0, spec.dtype);
    const bool floating = is_floating(spec.dtype);
    for (double& x : t.data) {
      const uint64_t r = next();
      x = floating ? static_cast<double>(r >> 11) * 0x1.0p-52 - 1.0 : static_cast<double>(r >> 63);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

SymbolValues small_symbols(const Graph& g) {
  // Symbols with equal hints get equal values (a graph may hold one size
  // under two names, e.g. a loss graph's logits and labels batch), and
  // larger hints larger values.
  std::map<int64_t, int64_t> by_hint;
  for (const Symbol& s : g.symbols) by_hint.emplace(s.hint, 0);
  int64_t next = 3;
  for (auto& [hint, value] : by_hint) value = next++;
  SymbolValues values;
  for (const Symbol& s : g.symbols) {
    int64_t v = by_hint.at(s.hint);
    if (s.min) v = std::max(v, *s.min);
    if (s.max) v = std::min(v, *s.max);
    values[s.name] = v;
  }
  return values;
}

namespace {

// The largest finite magnitude among the tensors and numbers of a list.
double largest_magnitude(const std::vector<EvalValue>& values) {
  double m = 0.0;
  for (const EvalValue& v : values) {
    if (v.kind == EvalValue::Kind::Tensor)
      for (double x : v.tensor.data)
        if (std::isfinite(x)) m = std::max(m, std::abs(x));
    if (v.kind == EvalValue::Kind::Number && std::isfinite(v.number)) m = std::max(m, std::abs(v.number));
    if (v.kind == EvalValue::Kind::Tuple) m = std::max(m, largest_magnitude(v.items));
  }
  return m;
}

double max_output_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b, double floor,
                        size_t* worst_index) {
  if (a.size() != b.size())
    throw InterpError(std::to_string(a.size()) + " outputs against " + std::to_string(b.size()));
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double before = worst;
    const std::string where = "output #" + std::to_string(i) + ": ";
    if (a[i].kind != b[i].kind) throw InterpError(where + "different kinds of value");
    if (a[i].kind == EvalValue::Kind::Tensor) {
      if (a[i].tensor.shape != b[i].tensor.shape) throw InterpError(where + "different shapes");
      worst = std::max(worst, max_relative_error(a[i].tensor, b[i].tensor, floor));
    } else if (a[i].kind == EvalValue::Kind::Number) {
      const double d = std::abs(a[i].number - b[i].number) / std::max(std::abs(b[i].number), floor);
      worst = std::max(worst, d);
    } else if (a[i].kind == EvalValue::Kind::Tuple) {
      worst = std::max(worst, max_output_error(a[i].items, b[i].items, floor, nullptr));
    }
    if (worst_index && worst > before) *worst_index = i;
  }
  return worst;
}

}  // namespace

double max_output_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b, size_t* worst_index,
                        double noise) {
  // Values a millionth of the largest output or less are measured against
  // that millionth: at that scale they are rounding noise whatever their
  // own size -- e.g. a gradient that is zero in exact arithmetic (a key
  // projection's bias under softmax) comes out as 1e-12 in either graph.
  return max_output_error(a, b, std::max(noise, 1e-6 * largest_magnitude(b)), worst_index);
}

double max_ulp_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].kind == EvalValue::Kind::Tuple && b[i].kind == EvalValue::Kind::Tuple)
      worst = std::max(worst, max_ulp_error(a[i].items, b[i].items));
    if (a[i].kind != EvalValue::Kind::Tensor || b[i].kind != EvalValue::Kind::Tensor) continue;
    const Tensor64 &x = a[i].tensor, &y = b[i].tensor;
    if (x.data.size() != y.data.size()) continue;
    const DType t = x.dtype == y.dtype ? x.dtype : DType::Float64;
    if (ulp_at(1.0, t) == 0) continue;
    double largest = 0;
    for (size_t k = 0; k < x.data.size(); ++k) largest = std::max({largest, std::abs(x.data[k]), std::abs(y.data[k])});
    const double floor = 1e-3 * largest;
    for (size_t k = 0; k < x.data.size(); ++k) {
      if (x.data[k] == y.data[k]) continue;
      const double d = std::abs(x.data[k] - y.data[k]);
      if (std::isnan(d)) return INFINITY;
      worst = std::max(worst, d / ulp_at(std::max({std::abs(x.data[k]), std::abs(y.data[k]), floor}), t));
    }
  }
  return worst;
}

GraphComparison compare_graphs(const Graph& a, const Graph& b, const SymbolValues& symbols, uint64_t seed,
                               const EvalOptions& options) {
  const auto inputs = random_inputs(a, symbols, seed);
  const auto x = evaluate_graph(a, inputs, symbols, options);
  const auto y = evaluate_graph(b, inputs, symbols, options);
  GraphComparison c;
  c.outputs = x.size();
  c.max_error = max_output_error(y, x, &c.worst_output);
  if (options.precision == EvalOptions::Precision::Dtype) c.max_ulp = max_ulp_error(y, x);
  if (c.max_error > 0 && c.worst_output < x.size() && x[c.worst_output].kind == EvalValue::Kind::Tensor &&
      y[c.worst_output].kind == EvalValue::Kind::Tensor && x[c.worst_output].tensor.shape == y[c.worst_output].tensor.shape) {
    // The element with the largest absolute difference, with its index.
    const Tensor64 &tx = x[c.worst_output].tensor, &ty = y[c.worst_output].tensor;
    size_t at = 0;
    double most = -1;
    for (size_t k = 0; k < tx.data.size(); ++k) {
      const double d = std::abs(tx.data[k] - ty.data[k]);
      if (std::isnan(d) ? most < INFINITY : d > most) {
        most = std::isnan(d) ? INFINITY : d;
        at = k;
      }
    }
    std::vector<int64_t> index(tx.shape.size());
    size_t rest = at;
    for (size_t d = tx.shape.size(); d-- > 0;) {
      index[d] = static_cast<int64_t>(rest % static_cast<size_t>(std::max<int64_t>(tx.shape[d], 1)));
      rest /= static_cast<size_t>(std::max<int64_t>(tx.shape[d], 1));
    }
    std::ostringstream s;
    s << "[";
    for (size_t d = 0; d < index.size(); ++d) s << (d ? ", " : "") << index[d];
    s << "]";
    c.witness_index = s.str();
    c.witness_first = tx.data.empty() ? 0.0 : tx.data[at];
    c.witness_second = ty.data.empty() ? 0.0 : ty.data[at];
  }
  return c;
}

}  // namespace sator::interp
