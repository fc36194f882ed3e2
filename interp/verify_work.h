// How much work the reference interpreter would do on a graph at the chosen
// symbol values: what `--verify` reads before it runs one (interp/verify.h).
#pragma once

#include <cstdint>

#include "interp/graph_eval.h"

namespace sator::interp {

// Elements of every tensor the graph computes (inputs and constants
// included): the interpreter's memory, roughly (8 bytes each).
int64_t graph_elements(const Graph& g, const SymbolValues& symbols);

// Multiply-adds of the graph's products (matmuls, attention, convolutions):
// the interpreter's time, roughly (about 10^9 a second a core, in float64).
double graph_products(const Graph& g, const SymbolValues& symbols);

}  // namespace sator::interp
