// Kernels that write into a copy of a tensor (the backward graphs' scatters)
// and padding: bound to the op table in op_kernels.cpp.
#pragma once

#include "interp/op_args.h"

namespace sator::interp {

EvalValue constant_pad_nd_op(const OpArgs& a);  // aten.constant_pad_nd
EvalValue slice_scatter_op(const OpArgs& a);    // aten.slice_scatter
EvalValue index_put_op(const OpArgs& a);        // aten.index_put (index tensors on leading dims)
EvalValue scatter_value_op(const OpArgs& a);    // aten.scatter.value

}  // namespace sator::interp
