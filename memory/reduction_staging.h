// What an eager CUDA reduction allocates while it runs. ATen's reduction
// kernel (aten/src/ATen/native/cuda/Reduce.cuh) splits each output's
// inputs across thread blocks when there are few outputs and many inputs
// per output, and stages the blocks' partial results in a global buffer
// from the caching allocator, held for the kernel. When the reduced dims
// are not the fastest-moving ones (a bias gradient: a sum over the tokens
// of a [tokens, hidden] tensor) the buffer is sized per thread of a block
// row: 64 MiB for a [8192, 1024] sum over dim 0, 132 MiB for [8192, 4096],
// measured on the H100 (tests/data/reduction_workspace_h100.json), which
// the peak estimate would otherwise miss (OPT's training graphs, -7% to
// -10%). The model follows ATen's launch configuration for a Hopper GPU
// (132 SMs, 2,048 threads each: the H100 and the H200).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace sator::memory {

struct CudaReduction {
  std::vector<int64_t> shape, stride;  // the input's, in elements
  std::vector<bool> reduced;           // by dim
  int element_bytes = 4;               // the input's dtype
  int accumulator_bytes = 4;           // the kernel's arg_t
};

// The bytes the kernel's staging buffer and semaphores take (0 when it
// reduces within a block).
double cuda_reduction_staging_bytes(const CudaReduction& r, int sms = 132, int max_threads_per_sm = 2048);

// The staging bytes of node `n` of `g` run eagerly on the GPU: nonzero only
// for a reduction op (OpFact::CudaReduction) whose sizes are known at the hints.
double reduction_staging_bytes(const Graph& g, const Node& n);

}  // namespace sator::memory
