// A chunkable region of a graph: the nodes that, fed a slice of rows of the
// amplifier's chunk dim, compute the matching slice of their own result
// (Sliced) or a part of a sum over the rows (Partial). Grown forward from the
// amplifier through pointwise ops (with broadcasting), reductions (over the
// chunked dim: sum becomes Partial), layout ops, matmuls (a contraction over
// the chunked dim becomes Partial), gather and scatter; through the backward
// of a joint graph as far as the same rules reach.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_prover.h"

namespace sator::chunk {

struct ChunkState {
  enum class Kind : uint8_t { Sliced, Partial } kind = Kind::Sliced;
  int64_t dim = 0;  // Sliced: the dim that holds the rows
  SymExpr size;     // Sliced: the dim's full size (rows * per_row)
};

// What the body needs of a node outside the region.
struct RegionInput {
  NodeId node;
  int64_t dim = -1;       // -1: whole; else sliced along dim
  SymExpr size;           // sliced: the dim's full size
  bool recreate = false;  // a creation op (`full`): built per chunk in the body
  bool operator==(const RegionInput& o) const { return node == o.node && dim == o.dim && recreate == o.recreate; }
};

struct Region {
  NodeId amplifier = 0;
  int64_t amplifier_dim = 0;
  SymExpr rows;                             // the row range: every Sliced size is rows * per_row
  std::vector<NodeId> nodes;                // in graph order
  std::vector<std::optional<ChunkState>> state;  // per graph node; set for region nodes
  std::vector<RegionInput> inputs;          // in first-use order
  std::vector<NodeId> outputs;              // region nodes used outside it, in graph order
  std::vector<std::vector<RegionInput>> needs;  // per entry of `nodes`: what it takes from outside
  SymExpr per_row(const SymExpr& size) const;  // size / rows (exact)
};

// Grows the region of `amplifier` chunked along `dim`, then keeps what pays:
// the nodes with a result at least `large_bytes`, what they depend on inside
// the region, and their direct consumers (which shrink the result back).
// nullopt with `why` set when nothing chunkable is found.
std::optional<Region> grow_region(const Graph& g, ShapeProver& prover, NodeId amplifier, int64_t dim,
                                  double large_bytes, std::string* why);

}  // namespace sator::chunk
