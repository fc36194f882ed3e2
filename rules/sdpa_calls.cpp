// Attention written as an SDPA call, read as an attention block
// (sdpa_calls.h).
#include "rules/sdpa_calls.h"

#include <cmath>
#include <optional>
#include <string>

#include "ir/op_table.h"
#include "rules/attention_builder.h"
#include "rules/causal_mask.h"

namespace sator::rules {

const std::vector<RuleInfo>& sdpa_call_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"sdpa-call-mask",
       "getitem(K(q, k, v, m, 0, ...), 0) = scaled_dot_product_attention(q, k, v, m', 0, causal', scale) for K an SDPA "
       "kernel or SDPA itself: the mask as the mask reader reads it (the causal triangle is_causal, a mask of zeros none)"},
      {"sdpa-call-kernel",
       "scaled_dot_product_attention(q, k, v, m, 0, causal, scale) = getitem(_scaled_dot_product_cudnn_attention(q, k, "
       "v, m, False, 0, causal, False, scale), 0) for 16-bit q, k, v the cuDNN kernels take, m of q's type and rank 4 "
       "or none: the call SDPA's dispatch makes, the mask passed unexpanded"},
      {"sdpa-call-training",
       "a training pair getitem(K(q, k, v, m, ...), 0), getitem(Kb(dO, q, k, v, ..., m, ...), 0..2) = the same of the "
       "cuDNN pair (16-bit, no bias gradient asked; a bias passed unexpanded where it is a broadcast mask) or of the "
       "same kernels with the mask read; with dropout only under --fuse-dropout (the kernels draw their own mask)"},
      {"sdpa-call-training-16-bit",
       "convert(getitem(K(up(q), up(k), up(v), ...), 0), t), convert(getitem(Kb(up(dO), up(q), up(k), up(v), ...), "
       "0..2), t) = the same of the 16-bit pair on q, k, v, dO of type t (cuDNN's where it takes them), no dropout, "
       "the mask read away (SDPA's math path on 16-bit tensors without autocast: float32 on upcasts, cast back; the "
       "16-bit kernels accumulate in float32 and round P to t before P·v, as attention-on-16-bit-upcasts)"},
  };
  return info;
}

namespace {

using eg::Subst;
using Builder = AttentionBuilder;

enum class Family : uint8_t { Sdpa, Cudnn, Efficient };

constexpr const char* kSdpa = "aten.scaled_dot_product_attention.default";
constexpr const char* kCudnn = "aten._scaled_dot_product_cudnn_attention.default";
constexpr const char* kCudnnBackward = "aten._scaled_dot_product_cudnn_attention_backward.default";
constexpr const char* kEfficient = "aten._scaled_dot_product_efficient_attention.default";
constexpr const char* kEfficientBackward = "aten._scaled_dot_product_efficient_attention_backward.default";

const char* forward_op(Family f) { return f == Family::Cudnn ? kCudnn : f == Family::Efficient ? kEfficient : kSdpa; }

// Where each kernel's forward puts its log-sum-exp and its dropout seed and
// offset (the backward reads them).
struct Slots {
  int64_t lse, seed, offset;
};
Slots slots(Family f) { return f == Family::Cudnn ? Slots{1, 6, 7} : Slots{1, 2, 3}; }

// One SDPA call's arguments, read by the op's parameter names.
struct Call {
  Family family = Family::Sdpa;
  bool backward = false;
  Id q = kNoId, k = kNoId, v = kNoId, mask = kNoId;
  Id d_out = kNoId, lse = kNoId;  // backward
  double dropout = 0.0;
  bool causal = false;
  Value scale;  // none: the kernels' default 1/√E
  bool bias_grad = false;  // the efficient backward asked for the bias's gradient
};

std::optional<Call> read_call(Builder& b, const eg::EGraph& g, Id n) {
  const std::string& op = b.t.lang.op_name(g.op(n));
  Call c;
  if (op == kSdpa) c.family = Family::Sdpa;
  else if (op == kCudnn || op == kCudnnBackward) c.family = Family::Cudnn;
  else if (op == kEfficient || op == kEfficientBackward) c.family = Family::Efficient;
  else return std::nullopt;
  c.backward = op == kCudnnBackward || op == kEfficientBackward;
  const OpInfo* info = find_op(op);
  if (!info) return std::nullopt;
  const NodeAttrs& a = b.attrs(g, n);
  const auto bound = [&](const char* param) -> const Value* {
    for (size_t i = 0; i < info->params.size(); ++i) {
      if (info->params[i].name != param) continue;
      if (i < a.args.size()) return &a.args[i];
      for (const auto& [name, v] : a.kwargs)
        if (name == param) return &v;
      return nullptr;
    }
    return nullptr;
  };
  const auto node = [&](const char* param) -> Id {
    const Value* v = bound(param);
    if (!v || v->kind != Value::Kind::Node) return kNoId;
    return g.find(g.children(n)[v->node]);
  };
  c.q = node("query"), c.k = node("key"), c.v = node("value");
  c.mask = node(c.family == Family::Sdpa ? "attn_mask" : "attn_bias");
  if (c.backward) c.d_out = node(c.family == Family::Cudnn ? "grad_out" : "grad_out_"), c.lse = node("logsumexp");
  if (c.q == kNoId || c.k == kNoId || c.v == kNoId || (c.backward && (c.d_out == kNoId || c.lse == kNoId)))
    return std::nullopt;
  if (const Value* v = bound("dropout_p")) {
    if (v->kind == Value::Kind::Float) c.dropout = v->f;
    else if (v->kind == Value::Kind::Int) c.dropout = static_cast<double>(v->i);
    else return std::nullopt;
  }
  if (const Value* v = bound("is_causal")) {
    if (v->kind != Value::Kind::Bool) return std::nullopt;
    c.causal = v->b;
  }
  if (const Value* v = bound("scale")) {
    if (v->kind != Value::Kind::Float && v->kind != Value::Kind::Int && v->kind != Value::Kind::None) return std::nullopt;
    c.scale = *v;
  }
  if (c.family == Family::Sdpa)
    if (const Value* v = bound("enable_gqa"); v && v->kind == Value::Kind::Bool && v->b) return std::nullopt;
  if (const Value* v = bound("grad_input_mask"))
    c.bias_grad = v->kind != Value::Kind::List || v->list.size() < 4 || v->list[3].kind != Value::Kind::Bool || v->list[3].b;
  return c;
}

bool same_call(const Call& f, const Call& b) {
  return f.q == b.q && f.k == b.k && f.v == b.v && f.mask == b.mask && f.dropout == b.dropout && f.causal == b.causal &&
         f.scale.kind == b.scale.kind && (f.scale.kind != Value::Kind::Float || f.scale.f == b.scale.f) &&
         (f.scale.kind != Value::Kind::Int || f.scale.i == b.scale.i);
}

// The call's mask as the mask reader reads it: (mask to pass, is_causal).
std::pair<Id, bool> read_mask(Builder& b, const Call& c) {
  if (c.mask == kNoId) return {kNoId, c.causal};
  switch (classify_mask(b.t, c.mask)) {
    case MaskKind::Zero: return {kNoId, c.causal};
    case MaskKind::Causal: return {kNoId, true};
    case MaskKind::Other: break;
  }
  return {c.mask, c.causal};
}

Id getitem(Builder& b, eg::EGraph& g, Id tuple, int64_t i) {
  NodeAttrs a;
  a.args = {Value::of_node(0), Value::of_int(i)};
  return b.add(g, "getitem", a, {g.find(tuple)});
}

NodeAttrs positional(size_t n) {
  NodeAttrs a;
  for (size_t i = 0; i < n; ++i) a.args.push_back(Value::of_node(static_cast<NodeId>(i)));
  return a;
}

void add_scale(NodeAttrs& a, const Value& scale) {
  if (scale.kind != Value::Kind::None) a.kwargs.emplace_back("scale", scale);
}

// sdpa-call-mask: a forward call without dropout read as SDPA with its mask read.
Id read_forward(const std::shared_ptr<Builder>& b, eg::EGraph& g, Id call_node, Id call_class) {
  const auto c = read_call(*b, g, call_node);
  if (!c || c->backward || c->dropout != 0.0) return kNoId;
  const auto [mask, causal] = read_mask(*b, *c);
  // Nothing read: the call is what SDPA would dispatch to already.
  if (mask == c->mask && causal == c->causal) return kNoId;
  NodeAttrs a = positional(3);
  a.args.push_back(mask != kNoId ? Value::of_node(3) : Value::none());
  a.args.push_back(Value::of_float(0.0));
  a.args.push_back(Value::of_bool(causal));
  add_scale(a, c->scale);
  std::vector<Id> kids = {c->q, c->k, c->v};
  if (mask != kNoId) kids.push_back(mask);
  const Id sdpa = b->add(g, kSdpa, a, kids);
  const Id out = c->family == Family::Sdpa ? call_class : getitem(*b, g, call_class, 0);
  g.union_classes(out, sdpa, "sdpa-call-mask");
  return kNoId;
}

// A forward and backward pair of `family` on the call's q, k, v, with `mask`
// and `causal`: (forward, backward).
std::pair<Id, Id> build_pair(Builder& b, eg::EGraph& g, Family family, const Call& c, Id mask, bool causal) {
  const bool masked = mask != kNoId;
  NodeAttrs fa = positional(3);
  fa.args.push_back(masked ? Value::of_node(3) : Value::none());
  fa.args.push_back(Value::of_bool(true));  // compute_log_sumexp: the backward needs it
  fa.args.push_back(Value::of_float(c.dropout));
  fa.args.push_back(Value::of_bool(causal));
  if (family == Family::Cudnn) fa.args.push_back(Value::of_bool(false));  // return_debug_mask
  add_scale(fa, c.scale);
  std::vector<Id> fk = {c.q, c.k, c.v};
  if (masked) fk.push_back(mask);
  const Id fwd = b.add(g, forward_op(family), fa, fk);
  const Slots s = slots(family);
  const Id out = getitem(b, g, fwd, 0), lse = getitem(b, g, fwd, s.lse);
  const Id seed = getitem(b, g, fwd, s.seed), offset = getitem(b, g, fwd, s.offset);
  NodeAttrs ba;
  std::vector<Id> bk = {c.d_out, c.q, c.k, c.v};
  if (family == Family::Cudnn) {
    // grad_out, q, k, v, out, lse, seed, offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal
    ba = positional(8);
    for (Id x : {out, lse, seed, offset}) bk.push_back(x);
    ba.args.push_back(masked ? Value::of_node(8) : Value::none());
    if (masked) bk.push_back(mask);
    const auto *sq = b.shape(c.q), *sk = b.shape(c.k);
    ba.args.push_back(Value::none());
    ba.args.push_back(Value::none());
    ba.args.push_back(size_value((*sq)[sq->size() - 2]));
    ba.args.push_back(size_value((*sk)[sk->size() - 2]));
    ba.args.push_back(Value::of_float(c.dropout));
    ba.args.push_back(Value::of_bool(causal));
  } else {
    // grad_out_, q, k, v, attn_bias, out, lse, seed, offset, dropout_p, grad_input_mask, is_causal
    ba = positional(4);
    ba.args.push_back(masked ? Value::of_node(4) : Value::none());
    if (masked) bk.push_back(mask);
    for (NodeId i = 0; i < 4; ++i) ba.args.push_back(Value::of_node(masked ? 5 + i : 4 + i));
    for (Id x : {out, lse, seed, offset}) bk.push_back(x);
    ba.args.push_back(Value::of_float(c.dropout));
    ba.args.push_back(Value::of_list({Value::of_bool(true), Value::of_bool(true), Value::of_bool(true), Value::of_bool(false)}));
    ba.args.push_back(Value::of_bool(causal));
  }
  add_scale(ba, c.scale);
  const Id bwd = b.add(g, family == Family::Cudnn ? kCudnnBackward : kEfficientBackward, ba, bk);
  return {fwd, bwd};
}

bool cudnn_takes(Builder& b, const eg::EGraph& g, const Call& c) { return rules::cudnn_takes(b, g, c.q, c.k, c.v); }

// The bias as the cuDNN kernels take it: the mask itself where the efficient
// kernel's [B, H, L, S] bias expands one of q's type whose leading dims are
// its own or 1 (what SDPA's dispatch passes cuDNN: transformers' [B, 1, L, S]);
// kNoId for any other bias.
Id cudnn_bias(Builder& b, const eg::EGraph& g, const Call& c, Id mask) {
  const auto* sb = b.shape(mask);
  if (!sb || sb->size() != 4) return kNoId;
  for (Id e : b.nodes(g, mask, "aten.expand.default")) {
    const Id m = b.child(g, e, 0);
    const auto* sm = b.shape(m);
    if (!sm || sm->size() != 4 || b.dtype(g, m) != b.dtype(g, c.q) || !b.equal((*sm)[3], (*sb)[3])) continue;
    bool broadcast = true;
    for (size_t i = 0; i < 3; ++i) broadcast &= (*sm)[i] == SymExpr(1) || b.equal((*sm)[i], (*sb)[i]);
    if (broadcast) return m;
  }
  // Not the expansion of a broadcast mask (the efficient kernel's padded and
  // sliced rows, say): cuDNN was not measured taking such a bias.
  return kNoId;
}

// The class of the forward call whose log-sum-exp the backward call `bc`
// reads, on the same q, k, v, mask, dropout, causality and scale; kNoId.
Id forward_of(Builder& b, const eg::EGraph& g, const Call& bc) {
  for (Id gi : b.nodes(g, bc.lse, "getitem")) {
    const NodeAttrs& ga = b.attrs(g, gi);
    if (ga.args.size() != 2 || ga.args[1].kind != Value::Kind::Int || ga.args[1].i != slots(bc.family).lse) continue;
    const Id fwd_class = b.child(g, gi, 0);
    for (Id fwd : b.nodes(g, fwd_class, forward_op(bc.family)))
      if (const auto fc = read_call(b, g, fwd); fc && same_call(*fc, bc)) return fwd_class;
  }
  return kNoId;
}

// sdpa-call-training: a backward call, its forward found through the
// log-sum-exp it reads.
Id read_pair(const std::shared_ptr<Builder>& b, eg::EGraph& g, Id bwd_node, Id bwd_class, bool fuse_dropout) {
  const auto bc = read_call(*b, g, bwd_node);
  if (!bc || !bc->backward || bc->bias_grad) return kNoId;
  if (bc->dropout != 0.0 && !fuse_dropout) return kNoId;
  const Id fwd_class = forward_of(*b, g, *bc);
  if (fwd_class == kNoId) return kNoId;
  const Call& c = *bc;
  const auto [mask, causal] = read_mask(*b, c);
  const bool unchanged = mask == c.mask && causal == c.causal;
  // (kernels, the mask they take)
  std::vector<std::pair<Family, Id>> targets;
  if (cudnn_takes(*b, g, c) && !(bc->family == Family::Cudnn && unchanged)) {
    const Id bias = mask == kNoId ? kNoId : cudnn_bias(*b, g, c, mask);
    if (mask == kNoId || bias != kNoId) targets.emplace_back(Family::Cudnn, bias);
  }
  if (!unchanged && (targets.empty() || targets.front().first != bc->family)) targets.emplace_back(bc->family, mask);
  const Id out = getitem(*b, g, fwd_class, 0);
  for (const auto& [f, m] : targets) {
    const auto [nf, nb] = build_pair(*b, g, f, c, m, causal);
    g.union_classes(out, getitem(*b, g, nf, 0), "sdpa-call-training");
    for (int64_t i = 0; i < 3; ++i)
      g.union_classes(getitem(*b, g, bwd_class, i), getitem(*b, g, nb, i), "sdpa-call-training");
  }
  return kNoId;
}

// A float32 operand read as a 16-bit one: x = up(x16)·factor, up the cast
// from type t to float32 and factor a constant (SDPA's math path scales q and
// k by √scale each before their product).
struct Upcast {
  Id x16 = kNoId;
  double factor = 1.0;
};

std::optional<Upcast> upcast_of(Builder& b, const eg::EGraph& g, Id x, DType t, bool scaled) {
  if (b.dtype(g, x) != DType::Float32) return std::nullopt;
  for (Id cv : b.nodes(g, g.find(x), "prims.convert_element_type.default"))
    if (b.dtype(g, b.child(g, cv, 0)) == t) return Upcast{g.find(b.child(g, cv, 0)), 1.0};
  if (!scaled) return std::nullopt;
  for (Id m : b.nodes(g, g.find(x), "aten.mul.Scalar")) {
    const NodeAttrs& a = b.attrs(g, m);
    if (a.args.size() != 2 || (a.args[1].kind != Value::Kind::Float && a.args[1].kind != Value::Kind::Int)) continue;
    const double f = a.args[1].kind == Value::Kind::Float ? a.args[1].f : static_cast<double>(a.args[1].i);
    if (!(f > 0) || !std::isfinite(f)) continue;
    if (const auto u = upcast_of(b, g, b.child(g, m, 0), t, false)) return Upcast{u->x16, f};
  }
  return std::nullopt;
}

Id convert(Builder& b, eg::EGraph& g, Id x, DType t) {
  NodeAttrs a;
  a.args = {Value::of_node(0), Value::of_dtype(t)};
  return b.add(g, "prims.convert_element_type.default", a, {g.find(x)});
}

Id scaled(Builder& b, eg::EGraph& g, Id x, double f) {
  if (f == 1.0) return g.find(x);
  NodeAttrs a;
  a.args = {Value::of_node(0), Value::of_float(f)};
  return b.add(g, "aten.mul.Scalar", a, {g.find(x)});
}

// The call's softmax scale as a number (none: the kernels' 1/√E).
std::optional<double> scale_value(Builder& b, const Call& c) {
  if (c.scale.kind == Value::Kind::Float) return c.scale.f;
  if (c.scale.kind == Value::Kind::Int) return static_cast<double>(c.scale.i);
  const auto* sq = b.shape(c.q);
  if (!sq || sq->empty()) return std::nullopt;
  const auto e = sq->back().as_constant();
  if (!e || *e <= 0) return std::nullopt;
  return 1.0 / std::sqrt(static_cast<double>(*e));
}

// sdpa-call-training-16-bit: a float32 pair on upcasts of 16-bit q, k, v and
// dO (SDPA's math path on a 16-bit model without autocast: it computes in
// float32 and the graph casts O and the gradients back) as the 16-bit pair
// whose casts those are. Without it the attention rules fuse the math path
// as float32 kernels (efficient: 2-4x the 16-bit cuDNN pair's time). A
// constant factor on q or k moves into the scale: SDPA(q·a, k·b, v, s) =
// SDPA(q, k, v, s·a·b), and the gradients of q and k are a·dQ and b·dK.
Id read_upcast_pair(const std::shared_ptr<Builder>& b, eg::EGraph& g, Id bwd_node, Id bwd_class) {
  const auto bc = read_call(*b, g, bwd_node);
  if (!bc || !bc->backward || bc->bias_grad || bc->dropout != 0.0) return kNoId;
  const auto scale = scale_value(*b, *bc);
  if (!scale) return kNoId;
  for (DType t : {DType::BFloat16, DType::Float16}) {
    const auto q = upcast_of(*b, g, bc->q, t, true), k = upcast_of(*b, g, bc->k, t, true);
    const auto v = upcast_of(*b, g, bc->v, t, false), d_out = upcast_of(*b, g, bc->d_out, t, false);
    if (!q || !k || !v || !d_out) continue;
    const auto [mask, causal] = read_mask(*b, *bc);
    if (mask != kNoId) return kNoId;  // a float32 bias: 16 bits would round it
    const Id fwd_class = forward_of(*b, g, *bc);
    if (fwd_class == kNoId) return kNoId;
    Call c = *bc;
    c.q = q->x16, c.k = k->x16, c.v = v->x16, c.d_out = d_out->x16, c.mask = kNoId;
    c.scale = Value::of_float(*scale * q->factor * k->factor);
    const Family f = cudnn_takes(*b, g, c) ? Family::Cudnn : Family::Efficient;
    const auto [nf, nb] = build_pair(*b, g, f, c, kNoId, causal);
    const char* why = "sdpa-call-training-16-bit";
    g.union_classes(convert(*b, g, getitem(*b, g, fwd_class, 0), t), getitem(*b, g, nf, 0), why);
    const double factor[3] = {q->factor, k->factor, 1.0};
    for (int64_t i = 0; i < 3; ++i)
      g.union_classes(convert(*b, g, scaled(*b, g, getitem(*b, g, bwd_class, i), factor[i]), t), getitem(*b, g, nb, i),
                      why);
    return kNoId;
  }
  return kNoId;
}

// sdpa-call-kernel: SDPA (inference, no dropout) as the cuDNN call its
// dispatch makes on 16-bit inputs, the mask passed as it is (SDPA itself,
// decomposed for Inductor, expands a broadcast mask over the heads and
// Inductor writes that out per call: docs/cost-model.md).
Id sdpa_as_kernel(const std::shared_ptr<Builder>& b, eg::EGraph& g, Id call_node, Id call_class) {
  const auto c = read_call(*b, g, call_node);
  if (!c || c->family != Family::Sdpa || c->dropout != 0.0 || !cudnn_takes(*b, g, *c)) return kNoId;
  if (c->mask != kNoId) {
    const auto* sm = b->shape(c->mask);
    if (!sm || sm->size() != 4 || b->dtype(g, c->mask) != b->dtype(g, c->q)) return kNoId;
  }
  NodeAttrs a = positional(3);
  a.args.push_back(c->mask != kNoId ? Value::of_node(3) : Value::none());
  a.args.push_back(Value::of_bool(false));  // compute_log_sumexp
  a.args.push_back(Value::of_float(0.0));
  a.args.push_back(Value::of_bool(c->causal));
  a.args.push_back(Value::of_bool(false));  // return_debug_mask
  add_scale(a, c->scale);
  std::vector<Id> kids = {c->q, c->k, c->v};
  if (c->mask != kNoId) kids.push_back(c->mask);
  const Id call = b->add(g, kCudnn, a, kids);
  g.union_classes(call_class, getitem(*b, g, call, 0), "sdpa-call-kernel");
  return kNoId;
}

}  // namespace

std::vector<eg::Rewrite> sdpa_call_rules(TensorEGraph& t, bool fuse_dropout) {
  auto b = std::make_shared<Builder>(Builder{t});
  std::vector<eg::Rewrite> rs;
  const auto forward = [b](eg::EGraph& g, Id eclass, Subst s) -> Id { return read_forward(b, g, s.root, eclass); };
  for (const char* op : {kSdpa, kCudnn, kEfficient}) {
    rs.emplace_back("sdpa-call-mask", t.lang, std::string("(") + op + "@_ ?q ?k ?v)", forward);
    rs.emplace_back("sdpa-call-mask", t.lang, std::string("(") + op + "@_ ?q ?k ?v ?m)", forward);
  }
  const auto kernel = [b](eg::EGraph& g, Id eclass, Subst s) -> Id { return sdpa_as_kernel(b, g, s.root, eclass); };
  rs.emplace_back("sdpa-call-kernel", t.lang, std::string("(") + kSdpa + "@_ ?q ?k ?v)", kernel);
  rs.emplace_back("sdpa-call-kernel", t.lang, std::string("(") + kSdpa + "@_ ?q ?k ?v ?m)", kernel);
  const auto pair = [b, fuse_dropout](eg::EGraph& g, Id eclass, Subst s) -> Id {
    return read_pair(b, g, s.root, eclass, fuse_dropout);
  };
  for (const char* op : {kCudnnBackward, kEfficientBackward}) {
    rs.emplace_back("sdpa-call-training", t.lang, std::string("(") + op + "@_ ?a ?b ?c ?d ?e ?f ?g ?h)", pair);
    rs.emplace_back("sdpa-call-training", t.lang, std::string("(") + op + "@_ ?a ?b ?c ?d ?e ?f ?g ?h ?i)", pair);
  }
  const auto upcast = [b](eg::EGraph& g, Id eclass, Subst s) -> Id { return read_upcast_pair(b, g, s.root, eclass); };
  for (const char* op : {kCudnnBackward, kEfficientBackward}) {
    rs.emplace_back("sdpa-call-training-16-bit", t.lang, std::string("(") + op + "@_ ?a ?b ?c ?d ?e ?f ?g ?h)", upcast);
    rs.emplace_back("sdpa-call-training-16-bit", t.lang, std::string("(") + op + "@_ ?a ?b ?c ?d ?e ?f ?g ?h ?i)",
                    upcast);
  }
  return rs;
}

}  // namespace sator::rules
