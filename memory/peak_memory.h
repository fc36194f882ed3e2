// Peak memory of a graph run in its node order: inputs and parameters are
// held throughout, each intermediate's storage is freed after the last use
// of any view of it, outputs are kept. Views (view, permute, expand, slice,
// split's pieces, ...) share their base's storage; `reshape` shares it when
// its input is contiguous and copies otherwise. Sizes at the symbols' hints.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace sator::memory {

struct LiveTensor {
  NodeId node;   // the node whose result owns the storage
  double bytes;
};

struct PeakMemory {
  double peak_bytes = 0;    // the most bytes live at once
  NodeId peak_node = 0;     // the node whose allocation reached it
  double input_bytes = 0;   // placeholders (held throughout)
  double output_bytes = 0;  // storages the outputs keep
  std::vector<double> live_after;  // per node: bytes live once it ran and what it ended was freed
  std::vector<LiveTensor> at_peak;  // the storages live at the peak, largest first
};

PeakMemory estimate_peak_memory(const Graph& g);

// The bytes a tensor of `g` takes at the symbols' hints.
double tensor_bytes(const Graph& g, const TensorType& t);

// The storages a graph's nodes allocate, as the estimate counts them: one
// per tensor result (a tuple's: one per tensor slot) of a node that is not a
// view of its first argument's storage; and what each node holds while it
// runs (a chunked node's body, an eager temporary, a reduction's staging
// buffer), the same in every order.
struct Storages {
  std::vector<double> bytes;                // by storage
  std::vector<NodeId> owner;                // by storage: the node that allocates it
  std::vector<std::vector<int64_t>> refers; // by node: the storage of each result (-1: none)
  std::vector<double> transient;            // by node: what it holds while it runs beyond its results
};
Storages storages_of(const Graph& g);

// The peak estimate_peak_memory would give g with its nodes run in `order`
// (a topological order of all of them), without writing that graph:
// schedules compare orders by it. `st` is storages_of(g).
double peak_bytes_in_order(const Graph& g, const Storages& st, const std::vector<NodeId>& order);

// What a sator.chunked node allocates while a chunk runs, beyond its results:
// its body's peak at the largest chunk, less the body's inputs (slices of the
// node's inputs, no new memory). At the peak it is listed under the node.
double chunked_transient_bytes(const Graph& g, const Node& n);

}  // namespace sator::memory
