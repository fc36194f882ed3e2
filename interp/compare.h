// Running two graphs on the same random inputs and comparing their outputs:
// what check-rules' differential tests and `sator optimize --verify` do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/graph_eval.h"

namespace sator::interp {

// One tensor per tensor placeholder of `g`: floating inputs uniform in [-1, 1),
// integer and bool inputs 0 or 1 (valid token ids, masks and indices alike).
std::vector<Tensor64> random_inputs(const Graph& g, const SymbolValues& symbols, uint64_t seed);

// Symbols at small values within their ranges (3, 4, ...), so that whole
// models run in seconds: different where the hints differ (equal sizes could
// hide two swapped dims), equal where the hints are equal (one size under
// two names), in the hints' order.
SymbolValues small_symbols(const Graph& g);

// The largest relative error between two output lists (max_relative_error per
// tensor; numbers compared exactly, as relative error too). Throws
// InterpError if the lists differ in length, kind or a tensor's shape.
// Values below a millionth of the largest output are measured against that
// millionth (rounding noise at the graph's scale). `worst`, when given,
// receives the index of the output with that error.
// `noise`: the least of that floor (a graph whose outputs are all near zero).
double max_output_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b, size_t* worst = nullptr,
                        double noise = 1e-12);

struct GraphComparison {
  double max_error = 0.0;
  size_t outputs = 0;
  size_t worst_output = 0;  // index of the output with the largest error
  // Where that output differs most, when it is a tensor: its index ("[1, 0]")
  // and the two graphs' values there. The index is empty when the outputs
  // agree exactly.
  std::string witness_index;
  double witness_first = 0, witness_second = 0;
  // With EvalOptions::Precision::Dtype: the largest difference in units in
  // the last place of each output's dtype (max_ulp_error).
  double max_ulp = 0;
};

// The largest difference between two output lists in units in the last
// place of each tensor's dtype, at the larger of the two values' magnitude;
// values a thousandth of their tensor's largest magnitude or less are
// measured at that thousandth (a sum cancelling to nearly zero in 16 bits
// is all rounding). 0 for equal values.
double max_ulp_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b);
// Evaluates both graphs (same placeholders, in the same order) on the same
// random inputs and compares them.
GraphComparison compare_graphs(const Graph& a, const Graph& b, const SymbolValues& symbols, uint64_t seed,
                               const EvalOptions& options = {});

}  // namespace sator::interp
