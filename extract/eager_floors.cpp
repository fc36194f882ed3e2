// Eager PyTorch's per-op floor on the H200: the median time of each op over
// every node of the 38 calibration graphs (docs/results/calibration_h200.json,
// python/calibrate_costs.py; docs/cost-model.md). Most inference-shape ops
// sit on this floor, the host's dispatch; larger ones exceed it and the
// roofline kernel time decides.
#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "extract/roofline.h"

namespace sator::extract {

double h200_eager_floor_s(std::string_view op) {
  // {op, median microseconds}
  static constexpr std::pair<std::string_view, double> kFloors[] = {
      {"aten._scaled_dot_product_efficient_attention.default", 31.7},  // 2 timed
      {"aten.add.Tensor", 14.6},  // 417 timed
      {"aten.addmm.default", 31.8},  // 130 timed
      {"aten.alias.default", 4.4},  // 7 timed
      {"aten.amax.default", 17.4},  // 28 timed
      {"aten.bitwise_and.Tensor", 10.2},  // 4 timed
      {"aten.bmm.default", 20.1},  // 62 timed
      {"aten.cat.default", 16.4},  // 34 timed
      {"aten.clone.default", 16.0},  // 197 timed
      {"aten.convolution.default", 141.7},  // 2 timed
      {"aten.cos.default", 13.2},  // 6 timed
      {"aten.cumsum.default", 10.1},  // 2 timed
      {"aten.div.Tensor", 16.0},  // 39 timed
      {"aten.embedding.default", 21.9},  // 34 timed
      {"aten.erf.default", 14.1},  // 26 timed
      {"aten.exp.default", 17.3},  // 36 timed
      {"aten.expand.default", 8.3},  // 157 timed
      {"aten.full.default", 14.9},  // 6 timed
      {"aten.gather.default", 16.1},  // 4 timed
      {"aten.ge.Scalar", 14.1},  // 10 timed
      {"aten.index.Tensor", 31.3},  // 2 timed
      {"aten.le.Tensor", 14.2},  // 7 timed
      {"aten.lift_fresh_copy.default", 15.0},  // 10 timed
      {"aten.linear.default", 32.6},  // 122 timed
      {"aten.mean.default", 13.2},  // 18 timed
      {"aten.mean.dim", 17.0},  // 20 timed
      {"aten.mm.default", 27.8},  // 34 timed
      {"aten.mul.Tensor", 14.3},  // 425 timed
      {"aten.neg.default", 13.7},  // 32 timed
      {"aten.permute.default", 6.9},  // 409 timed
      {"aten.pow.Tensor_Scalar", 14.0},  // 46 timed
      {"aten.relu.default", 14.2},  // 4 timed
      {"aten.reshape.default", 7.7},  // 86 timed
      {"aten.rsqrt.default", 12.9},  // 104 timed
      {"aten.scalar_tensor.default", 18.0},  // 17 timed
      {"aten.scaled_dot_product_attention.default", 79.5},  // 28 timed
      {"aten.select.int", 3.9},  // 2 timed
      {"aten.sin.default", 13.0},  // 6 timed
      {"aten.slice.Tensor", 7.1},  // 83 timed
      {"aten.split.Tensor", 9.5},  // 30 timed
      {"aten.sub.Tensor", 14.5},  // 116 timed
      {"aten.sum.dim_IntList", 17.4},  // 28 timed
      {"aten.tanh.default", 14.5},  // 8 timed
      {"aten.unsqueeze.default", 5.5},  // 113 timed
      {"aten.var_mean.correction", 23.0},  // 84 timed
      {"aten.view.default", 7.3},  // 681 timed
      {"aten.where.self", 16.5},  // 17 timed
      {"prims.convert_element_type.default", 57.9},  // 59 timed
      {"prims.iota.default", 36.5},  // 37 timed
  };
  for (const auto& [name, us] : kFloors)
    if (name == op) return us * 1e-6;
  return -1.0;
}

}  // namespace sator::extract
