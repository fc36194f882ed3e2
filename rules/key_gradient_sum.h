// Attention's key gradient sums to zero over the keys.
//
// Softmax ignores a shift of its row: P = softmax(s + c·1) = softmax(s). So
// the scores' gradient sums to zero along each row,
//   Σ_j dS_ij = Σ_j P_ij (dP_ij − Σ_k P_ik dP_ik) = 0,
// and with dK_j = scale · Σ_i dS_ij q_i, Σ_j dK_j = 0 for every query block:
// whatever is added to every key (a key projection's bias) gets no gradient.
// (Dropout keeps it: the backward's D_i = dO_i·O_i is Σ_j P_ij dP_ij with the
// forward's mask.) In floating point the kernel's dK does not cancel exactly
// — and the efficient kernel, recomputing P from the log-sum-exp, cancels
// worse than the decomposed graph — so a graph that sums dK over the keys
// (the key bias's gradient: sum over batch and positions of dK viewed
// [B·S, H·E]) computes rounding noise, and pays a reduction over all of dK
// for it.
//
// Rule `key-gradient-sum-zero`: sum(x, dims) where x reaches
// getitem(_scaled_dot_product_efficient_attention_backward(dO, q, k, v, [m],
// O, lse, seed, offset, ...), 1) — the backward of a forward kernel on the
// same q, k, v, [m], p, causal and scale whose O, lse, seed and offset it takes —
// through views (merging or splitting dims), permutes, keepdim sums (the
// backward of grouped-query attention's repeat_kv) and adds of same-shaped
// terms, with the keys' axis among the summed dims, equals the same sum
// without that term: the other terms' sums (moved through the same views,
// permutes and sums), or zeros (aten.full on the graph's device) when no term
// is left. Below a view that splits a dim the sum covers only in part, only
// a zero carries over. It holds where the kernels' outputs are finite (a row
// masked whole with -inf is NaN in the decomposed graph).
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"
#include "rules/layout_rules.h"

namespace sator::rules {

const std::vector<RuleInfo>& key_gradient_rule_info();
std::vector<eg::Rewrite> key_gradient_rules(TensorEGraph& t);

}  // namespace sator::rules
