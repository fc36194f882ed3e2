#include "memory/reduction_staging.h"

#include <algorithm>
#include <numeric>

#include "ir/op_table.h"

namespace sator::memory {

namespace {

int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The largest power of two not above n (at least 1).
int64_t last_pow2(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

struct Dim {
  int64_t size, in_stride, out_stride;
  bool reduced;
};

// TensorIterator's view of the reduction: size-1 dims dropped, reduced dims
// first (ordered by the input's strides), then the output's dims fastest
// first (the output is a fresh contiguous tensor), adjacent dims merged
// where both operands step through them as one.
std::vector<Dim> iterator_dims(const CudaReduction& r) {
  std::vector<Dim> dims;
  int64_t out_stride = 1;
  for (size_t i = r.shape.size(); i-- > 0;) {
    if (r.shape[i] == 1) continue;
    dims.push_back({r.shape[i], r.stride[i], r.reduced[i] ? 0 : out_stride, r.reduced[i]});
    if (!r.reduced[i]) out_stride *= r.shape[i];
  }
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) {
    if (a.reduced != b.reduced) return a.reduced;
    if (!a.reduced) return a.out_stride < b.out_stride;
    return a.in_stride < b.in_stride;
  });
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& m = merged.back();
      if (m.reduced == d.reduced && m.size * m.in_stride == d.in_stride && m.size * m.out_stride == d.out_stride) {
        m.size *= d.size;
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

}  // namespace

double cuda_reduction_staging_bytes(const CudaReduction& r, int sms, int max_threads_per_sm) {
  if (r.shape.size() != r.stride.size() || r.shape.size() != r.reduced.size()) return 0;
  const std::vector<Dim> dims = iterator_dims(r);
  size_t nr = 0;
  while (nr < dims.size() && dims[nr].reduced) ++nr;
  if (nr == 0) return 0;  // nothing reduced: a copy
  int64_t num_outputs = 1, inputs_per_output = 1;
  for (size_t i = 0; i < dims.size(); ++i) (i < nr ? inputs_per_output : num_outputs) *= dims[i].size;
  const bool on_fastest = nr == dims.size() || dims[0].in_stride < dims[nr].in_stride;
  int64_t dim0 = on_fastest ? inputs_per_output : num_outputs;
  const int64_t dim1 = on_fastest ? num_outputs : inputs_per_output;
  const int64_t fastest_stride = on_fastest ? dims[0].in_stride : dims[nr].in_stride;

  // Vectorized loads: along the input (4 values of one output) or along
  // the output (up to 4 outputs, where sizes and strides allow).
  int64_t output_vec = 1;
  if (fastest_stride == 1) {
    if (on_fastest && dim0 > 128 && nr == 1) {
      dim0 /= 4;
    } else if (!on_fastest) {
      output_vec = 4;
      auto fit = [&](int64_t n) {
        while (output_vec > 1 && n % output_vec != 0) output_vec /= 2;
      };
      fit(dims[nr].size);
      for (size_t j = 0; j < dims.size(); ++j)
        if (j != nr) fit(dims[j].in_stride);
      dim0 /= output_vec;
    }
  }

  // set_block_dimension: block.x along dim0 (at most a warp first), block.y along dim1.
  const int64_t max_threads = 512 / output_vec;
  const int64_t dim0_pow2 = dim0 < max_threads ? last_pow2(dim0) : max_threads;
  const int64_t dim1_pow2 = dim1 < max_threads ? last_pow2(dim1) : max_threads;
  int64_t block_x = std::min<int64_t>(dim0_pow2, 32);
  const int64_t block_y = std::min<int64_t>(dim1_pow2, max_threads / block_x);
  block_x = std::min<int64_t>(dim0_pow2, max_threads / block_y);
  const int64_t threads = block_x * block_y;

  int64_t step_input = 1, step_output = 1;
  (on_fastest ? step_input : step_output) *= block_x;
  const auto values_per_thread = [&] { return div_up(inputs_per_output, step_input); };
  bool warps_split_input = false;
  if (values_per_thread() >= std::min<int64_t>(block_y * 16, 256)) {
    step_input *= block_y;
    warps_split_input = true;
  } else {
    step_output *= block_y;
  }
  const int64_t grid_x = div_up(num_outputs / output_vec, step_output);
  const int64_t target_grid = static_cast<int64_t>(sms) * (max_threads_per_sm / threads);
  if (!warps_split_input || values_per_thread() < 256 || grid_x > target_grid) return 0;
  const int64_t ctas = std::max(std::min(div_up(target_grid, grid_x), div_up(values_per_thread(), 16)),
                                div_up(values_per_thread(), 256));
  if (ctas <= 1) return 0;
  double bytes = static_cast<double>(r.accumulator_bytes) * static_cast<double>(num_outputs) * static_cast<double>(ctas);
  if (!on_fastest) bytes *= static_cast<double>(block_x * output_vec);  // a slot per thread of a block row
  return bytes + 4.0 * static_cast<double>(grid_x);                      // and a semaphore per block column
}

double reduction_staging_bytes(const Graph& g, const Node& n) {
  if (!op_has(n.op, OpFact::CudaReduction) || n.args.empty() || !n.args[0].is_node()) return 0;
  const Node& in = g.nodes[n.args[0].node];
  if (in.result != Node::Result::Tensor || in.tensor.stride.size() != in.tensor.shape.size()) return 0;
  CudaReduction r;
  for (size_t i = 0; i < in.tensor.shape.size(); ++i) {
    const int64_t size = at_hints(g, in.tensor.shape[i]), stride = at_hints(g, in.tensor.stride[i]);
    if (size <= 0) return 0;
    r.shape.push_back(size);
    r.stride.push_back(stride);
  }
  const size_t rank = r.shape.size();
  // The reduced dims: the dim argument (a list or one int), or all of them.
  r.reduced.assign(rank, false);
  const Value* dims = n.args.size() > 1 ? &n.args[1] : nullptr;
  if (const Value* kw = n.kwarg("dim")) dims = kw;
  auto mark = [&](const Value& v) {
    if (v.kind != Value::Kind::Int) return false;
    const int64_t d = v.i < 0 ? v.i + static_cast<int64_t>(rank) : v.i;
    if (d < 0 || d >= static_cast<int64_t>(rank)) return false;
    r.reduced[static_cast<size_t>(d)] = true;
    return true;
  };
  if (!dims || dims->is_none() || (dims->is_list() && dims->list.empty())) {
    r.reduced.assign(rank, true);
  } else if (dims->is_list()) {
    for (const Value& v : dims->list)
      if (!mark(v)) return 0;
  } else if (!mark(*dims)) {
    return 0;
  }
  r.element_bytes = static_cast<int>(dtype_bytes(in.tensor.dtype));
  const bool wide = in.tensor.dtype == DType::Float64 || !is_floating(in.tensor.dtype);
  r.accumulator_bytes = wide ? 8 : 4;
  if (op_has(n.op, OpFact::WelfordReduction)) r.accumulator_bytes = wide ? 32 : 16;  // mean, m2, count, count as float
  if (op_has(n.op, OpFact::IndexReduction)) r.accumulator_bytes = 16;                // value and int64 index
  return cuda_reduction_staging_bytes(r);
}

}  // namespace sator::memory
