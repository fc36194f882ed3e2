// Eager PyTorch's host dispatch per op on the project's H200 machine: the
// host's time to dispatch one call of the op, the GPU kept busy meanwhile so
// the kernel's time is hidden, median over every node of that op in the 38
// calibration graphs (python/calibrate_costs.py; table regenerated with
//   python3 python/host_table.py CALIB.json GRAPH_DIR build/sator
// from docs/results/calibration_h200.json; docs/cost-model.md). "op:0d"
// entries are for 0-d results, where they dispatch much faster.
#include <string_view>

#include "cost/roofline.h"

namespace sator::cost {

namespace {
struct HostEntry {
  std::string_view op;
  double us;   // median microseconds
  int timed;   // nodes timed
};
}  // namespace

double h200_eager_host_s(std::string_view op) {
  static constexpr HostEntry kTable[] = {
      {"aten._scaled_dot_product_efficient_attention.default", 16.6, 2},
      {"aten.add.Tensor", 10.1, 417},
      {"aten.addmm.default", 20.0, 130},
      {"aten.alias.default", 2.4, 7},
      {"aten.amax.default", 11.6, 28},
      {"aten.bitwise_and.Tensor", 10.2, 4},
      {"aten.bmm.default", 13.5, 62},
      {"aten.cat.default", 11.7, 34},
      {"aten.clone.default", 11.8, 197},
      {"aten.convolution.default", 35.6, 2},
      {"aten.cos.default", 10.2, 6},
      {"aten.cumsum.default", 9.4, 2},
      {"aten.div.Tensor", 10.0, 39},
      {"aten.embedding.default", 13.6, 34},
      {"aten.erf.default", 8.8, 26},
      {"aten.exp.default", 8.9, 36},
      {"aten.expand.default", 4.9, 157},
      {"aten.full.default", 14.7, 4},
      {"aten.gather.default", 10.8, 4},
      {"aten.ge.Scalar", 9.9, 10},
      {"aten.index.Tensor", 31.4, 2},
      {"aten.le.Tensor", 10.7, 7},
      {"aten.lift_fresh_copy.default", 10.8, 10},
      {"aten.linear.default", 22.6, 122},
      {"aten.mean.default", 12.3, 18},
      {"aten.mean.dim", 13.6, 20},
      {"aten.mm.default", 22.1, 34},
      {"aten.mul.Tensor", 10.0, 425},
      {"aten.neg.default", 9.8, 32},
      {"aten.permute.default", 4.2, 409},
      {"aten.pow.Tensor_Scalar", 9.9, 46},
      {"aten.relu.default", 9.6, 4},
      {"aten.reshape.default", 5.0, 86},
      {"aten.rsqrt.default", 8.7, 104},
      {"aten.scalar_tensor.default", 12.6, 17},
      {"aten.scaled_dot_product_attention.default", 19.3, 28},
      {"aten.select.int", 3.3, 2},
      {"aten.sin.default", 8.9, 6},
      {"aten.slice.Tensor", 4.2, 83},
      {"aten.split.Tensor", 5.7, 30},
      {"aten.sub.Tensor", 10.0, 116},
      {"aten.sum.dim_IntList", 11.6, 28},
      {"aten.tanh.default", 8.6, 8},
      {"aten.unsqueeze.default", 3.2, 113},
      {"aten.var_mean.correction", 15.1, 84},
      {"aten.view.default", 4.4, 681},
      {"aten.where.self", 11.5, 17},
      {"prims.convert_element_type.default", 196.6, 10},
      {"prims.convert_element_type.default:0d", 40.7, 49},
      {"prims.iota.default", 23.7, 37},
  };
  for (const HostEntry& e : kTable)
    if (e.op == op) return e.us * 1e-6;
  return -1.0;
}

}  // namespace sator::cost
