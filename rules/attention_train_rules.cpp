// Attention in joint training graphs: the forward and its backward fused
// together (attention_train_rules.h).
#include "rules/attention_train_rules.h"

#include <cmath>

#include "rules/attention_builder.h"

namespace sator::rules {

const std::vector<RuleInfo>& attention_train_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"attention-training",
       "O = matmul(P, v), P = _softmax(matmul(q, kᵀ)·s [+ m], -1) with the backward dS = fma(-P, sum(dP·P, -1), dP·P), "
       "dP = matmul(dO, vᵀ): O, dQ = matmul(dS·s, k), dK = matmul((dS·s)ᵀ, q), dV = matmul(Pᵀ, dO) = "
       "_scaled_dot_product_efficient_attention(q, k, v, m) and its _backward; with --training-attention-bias, where m "
       "depends on a parameter (a learned bias), also the _backward asked for grad_bias, which is dS"},
      {"attention-training-16-bit",
       "the same under autocast or with 16-bit weights: dS16 = convert(fma(-P, sum(dP·P, -1), dP·P), t) with dP = "
       "convert(dP16) and P = P32 (O = matmul(convert(P32, t), v)) or convert(P16): the kernels on 16-bit q, k, v; "
       "also SDPA's math path under autocast, P16 = convert(P32) with P32 the softmax of float32 scores on upcasts "
       "of q16, k16 and O = convert(matmul(P32, convert(v16))) (the kernels round P to t before P·v: within the "
       "output's own rounding)"},
      {"attention-training-16-bit-dropout",
       "attention-training-16-bit with dropout on the 16-bit probabilities, P' = P16·keep/(1-p): the kernels with "
       "dropout_p = p (their own draws: equal in distribution only, so opt-in, --fuse-dropout)"},
      {"attention-training-dropout",
       "the same with P' = P·keep/(1-p) multiplying v and dP = dP'·keep/(1-p): the kernels with dropout_p = p "
       "(their own draws: equal in distribution only, so opt-in, --fuse-dropout)"},
  };
  return info;
}

namespace {

// Whether an additive mask is shared by the heads, or is one value per key
// or per query ([B, 1, L, S], [L, S], [.., 1, S], [.., L, 1], or an expand
// of one), rather than written out per head and score. On the H100 the
// cuDNN pair trained a block with a [B, 1, L, S] padding-and-causal mask
// 1.07x faster than the decomposed block, and one with a [B, H, L, S] mask
// (a per-head linear bias plus the causal mask) 0.92x, slower than the
// decomposed block Inductor fuses around it (python/gpu/bias_forms.py,
// constant_mask and linear_bias, bf16 training, 10-12 iterations;
// docs/results/attention_bias_forms.md).
bool mask_shared_by_heads_rows_or_keys(const AttentionBuilder& b, const eg::EGraph& g, Id mask) {
  const auto one = [](const SymExpr& e) { return e.as_constant() && *e.as_constant() == 1; };
  const auto narrow = [&](Id c) {
    const auto* s = b.shape(c);
    if (!s || s->size() < 2) return s != nullptr;
    const size_t r = s->size();
    return r < 3 || one((*s)[r - 3]) || one((*s)[r - 2]) || one((*s)[r - 1]);
  };
  if (narrow(mask)) return true;
  for (Id n : b.nodes(g, g.find(mask), "aten.expand.default"))
    if (!g.children(n).empty() && narrow(b.child(g, n, 0))) return true;
  return false;
}

using eg::Subst;
using Builder = AttentionBuilder;

NodeAttrs positional(size_t n) {
  NodeAttrs a;
  for (size_t i = 0; i < n; ++i) a.args.push_back(Value::of_node(static_cast<NodeId>(i)));
  return a;
}

Id permute(Builder& b, eg::EGraph& g, Id x, std::vector<int64_t> dims) {
  NodeAttrs a;
  std::vector<Value> d;
  for (int64_t i : dims) d.push_back(Value::of_int(i));
  a.args = {Value::of_node(0), Value::of_list(std::move(d))};
  return b.add(g, "aten.permute.default", a, {x});
}

Id transpose4(Builder& b, eg::EGraph& g, Id x) { return permute(b, g, x, {0, 1, 3, 2}); }

Id matmul(Builder& b, eg::EGraph& g, Id x, Id y) { return b.add(g, "aten.matmul.default", positional(2), {x, y}); }

std::vector<Value> size_values(const std::vector<SymExpr>& shape) {
  std::vector<Value> sizes;
  for (const SymExpr& e : shape) sizes.push_back(size_value(e));
  return sizes;
}

Id view(Builder& b, eg::EGraph& g, Id x, const std::vector<SymExpr>& shape) {
  NodeAttrs a;
  a.args = {Value::of_node(0), Value::of_list(size_values(shape))};
  return b.add(g, "aten.view.default", a, {x});
}

// matmul(x, y) = r for 4-D x, y, r, in both the forms a graph may compute it:
// the 4-D matmul and AOTAutograd's bmm of the flattened operands.
void union_product(Builder& b, eg::EGraph& g, Id x, Id y, Id r) {
  g.union_classes(matmul(b, g, x, y), r, "attention-training");
  const auto *sx = b.shape(x), *sy = b.shape(y);
  if (!sx || !sy || sx->size() != 4 || sy->size() != 4) return;
  const SymExpr n = (*sx)[0] * (*sx)[1];
  const SymExpr l = (*sx)[2], e = (*sx)[3], s = (*sy)[3];
  const Id flat = b.add(g, "aten.bmm.default", positional(2), {view(b, g, x, {n, l, e}), view(b, g, y, {n, e, s})});
  g.union_classes(flat, view(b, g, r, {n, l, s}), "attention-training");
}

// The efficient kernel takes its bias as [B, H, L, S] (no broadcasting) with
// rows aligned to 16 elements: expanded, and padded then sliced back when S
// may not be a multiple of 16 (what torch's SDPA does before calling it).
std::optional<Id> kernel_bias(Builder& b, eg::EGraph& g, Id mask, Id q, Id k) {
  const auto *sq = b.shape(q), *sk = b.shape(k);
  if (!sq || !sk || sq->size() != 4 || sk->size() != 4) return std::nullopt;
  const std::vector<SymExpr> full = {(*sq)[0], (*sq)[1], (*sq)[2], (*sk)[2]};
  // A mask broadcast along L (a padding mask [B, 1, 1, S]) expands with row
  // stride 0, aligned whatever S is; otherwise rows are padded (below).
  const auto* sm = b.shape(g.find(mask));
  const bool rows_broadcast = sm && (sm->size() < 2 || (*sm)[sm->size() - 2].as_constant() == 1);
  NodeAttrs ea;
  ea.args = {Value::of_node(0), Value::of_list(size_values(full))};
  const Id expanded = b.add(g, "aten.expand.default", ea, {g.find(mask)});
  const auto s = full[3].as_constant();
  if (rows_broadcast || (s && *s % 16 == 0)) return expanded;
  // Padded by (-S) mod 16 (zero when S turns out aligned), then sliced back.
  NodeAttrs pa;
  pa.args = {Value::of_node(0), Value::of_list({Value::of_int(0), size_value(SymExpr::mod(-full[3], SymExpr(16)))}),
             Value::of_float(0.0)};
  const Id padded = b.add(g, "aten.constant_pad_nd.default", pa, {expanded});
  NodeAttrs sa;
  sa.args = {Value::of_node(0), Value::of_int(-1), Value::of_int(0), size_value(full[3])};
  return b.add(g, "aten.slice.Tensor", sa, {padded});
}

Id getitem(Builder& b, eg::EGraph& g, Id tuple, int64_t i) {
  NodeAttrs a;
  a.args = {Value::of_node(0), Value::of_int(i)};
  return b.add(g, "getitem", a, {tuple});
}

// The class `x` scaled as the forward scaled the scores (x·c, c a number
// or a run-time 0-d tensor). Built, not looked up: the graph may scale dS
// after its products (SDPA's math path: dq = (dS @ (kᵀ·a)ᵀ)·a), which the
// scale identities meet from matmul(dS·c, k).
std::optional<Id> scaled_like(Builder& b, eg::EGraph& g, Id x, const AttentionForm& f) {
  if (!f.scale_value && f.scale_tensor == kNoId) return g.find(x);
  if (f.scale_tensor != kNoId) return b.add(g, "aten.mul.Tensor", positional(2), {g.find(x), g.find(f.scale_tensor)});
  NodeAttrs a;
  a.args = {Value::of_node(0), *f.scale_value};
  return b.add(g, "aten.mul.Tensor", a, {g.find(x)});
}

// x·c for the run-time scale c.
Id scale_by_tensor(Builder& b, eg::EGraph& g, Id x, const AttentionForm& f) {
  return b.add(g, "aten.mul.Tensor", positional(2), {x, g.find(f.scale_tensor)});
}

// v from dP = matmul(dO, vᵀ): every (dO, v) the class offers, v as [B, H, S, Ev].
std::vector<std::pair<Id, Id>> grad_and_value(Builder& b, eg::EGraph& g, Id dp) {
  std::vector<std::pair<Id, Id>> out;
  for (Id mm : b.nodes(g, g.find(dp), "aten.matmul.default")) {
    const Id d_out = b.child(g, mm, 0), vt = b.child(g, mm, 1);
    for (Id p : b.nodes(g, vt, "aten.permute.default")) {
      const NodeAttrs& pa = b.attrs(g, p);
      if (pa.args.size() != 2) continue;
      const std::vector<int64_t> d = int_list(pa.args[1], 4);
      if (d.size() != 4) continue;
      // vᵀ = permute(x, A): v = permute(x, A with its last two swapped).
      const Id x = b.child(g, p, 0);
      out.push_back({d_out, is_last_two_swap(d) ? x : permute(b, g, x, {d[0], d[1], d[3], d[2]})});
    }
  }
  return out;
}

// The backward's dP, and with dropout in the forward (P' = P·keep/(1-p)):
// dP = dP'·(convert(keep)/(1-p)), the probabilities the forward multiplied
// by v, and p.
struct Dropped {
  Id dp_used;      // the class holding matmul(dO, vᵀ)
  Id p_used;       // what the forward multiplies by v: P, or P'
  double p = 0.0;  // dropout probability
};

std::vector<Dropped> dropout_forms(Builder& b, eg::EGraph& g, Id p, Id dp, bool dropout) {
  std::vector<Dropped> out;
  if (!dropout) return {{g.find(dp), g.find(p), 0.0}};
  const auto mul_op = b.t.lang.find_op("aten.mul.Tensor");
  if (!mul_op) return out;
  for (Id m : b.nodes(g, g.find(dp), "aten.mul.Tensor")) {
    if (g.children(m).size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const Id x = b.child(g, m, static_cast<size_t>(side)), mask = b.child(g, m, static_cast<size_t>(1 - side));
      // mask = convert(keep, f32) · c, keep = gt(rand, p), c = 1/(1-p).
      for (Id scaled : b.nodes(g, mask, "aten.mul.Tensor")) {
        const auto c = b.scalar_arg(g, scaled);
        if (!c) continue;
        for (Id cv : b.nodes(g, b.child(g, scaled, 0), "prims.convert_element_type.default")) {
          const Id keep = b.child(g, cv, 0);
          for (Id gt : b.nodes(g, keep, "aten.gt.Scalar")) {
            const auto drop = b.scalar_arg(g, gt);
            if (!drop || b.nodes(g, b.child(g, gt, 0), "aten.rand.default").empty()) continue;
            const double pr = Builder::number(*drop);
            if (!(pr > 0 && pr < 1) || std::abs(Builder::number(*c) * (1.0 - pr) - 1.0) > 1e-9) continue;
            // The forward: P' = mul(mul(keep, P), c).
            const auto kept = g.lookup(*mul_op, b.t.lang.intern(positional(2)), std::vector<Id>{g.find(keep), g.find(p)});
            if (!kept) continue;
            NodeAttrs sa;
            sa.args = {Value::of_node(0), *c};
            const auto dropped = g.lookup(*mul_op, b.t.lang.intern(sa), std::vector<Id>{*kept});
            if (dropped) out.push_back({g.find(x), *dropped, pr});
          }
        }
      }
    }
  }
  return out;
}

// The probabilities' scores, as fuse_training_attention reads them: P holds
// _softmax (or SDPA's _safe_softmax) of `scores`, or — SDPA's math path
// under autocast — P = convert(Pw, t16) with Pw that softmax of float32
// scores computed on upcasts of 16-bit q and k (`wide` = Pw).
struct ScoresOf {
  Id scores;
  Id wide = kNoId;
};

std::vector<ScoresOf> scores_of(Builder& b, const std::shared_ptr<Builder>& bp, eg::EGraph& g, Id p) {
  std::vector<ScoresOf> out;
  auto read = [&](Id cls, Id wide) {
    for (const char* op : {"aten._softmax.default", "aten._safe_softmax.default"})
      for (Id sm : b.nodes(g, cls, op))
        if (softmax_of(bp, g, cls, b.child(g, sm, 0))) out.push_back({b.child(g, sm, 0), wide});
  };
  read(g.find(p), kNoId);
  const auto t16 = b.dtype(g, p);
  if (t16 && (*t16 == DType::BFloat16 || *t16 == DType::Float16))
    for (Id cv : b.nodes(g, g.find(p), "prims.convert_element_type.default"))
      if (const Id wide = b.child(g, cv, 0); b.dtype(g, wide) == DType::Float32) read(wide, wide);
  return out;
}

// The classes of x's 16-bit sources: y of type `t` with x = convert(y, float32).
std::vector<Id> narrowed(Builder& b, eg::EGraph& g, Id x, DType t) {
  std::vector<Id> out;
  for (Id cv : b.nodes(g, g.find(x), "prims.convert_element_type.default"))
    if (b.dtype(g, b.child(g, cv, 0)) == t) out.push_back(b.child(g, cv, 0));
  return out;
}

Id convert_to(Builder& b, eg::EGraph& g, Id x, DType t) {
  NodeAttrs ca;
  ca.args = {Value::of_node(0), Value::of_dtype(t)};
  return b.add(g, "prims.convert_element_type.default", ca, {g.find(x)});
}

// Whether class `c` depends on a parameter (a floating primal placeholder:
// AOTAutograd lifts buffers such as GPT-Neo's boolean causal mask as primals
// too), through the input's own forms: only such a value has a gradient.
bool has_gradient(const Builder& b, const eg::EGraph& g, Id c) {
  std::vector<Id> todo{g.find(c)};
  std::unordered_set<Id> seen;
  const Graph& source = b.t.source();
  while (!todo.empty()) {
    const Id x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second) continue;
    // The input's own forms where the class has one (the rules' identities
    // put forms such as x·0 into a constant's class), else every form.
    bool original = false;
    for (Id e : g.class_nodes(x)) original = original || b.t.is_original(e);
    for (Id e : g.class_nodes(x)) {
      const int64_t n = b.t.original_node(e);
      if (original && n < 0) continue;
      if (n >= 0 && source.nodes[static_cast<size_t>(n)].op == "placeholder" &&
          source.nodes[static_cast<size_t>(n)].role == Role::Primal &&
          is_floating(source.nodes[static_cast<size_t>(n)].tensor.dtype))
        return true;
      for (Id k : g.children(e)) todo.push_back(g.find(k));
    }
  }
  return false;
}

Id fuse_training_attention(const std::shared_ptr<Builder>& b, eg::EGraph& g, Id p, Id dp_in, Id d_scores,
                           bool fuse_dropout, TrainingBias with_bias) {
  const std::vector<ScoresOf> scores_classes = scores_of(*b, b, g, p);
  const auto mm_op = b->t.lang.find_op("aten.matmul.default");
  const auto convert_op = b->t.lang.find_op("prims.convert_element_type.default");
  if (scores_classes.empty() || !mm_op || !convert_op) return kNoId;
  for (const Dropped& dr : dropout_forms(*b, g, p, dp_in, fuse_dropout))
  for (const auto& [d_out, v] : grad_and_value(*b, g, dr.dp_used)) {
    const auto vt = b->dtype(g, v);
    if (!vt) continue;
    for (const ScoresOf& sc : scores_classes) {
      const bool wide = sc.wide != kNoId;
      if (wide && dr.p != 0.0) continue;  // no dropout in SDPA's math path under autocast
      // The forward output O = matmul(P (or P'), v) must be in the graph;
      // under autocast's math path O = convert(matmul(Pw, convert(v, float32)), t16).
      Id v_scores = g.find(v);
      std::optional<Id> o;
      if (!wide) {
        o = g.lookup(*mm_op, b->t.lang.intern(positional(2)), std::vector<Id>{g.find(dr.p_used), g.find(v)});
      } else {
        NodeAttrs ca;
        ca.args = {Value::of_node(0), Value::of_dtype(DType::Float32)};
        const auto v32 = g.lookup(*convert_op, b->t.lang.intern(ca), std::vector<Id>{g.find(v)});
        if (!v32) continue;
        v_scores = *v32;
        if (auto o32 = g.lookup(*mm_op, b->t.lang.intern(positional(2)), std::vector<Id>{g.find(sc.wide), *v32}))
          o = convert_to(*b, g, *o32, *vt);
      }
      if (!o) continue;
      const auto *sv = b->shape(v), *sdo = b->shape(d_out), *so = b->shape(*o);
      if (!sv || !sdo || !so || sv->size() != 4 || !b->same_dims(*sdo, *so)) continue;
      for (const AttentionForm& f : attention_forms(b, g, sc.scores, v_scores)) {
        // Under autocast the kernels take the 16-bit q and k the float32
        // scores were computed on (no mask or run-time scale there: SDPA's
        // math path has neither once its all-zero mask is seen through).
        Id q0 = g.find(f.q), k = g.find(f.k);
        if (wide) {
          if (f.mask != kNoId || f.scale_tensor != kNoId) continue;
          const std::vector<Id> qs = narrowed(*b, g, q0, *vt), ks = narrowed(*b, g, k, *vt);
          if (qs.empty() || ks.empty()) continue;
          q0 = qs.front();
          k = ks.front();
        }
        // A run-time scale c (a constant of the sizes: no gradient of its
        // own) goes into q: (q·c)kᵀ; then dq = c·dq'. A learned bias's
        // gradient is asked for in a second backward (below).
        const auto ds = scaled_like(*b, g, d_scores, f);
        if (!ds) continue;
        const bool masked = f.mask != kNoId, runtime_scale = f.scale_tensor != kNoId;
        const Id q = runtime_scale ? scale_by_tensor(*b, g, q0, f) : q0;
        std::optional<Id> bias;
        const bool bias_allowed =
            with_bias == TrainingBias::Always ||
            (with_bias == TrainingBias::WhereCudnn && cudnn_takes(*b, g, q0, k, g.find(v)) &&
             (!masked || mask_shared_by_heads_rows_or_keys(*b, g, f.mask)));
        if (masked && (!bias_allowed || !(bias = kernel_bias(*b, g, f.mask, q0, k)))) continue;
        NodeAttrs fa = positional(3);
        fa.args.push_back(masked ? Value::of_node(3) : Value::none());
        fa.args.push_back(Value::of_bool(true));  // compute_log_sumexp: the backward needs it
        fa.args.push_back(Value::of_float(dr.p));
        fa.args.push_back(Value::of_bool(f.causal));
        fa.kwargs.emplace_back("scale", Value::of_float(f.scale));
        std::vector<Id> fk = {q, k, g.find(v)};
        if (masked) fk.push_back(*bias);
        const Id fwd = b->add(g, "aten._scaled_dot_product_efficient_attention.default", fa, fk);
        const Id out = getitem(*b, g, fwd, 0), lse = getitem(*b, g, fwd, 1);
        const Id seed = getitem(*b, g, fwd, 2), offset = getitem(*b, g, fwd, 3);
        NodeAttrs ba = positional(4);
        ba.args.push_back(masked ? Value::of_node(4) : Value::none());
        for (NodeId i = 5; i < 9; ++i) ba.args.push_back(Value::of_node(masked ? i : i - 1));
        ba.args.push_back(Value::of_float(dr.p));
        ba.args.push_back(Value::of_list({Value::of_bool(true), Value::of_bool(true), Value::of_bool(true), Value::of_bool(false)}));
        ba.args.push_back(Value::of_bool(f.causal));
        ba.kwargs.emplace_back("scale", Value::of_float(f.scale));
        std::vector<Id> bk = {g.find(d_out), q, k, g.find(v)};
        if (masked) bk.push_back(*bias);
        for (Id x : {out, lse, seed, offset}) bk.push_back(x);
        const Id bwd = b->add(g, "aten._scaled_dot_product_efficient_attention_backward.default", ba, bk);
        const Id dq = getitem(*b, g, bwd, 0), dk = getitem(*b, g, bwd, 1), dv = getitem(*b, g, bwd, 2);
        // What the decomposed graph computes, each in the forms AOTAutograd writes.
        g.union_classes(*o, out, "attention-training");
        union_product(*b, g, *ds, k, runtime_scale ? scale_by_tensor(*b, g, dq, f) : dq);
        union_product(*b, g, transpose4(*b, g, *ds), q0, dk);
        union_product(*b, g, transpose4(*b, g, q0), *ds, transpose4(*b, g, dk));
        union_product(*b, g, transpose4(*b, g, g.find(dr.p_used)), g.find(d_out), dv);
        // A bias with a gradient (a learned table, a bias from the
        // projections: it depends on a parameter) has it computed from dS:
        // the same backward asked for grad_bias too gives dS, in the bias's
        // [B, H, L, S] (kernel_bias expands it; the graph's own sum over the
        // broadcast dims reads dS's class), so nothing needs the
        // probabilities. Not for a constant mask: asked for there, grad_bias
        // would be a [B, H, L, S] tensor written for whatever reads dS (GPT-Neo's
        // where(mask, dS, 0) before its products), where the kernels' dq and
        // dk are what fusing is for. Where the bias's dtype is dS's, and only
        // with --training-attention-bias: by default a bias goes only to the
        // cuDNN pair (which has no grad_bias), and an efficient pair asked
        // for the gradient beside it is not measured (an unseen model's
        // default stays as it was).
        if (masked && with_bias == TrainingBias::Always && b->dtype(g, *bias) == b->dtype(g, g.find(d_scores)) &&
            has_gradient(*b, g, f.mask)) {
          NodeAttrs bb = ba;
          for (Value& x : bb.args)
            if (x.is_list() && x.list.size() == 4 && x.list[3].kind == Value::Kind::Bool) x.list[3] = Value::of_bool(true);
          const Id with_bias = b->add(g, "aten._scaled_dot_product_efficient_attention_backward.default", bb, bk);
          g.union_classes(getitem(*b, g, with_bias, 0), dq, "attention-training");
          g.union_classes(getitem(*b, g, with_bias, 1), dk, "attention-training");
          g.union_classes(getitem(*b, g, with_bias, 2), dv, "attention-training");
          g.union_classes(getitem(*b, g, with_bias, 3), g.find(d_scores), "attention-training");
        }
        return kNoId;  // the unions are the rewrite: dS itself has no fused form
      }
    }
  }
  return kNoId;
}

// Whether the softmax backward's fma node `fma` sums dP·P over the last dim,
// keepdim (its second operand's class holds such a sum).
bool sums_last_dim(Builder& b, eg::EGraph& g, Id fma) {
  for (Id sum : b.nodes(g, b.child(g, fma, 1), "aten.sum.dim_IntList")) {
    const NodeAttrs& a = b.attrs(g, sum);
    if (a.args.size() >= 3 && int_list(a.args[1], 4) == std::vector<int64_t>{3} && a.args[2].kind == Value::Kind::Bool &&
        a.args[2].b)
      return true;
  }
  return false;
}

}  // namespace

std::vector<eg::Rewrite> attention_train_rules(TensorEGraph& t, bool fuse_dropout, TrainingBias with_bias) {
  auto b = std::make_shared<Builder>(Builder{t});
  std::vector<eg::Rewrite> rs;
  // The softmax backward as AOTAutograd decomposes _softmax_backward_data.
  const char* core =
      "(prims.fma.default (aten.neg.default ?p) (aten.sum.dim_IntList@_ (aten.mul.Tensor ?dp ?p)) (aten.mul.Tensor ?dp ?p))";
  auto applier = [b, with_bias](bool dropout) {
    return [b, dropout, with_bias](eg::EGraph& g, Id eclass, Subst s) -> Id {
      if (!sums_last_dim(*b, g, s.root)) return kNoId;
      return fuse_training_attention(b, g, s[0], s[1], eclass, dropout, with_bias);
    };
  };
  rs.emplace_back("attention-training", t.lang, core, applier(false));
  if (fuse_dropout) rs.emplace_back("attention-training-dropout", t.lang, core, applier(true));
  // Under autocast or with 16-bit weights the backward runs in float32 on
  // upcasts and is cast back: dS16 = convert(fma(-P, sum(dP·P), dP·P)) with
  // dP = convert(dP16) and P the float32 probabilities — P32 itself (autocast:
  // the forward multiplies v by P16 = convert(P32)) or convert(P16) (16-bit
  // weights). The kernels do the same arithmetic in float32 inside, so the
  // 16-bit classes P16 and dP16 stand for P and dP; rounding to 16 bits
  // happens at other points (the kernels' documented accuracy, checked on
  // the GPU: docs/results/zoo.md).
  const char* core16 =
      "(prims.convert_element_type.default (prims.fma.default (aten.neg.default ?p) (aten.sum.dim_IntList@_ "
      "(aten.mul.Tensor ?dp ?p)) (aten.mul.Tensor ?dp ?p)))";
  auto applier16 = [b, with_bias](bool dropout) {
    return [b, with_bias, dropout](eg::EGraph& g, Id eclass, Subst s) -> Id {
      const auto t16 = b->dtype(g, eclass);
      if (!t16 || (*t16 != DType::BFloat16 && *t16 != DType::Float16)) return kNoId;
      if (b->dtype(g, s[0]) != DType::Float32 || b->dtype(g, s[1]) != DType::Float32) return kNoId;
      bool last = false;
      for (Id f : b->nodes(g, b->child(g, s.root, 0), "prims.fma.default")) last |= sums_last_dim(*b, g, f);
      if (!last) return kNoId;
      // The 16-bit class a float32 class is the upcast of.
      std::vector<Id> p16 = narrowed(*b, g, s[0], *t16);
      const auto convert = b->t.lang.find_op("prims.convert_element_type.default");
      if (convert) {  // autocast: P16 = convert(P32, t16)
        NodeAttrs ca;
        ca.args = {Value::of_node(0), Value::of_dtype(*t16)};
        if (auto down = g.lookup(*convert, b->t.lang.intern(ca), std::vector<Id>{g.find(s[0])})) p16.push_back(*down);
      }
      for (Id dp : narrowed(*b, g, s[1], *t16))
        for (Id p : p16) fuse_training_attention(b, g, p, dp, eclass, dropout, with_bias);
      return kNoId;
    };
  };
  rs.emplace_back("attention-training-16-bit", t.lang, core16, applier16(false));
  if (fuse_dropout) rs.emplace_back("attention-training-16-bit-dropout", t.lang, core16, applier16(true));
  return rs;
}

}  // namespace sator::rules
