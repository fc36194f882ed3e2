// Kernels that write into a copy of a tensor (the backward graphs' scatters),
// padding and convolution: bound to the op table in op_kernels.cpp.
#pragma once

#include "interp/op_args.h"

namespace sator::interp {

EvalValue constant_pad_nd_op(const OpArgs& a);  // aten.constant_pad_nd
EvalValue slice_scatter_op(const OpArgs& a);    // aten.slice_scatter
EvalValue index_put_op(const OpArgs& a);        // aten.index_put (index tensors on leading dims)
EvalValue scatter_value_op(const OpArgs& a);    // aten.scatter.value
EvalValue select_scatter_op(const OpArgs& a);   // aten.select_scatter
EvalValue convolution_op(const OpArgs& a);      // aten.convolution (not transposed)
EvalValue convolution_backward_op(const OpArgs& a);

}  // namespace sator::interp
