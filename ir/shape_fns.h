// Shape-and-dtype functions, one file per op family (shape_fns_*.cpp).
// Each follows PyTorch's meta function for its op.
#pragma once

#include "ir/infer_context.h"

namespace sator::shape_fns {

// Helpers shared by the families.
std::vector<SymExpr> broadcast(InferContext& c, const std::vector<SymExpr>& a, const std::vector<SymExpr>& b);
SymExpr numel(const std::vector<SymExpr>& shape);

// layout
Inferred view(InferContext&);
Inferred permute(InferContext&);
Inferred transpose(InferContext&);
Inferred t(InferContext&);
Inferred expand(InferContext&);
Inferred identity(InferContext&);  // clone, alias, lift_fresh_copy
Inferred unsqueeze(InferContext&);
Inferred squeeze_dim(InferContext&);
Inferred slice(InferContext&);
Inferred select(InferContext&);
Inferred split(InferContext&);
Inferred chunk(InferContext&);
Inferred cat(InferContext&);
Inferred constant_pad_nd(InferContext&);
Inferred scatter_like(InferContext&);  // slice_scatter, select_scatter, index_put, scatter: self's type

// pointwise
Inferred binary_arith(InferContext&);      // add, sub, mul (Tensor and Scalar overloads)
Inferred true_divide(InferContext&);       // div
Inferred comparison(InferContext&);        // eq, ne, gt, ge, le, lt
Inferred bitwise(InferContext&);           // bitwise_and
Inferred unary_float(InferContext&);       // exp, erf, cos, sin, tanh, log, rsqrt, reciprocal
Inferred unary_same(InferContext&);        // neg, relu
Inferred logical_not(InferContext&);       // a bool of the same shape
Inferred pow_scalar(InferContext&);
Inferred where(InferContext&);
Inferred fma(InferContext&);
Inferred convert_element_type(InferContext&);

// reduction
Inferred amax(InferContext&);
Inferred sum(InferContext&);
Inferred sum_dim(InferContext&);
Inferred mean(InferContext&);
Inferred mean_dim(InferContext&);
Inferred var_mean(InferContext&);
Inferred cumsum(InferContext&);
Inferred softmax(InferContext&);  // aten._softmax, what sator emits for recomposed softmax
Inferred safe_softmax(InferContext&);  // aten._safe_softmax: SDPA's softmax (a row of -inf gives 0)
Inferred any_dim(InferContext&);  // aten.any.dim
Inferred gather(InferContext&);
Inferred index_tensor(InferContext&);

// matmul, convolution, attention
Inferred mm(InferContext&);
Inferred bmm(InferContext&);
Inferred addmm(InferContext&);
Inferred baddbmm(InferContext&);
Inferred matmul(InferContext&);  // what sator emits for recomposed batched matmuls
Inferred linear(InferContext&);  // and for recomposed nn.Linear
Inferred convolution(InferContext&);
Inferred convolution_backward(InferContext&);
Inferred sdpa_efficient(InferContext&);
Inferred sdpa_efficient_backward(InferContext&);
Inferred sdpa_cudnn(InferContext&);
Inferred sdpa_cudnn_backward(InferContext&);
Inferred sdpa(InferContext&);  // aten.scaled_dot_product_attention (what sator emits)

// creation, random, embedding, symbolic ints, tuples
Inferred full(InferContext&);
Inferred scalar_tensor(InferContext&);
Inferred iota(InferContext&);
Inferred rand(InferContext&);
Inferred inductor_random(InferContext&);
Inferred inductor_seeds(InferContext&);
Inferred inductor_lookup_seed(InferContext&);
Inferred embedding(InferContext&);
Inferred sym_mul(InferContext&);
Inferred sym_add(InferContext&);
Inferred sym_sub(InferContext&);
Inferred sym_neg(InferContext&);
Inferred sym_floordiv(InferContext&);
Inferred sym_size(InferContext&);
Inferred getitem(InferContext&);

}  // namespace sator::shape_fns
