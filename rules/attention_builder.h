// What the attention rules share (attention_rules.cpp, attention_train_rules.cpp):
// an e-graph node builder with shape and dtype queries, and the reading of
// attention's scores in their canonical form,
//   scores = [mask +] [scale ·] matmul(q, permute(k, last two swapped)),
// as q, k, the scale (a number, or a run-time 0-d tensor), the additive
// mask or the causal triangle. The other ways models write scores reach
// this form by small identities (rules/matmul.rules, rules/layout.rules).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "tensor/tensor_egraph.h"

namespace sator::rules {

using eg::Id;
using eg::kNoId;

struct AttentionBuilder {
  TensorEGraph& t;

  const std::vector<SymExpr>* shape(Id c) const { return t.analysis.shape(t.egraph, c); }
  std::optional<DType> dtype(const eg::EGraph& g, Id c) const {
    const TensorData& d = t.analysis.data(g.find(c));
    if (d.result != Node::Result::Tensor) return std::nullopt;
    return d.type.dtype;
  }
  bool equal(const SymExpr& a, const SymExpr& b) const { return t.prover.is_equal(a, b); }
  bool same_dims(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) const {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!equal(a[i], b[i])) return false;
    return true;
  }
  const NodeAttrs& attrs(const eg::EGraph& g, Id n) const { return t.lang.attrs(g.attr(n)); }
  // Nodes of class `cls` with operator `op` (collected: adding nodes may move the list).
  std::vector<Id> nodes(const eg::EGraph& g, Id cls, const char* op) const {
    std::vector<Id> out;
    const auto id = t.lang.find_op(op);
    if (!id) return out;
    for (Id n : g.class_nodes(cls))
      if (g.op(n) == *id) out.push_back(n);
    return out;
  }
  Id child(const eg::EGraph& g, Id n, size_t i) const { return g.find(g.children(n)[i]); }
  // The number a node multiplies or divides by (its second argument).
  std::optional<Value> scalar_arg(const eg::EGraph& g, Id n) const {
    const NodeAttrs& a = attrs(g, n);
    if (a.args.size() != 2 || g.children(n).size() != 1) return std::nullopt;
    const Value& v = a.args[1];
    if (v.kind != Value::Kind::Float && v.kind != Value::Kind::Int) return std::nullopt;
    return v;
  }
  static double number(const Value& v) { return v.kind == Value::Kind::Int ? static_cast<double>(v.i) : v.f; }

  Id add(eg::EGraph& g, const char* op, const NodeAttrs& a, std::vector<Id> kids) {
    return g.add(t.lang.op(op), t.lang.intern(a), kids);
  }
  Id matmul(eg::EGraph& g, Id a, Id b) {
    NodeAttrs at;
    at.args = {Value::of_node(0), Value::of_node(1)};
    return add(g, "aten.matmul.default", at, {a, b});
  }
  Id scalar_op(eg::EGraph& g, const char* op, Id x, const Value& c) {
    NodeAttrs at;
    at.args = {Value::of_node(0), c};
    return add(g, op, at, {x});
  }
};


// A size as an argument: an int when known, else its expression.
inline Value size_value(const SymExpr& e) { return e.as_constant() ? Value::of_int(*e.as_constant()) : Value::of_sym(e); }

// Whether the cuDNN attention kernels take these q, k, v (what the GPU
// machine ran them on: 16 bits, rank 4, one head count, a head dim of at
// most 128 that is a multiple of 8, the same for q·k and v).
bool cudnn_takes(const AttentionBuilder& b, const eg::EGraph& g, Id q, Id k, Id v);

// The last-two-dims transpose permutation of a rank-r tensor.
bool is_last_two_swap(const std::vector<int64_t>& dims);
// A dims argument as non-negative ints.
std::vector<int64_t> int_list(const Value& v, size_t rank);

// One reading of attention's scores, [mask +] [scale ·] matmul(q, kᵀ).
struct AttentionForm {
  Id q = kNoId, k = kNoId;  // k is [.., S, E]: kᵀ's source, permuted back where needed
  double scale = 1.0;       // the number scale (1 when none)
  std::optional<Value> scale_value;  // the number as written, when there is one
  Id scale_tensor = kNoId;  // a run-time 0-d scale (q must be scaled by it first)
  Id mask = kNoId;          // an additive mask to pass (kNoId: none, or causal)
  bool causal = false;      // the mask was the causal triangle
};

// Every reading of `scores` (4-D, of q's dtype) with k fitting `v`'s shape
// (v: [B, H, S, Ev]); may add the permute that writes k.
std::vector<AttentionForm> attention_forms(const std::shared_ptr<AttentionBuilder>& b, eg::EGraph& g, Id scores, Id v);

// Whether `sm_class` holds `_softmax(scores, -1)` or `_safe_softmax(scores, -1)`
// over the last of 4 dims, without a dtype change.
bool softmax_of(const std::shared_ptr<AttentionBuilder>& b, eg::EGraph& g, Id sm_class, Id scores);

}  // namespace sator::rules
