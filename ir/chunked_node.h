// `sator.chunked`: a subgraph run once per chunk of a row range (issue 8;
// docs/graph-format.md, "Chunked regions"). Its kwargs say how: `rows` (the
// length R of the row range), `chunks` (C), `row_symbol` (the body's symbol
// for the rows of the current chunk), `inputs` (per argument: `[dim, per_row]`
// when chunk rows [a, b) see elements [a*per_row, b*per_row) of `dim`, or
// null when the body sees it whole) and `outputs` (per result: `["cat", dim,
// per_row]`, the chunks' results concatenated along `dim`, or `["sum"]`, their
// sum, taken in the result's dtype: a float result may be wider than the
// body's part, a 16-bit part widened as it is added). Chunks are ceil(R / C)
// rows each; the last takes what is left.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_prover.h"

namespace sator {

inline constexpr const char* kChunkedOp = "sator.chunked";

struct ChunkSlice {
  int64_t dim = 0;
  SymExpr per_row;  // elements of `dim` per row of the range
};

struct ChunkCombine {
  enum class Kind : uint8_t { Cat, Sum } kind = Kind::Cat;
  int64_t dim = 0;   // Cat
  SymExpr per_row;   // Cat
};

struct ChunkedSpec {
  SymExpr rows;
  int64_t chunks = 1;
  std::string row_symbol;
  std::vector<NodeId> inputs;                     // the arguments, in order
  std::vector<std::optional<ChunkSlice>> slices;  // per input; nullopt: whole
  std::vector<ChunkCombine> combines;             // per output
};

// Reads a sator.chunked node's arguments; throws GraphError-free
// std::invalid_argument saying what is malformed.
ChunkedSpec read_chunked_spec(const Node& n);
// The kwargs and args that encode `spec` (inverse of read_chunked_spec).
void write_chunked_spec(const ChunkedSpec& spec, Node& n);

// The body with the outer graph's symbols visible (what shape checks,
// interpreters and estimators run), its row symbol's hint set to `rows`.
Graph body_with_symbols(const Graph& outer, const Node& n, int64_t rows);

// Row boundaries of the chunks for a concrete row count: C+1 values from 0 to
// `rows` (fewer chunks when rows < C).
std::vector<int64_t> chunk_bounds(int64_t rows, int64_t chunks);

// Empty when the node is consistent: its body shape-checks, has one
// placeholder per input whose shape is the input's (sliced dims as
// row_symbol*per_row), and its outputs combine into the recorded results.
std::string check_chunked_node(const Graph& g, NodeId id);

}  // namespace sator
