// sator never raises a graph's estimated peak memory. The extraction
// minimises estimated time, and a form that saves time can hold more memory
// at once (a sum of two biases computed once for every layer and kept alive
// across them). The guard writes each extraction in the order of least
// estimated peak (schedule/memory_schedule.h) and compares that peak
// (memory/peak_memory.h) with the input's. Where it is higher, new forms
// give way to the input's own a trial at a time (a form live at the peak,
// then connected regions of them: their e-nodes priced out, the extraction
// run again), each kept where it lowers the peak. If the peak still exceeds
// the input's, the input is kept. In a joint graph the values saved for
// the backward are held first: where the backward would read views that
// keep a larger base alive and the input's did not, the views are copied in
// the forward (schedule/saved_copies.h) — the whole-graph estimate's peak
// is often elsewhere and cannot see them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "pipeline/optimize.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

struct PeakGuard {
  bool declined = false;  // the input is kept (r.output is the input)
  std::string schedule;   // the order the output is written in (schedule/memory_schedule.h)
  std::vector<std::pair<std::string, double>> schedules_tried;  // each order and its estimated peak
  std::vector<std::pair<std::string, double>> schedules_given_up;  // each order given up, its peak then
};

// Extracts and writes r.output (with each output node's e-node in
// `enode_of`, none for the input kept), holding the estimated peak to the
// input's. Adds a line to r.declined saying what it gave up or traded.
PeakGuard hold_peak(const TensorEGraph& t, const Graph& input, const OptimizeOptions& options,
                    const std::function<double()>& seconds_left, OptimizeResult& r, std::vector<eg::Id>& enode_of);

}  // namespace sator::pipeline
