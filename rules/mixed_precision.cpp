#include "rules/mixed_precision.h"

#include "ir/op_table.h"

#include <memory>
#include <optional>

#include "rules/attention_builder.h"
#include "rules/causal_mask.h"
#include "rules/mask_algebra.h"

namespace sator::rules {

using eg::Subst;

const std::vector<RuleInfo>& mixed_precision_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"softmax-mask-in-16-bit",
       "convert(_softmax(x + m, d), t) = _softmax(x + convert(clamp(m, lowest(t)), t), d) for x of 16-bit type t and "
       "a float32 mask m of zeros and masking values (<= -2^100): exact; a real-valued bias is left alone"},
      {"mask-add-in-16-bit",
       "convert(x + m, t) = x + convert(m, t) for x of 16-bit type t and a float32 mask m of zeros and masking values "
       "(<= -2^100): exact (x + 0 is x; x + m rounds to m's own rounding, -inf where m is float32's min, for |x| "
       "below half m's float32 ulp); a real-valued bias is left alone"},
      {"attention-on-16-bit-upcasts",
       "convert(scaled_dot_product_attention(convert(q, float32), convert(k, float32), convert(v, float32), ...), t) "
       "= scaled_dot_product_attention(q, k, v, ...) for 16-bit q, k, v of type t (SDPA's math path under autocast): "
       "the kernels' float32 accumulation, P rounded to t before P·v (within the output's own rounding to t)"},
  };
  return info;
}

namespace {

// The most negative finite value of a 16-bit float type.
double lowest(DType t) { return t == DType::BFloat16 ? -3.3895313892515355e38 : -65504.0; }

// Whether every value of class `m` is 0 or a masking value (<= -2^100, or
// -inf): what casting to 16 bits keeps exactly once the negatives are
// clamped. Followed through where, add, and one-tensor layout ops and casts;
// anything else (a real-valued bias: ALiBi, relative positions) is not known
// to be, and rounding it to 16 bits is not exact — an ALiBi bias of ~1400
// has a bf16 ulp of 8, which changed MPT's logits by 28% on the zoo.
bool zero_or_masking(AttentionBuilder& b, eg::EGraph& g, Id m, int depth = 0) {
  m = g.find(m);
  if (const auto v = b.t.analysis.constant(g, m)) return *v == 0 || *v <= kMaskingConstantAtMost;
  if (depth > 24) return false;
  // Ops that pick elements of their input keep a mask's values; a cast
  // keeps zeros and rounds masking values to masking values.
  for (const Id n : g.class_nodes(m))
    if (const std::string& op = b.t.lang.op_name(g.op(n));
        op_has(op, OpFact::PicksElements) || op == "prims.convert_element_type.default")
      if (!g.children(n).empty() && zero_or_masking(b, g, b.child(g, n, 0), depth + 1)) return true;
  for (Id n : b.nodes(g, m, "aten.where.self"))
    if (g.children(n).size() == 3 && zero_or_masking(b, g, b.child(g, n, 1), depth + 1) &&
        zero_or_masking(b, g, b.child(g, n, 2), depth + 1))
      return true;
  for (Id n : b.nodes(g, m, "aten.add.Tensor"))
    if (g.children(n).size() == 2 && b.attrs(g, n).kwargs.empty() && zero_or_masking(b, g, b.child(g, n, 0), depth + 1) &&
        zero_or_masking(b, g, b.child(g, n, 1), depth + 1))
      return true;
  return false;
}

// `m` as type t: negatives below t's lowest finite value clamped to it first
// (float32's min would overflow to -inf), unless `m` is the causal triangle
// (no fully masked row) or adds 0 everywhere, which the attention rule
// recognises through a plain convert. kNoId for a mask whose values are not known to be
// 0 or masking (it would be rounded).
Id mask_in(AttentionBuilder& b, eg::EGraph& g, Id m, DType t, const std::optional<Value>& device) {
  Id src = m;
  if (classify_mask(b.t, m) == MaskKind::Other) {
    if (!zero_or_masking(b, g, m)) return kNoId;
    if (!device) return kNoId;  // the clamp's scalar would land on the CPU
    NodeAttrs lt;
    lt.args = {Value::of_node(0), Value::of_float(lowest(t))};
    const Id below = b.add(g, "aten.lt.Scalar", lt, {m});
    NodeAttrs fa;
    fa.args = {Value::of_list({}), Value::of_float(lowest(t))};
    fa.kwargs = {{"dtype", Value::of_dtype(DType::Float32)},
                 {"layout", Value::of_text(Value::Kind::Enum, "torch.strided")},
                 {"device", *device},
                 {"pin_memory", Value::of_bool(false)}};
    const Id floor = b.add(g, "aten.full.default", fa, {});
    NodeAttrs wa;
    wa.args = {Value::of_node(0), Value::of_node(1), Value::of_node(2)};
    src = b.add(g, "aten.where.self", wa, {below, floor, m});
  }
  NodeAttrs ca;
  ca.args = {Value::of_node(0), Value::of_dtype(t)};
  return b.add(g, "prims.convert_element_type.default", ca, {src});
}

}  // namespace

bool zero_or_masking_values(TensorEGraph& t, eg::Id m) {
  AttentionBuilder b{t};
  return zero_or_masking(b, t.egraph, m);
}

std::vector<eg::Rewrite> mixed_precision_rules(TensorEGraph& t) {
  auto b = std::make_shared<AttentionBuilder>(AttentionBuilder{t});
  const std::optional<Value> device = graph_device(t.source());
  std::vector<eg::Rewrite> rs;
  rs.emplace_back(
      "softmax-mask-in-16-bit", t.lang,
      "(prims.convert_element_type.default (aten._softmax.default (aten.add.Tensor ?x ?m)))",
      [b, device](eg::EGraph& g, Id eclass, Subst s) -> Id {
        const auto t16 = b->dtype(g, eclass);
        if (!t16 || (*t16 != DType::BFloat16 && *t16 != DType::Float16)) return kNoId;
        if (b->dtype(g, s[0]) != t16 || b->dtype(g, s[1]) != DType::Float32) return kNoId;
        const auto* sx = b->shape(s[0]);
        if (!sx) return kNoId;
        const std::vector<SymExpr> x_shape = *sx;  // copied: adding nodes may move the analysis' storage
        // The softmax (its dim; no half_to_float) of the add (no alpha) of x and m,
        // where m broadcasts into x's shape.
        std::optional<int64_t> dim;
        for (Id sm : b->nodes(g, b->child(g, s.root, 0), "aten._softmax.default")) {
          const NodeAttrs& a = b->attrs(g, sm);
          if (a.args.size() != 3 || a.args[2].kind != Value::Kind::Bool || a.args[2].b) continue;
          const Id sum = b->child(g, sm, 0);
          const auto* ss = b->shape(sum);
          if (b->dtype(g, sum) != DType::Float32 || !ss || !b->same_dims(*ss, x_shape)) continue;
          for (Id add : b->nodes(g, sum, "aten.add.Tensor"))
            if (b->attrs(g, add).kwargs.empty() && b->child(g, add, 0) == g.find(s[0]) &&
                b->child(g, add, 1) == g.find(s[1]))
              dim = a.args[1].i;
        }
        if (!dim) return kNoId;
        const Id m16 = mask_in(*b, g, g.find(s[1]), *t16, device);
        if (m16 == kNoId) return kNoId;
        NodeAttrs aa;
        aa.args = {Value::of_node(0), Value::of_node(1)};
        const Id sum16 = b->add(g, "aten.add.Tensor", aa, {s[0], m16});
        NodeAttrs sa;
        sa.args = {Value::of_node(0), Value::of_int(*dim), Value::of_bool(false)};
        return b->add(g, "aten._softmax.default", sa, {sum16});
      });
  // Scores of 16 bits plus a float32 mask, the sum cast back to the scores'
  // type (a model that adds its mask and casts before its own softmax, as
  // the constant-mask form does): the mask cast instead, so the scores stay
  // 16-bit and the block reads as attention over a 16-bit mask. No clamp:
  // the cast of the sum turns float32's min into -inf just as the cast of
  // the mask does, and the rule must keep the graph's own values.
  rs.emplace_back("mask-add-in-16-bit", t.lang, "(prims.convert_element_type.default (aten.add.Tensor ?x ?m))",
                  [b](eg::EGraph& g, Id eclass, Subst s) -> Id {
                    const auto t16 = b->dtype(g, eclass);
                    if (!t16 || (*t16 != DType::BFloat16 && *t16 != DType::Float16)) return kNoId;
                    if (b->dtype(g, s[0]) != t16 || b->dtype(g, s[1]) != DType::Float32) return kNoId;
                    const Id sum = b->child(g, s.root, 0);
                    bool plain = false;  // an add of x and m with no alpha
                    for (Id add : b->nodes(g, sum, "aten.add.Tensor"))
                      plain |= b->attrs(g, add).kwargs.empty() && b->child(g, add, 0) == g.find(s[0]) &&
                               b->child(g, add, 1) == g.find(s[1]);
                    if (!plain || !zero_or_masking(*b, g, s[1])) return kNoId;
                    NodeAttrs ca;
                    ca.args = {Value::of_node(0), Value::of_dtype(*t16)};
                    const Id m16 = b->add(g, "prims.convert_element_type.default", ca, {s[1]});
                    NodeAttrs aa;
                    aa.args = {Value::of_node(0), Value::of_node(1)};
                    return b->add(g, "aten.add.Tensor", aa, {s[0], m16});
                  });
  // SDPA's math path under autocast computes attention in float32 on
  // upcasts of the 16-bit q, k, v (the attention rule fuses it so, as a
  // float32 kernel) and casts the result back. The 16-bit kernels compute
  // the same scores and softmax in float32 and round at one more point: the
  // probabilities, to 16 bits, before their product with v — an error of at
  // most half a 16-bit ulp of max|v| on each output, the size of the output's
  // own rounding to 16 bits, which both paths do. It is the kernel torch's
  // SDPA runs for these 16-bit inputs on the GPU; the zoo compares both
  // against a float32 reference (docs/results/zoo.md).
  for (const bool masked : {false, true}) {
    const std::string sdpa = masked ? "(aten.scaled_dot_product_attention.default ?q ?k ?v ?m)"
                                    : "(aten.scaled_dot_product_attention.default ?q ?k ?v)";
    rs.emplace_back(
        "attention-on-16-bit-upcasts", t.lang, "(prims.convert_element_type.default " + sdpa + ")",
        [b, masked, device](eg::EGraph& g, Id eclass, Subst s) -> Id {
          const auto t16 = b->dtype(g, eclass);
          if (!t16 || (*t16 != DType::BFloat16 && *t16 != DType::Float16)) return kNoId;
          // The 16-bit class each float32 operand is the upcast of.
          std::vector<Id> narrow;
          for (size_t i = 0; i < 3; ++i) {
            if (b->dtype(g, s[i]) != DType::Float32) return kNoId;
            Id found = kNoId;
            for (Id cv : b->nodes(g, g.find(s[i]), "prims.convert_element_type.default"))
              if (b->dtype(g, b->child(g, cv, 0)) == t16) found = b->child(g, cv, 0);
            if (found == kNoId) return kNoId;
            narrow.push_back(found);
          }
          // A mask goes along only where 16 bits hold it exactly (zeros and
          // masking values), through mask_in: clamped to the type's lowest
          // first where a whole row could be masked, then cast.
          if (masked) {
            const Id m16 = mask_in(*b, g, g.find(s[3]), *t16, device);
            if (m16 == kNoId) return kNoId;
            narrow.push_back(m16);
          }
          for (Id sd : b->nodes(g, b->child(g, s.root, 0), "aten.scaled_dot_product_attention.default")) {
            if (g.children(sd).size() != narrow.size()) continue;
            bool same = true;
            for (size_t i = 0; i < narrow.size() && i < 3; ++i) same &= b->child(g, sd, i) == g.find(s[i]);
            const NodeAttrs& a = b->attrs(g, sd);
            // No dropout: the kernels' own draws are another matter (--fuse-dropout).
            if (!same || a.args.size() < 5 || a.args[4].kind != Value::Kind::Float || a.args[4].f != 0.0) continue;
            return b->add(g, "aten.scaled_dot_product_attention.default", a, narrow);
          }
          return kNoId;
        });
  }
  return rs;
}

}  // namespace sator::rules
