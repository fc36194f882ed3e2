#include "rules/attention_builder.h"

#include "rules/causal_mask.h"

namespace sator::rules {

// The last-two-dims transpose permutation of a rank-r tensor.
bool is_last_two_swap(const std::vector<int64_t>& dims) {
  const size_t r = dims.size();
  if (r < 2) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return dims[r - 2] == static_cast<int64_t>(r - 1) && dims[r - 1] == static_cast<int64_t>(r - 2);
}

std::vector<int64_t> int_list(const Value& v, size_t rank) {
  std::vector<int64_t> out;
  if (v.kind == Value::Kind::Int) out.push_back(v.i);
  for (const Value& x : v.list) out.push_back(x.i);
  for (int64_t& d : out)
    if (d < 0) d += static_cast<int64_t>(rank);
  return out;
}


bool softmax_of(const std::shared_ptr<AttentionBuilder>& b, eg::EGraph& g, Id sm_class, Id scores) {
  for (Id sm : b->nodes(g, sm_class, "aten._softmax.default")) {
    const NodeAttrs& a = b->attrs(g, sm);
    if (b->child(g, sm, 0) == g.find(scores) && a.args.size() == 3 && (a.args[1].i == 3 || a.args[1].i == -1) &&
        !a.args[2].b)
      return true;
  }
  // SDPA's own softmax (a row of -inf gives 0), with no dtype change.
  for (Id sm : b->nodes(g, sm_class, "aten._safe_softmax.default")) {
    const NodeAttrs& a = b->attrs(g, sm);
    if (b->child(g, sm, 0) == g.find(scores) && a.args.size() >= 2 && (a.args[1].i == 3 || a.args[1].i == -1) &&
        (a.args.size() < 3 || a.args[2].kind == Value::Kind::None) && a.kwargs.empty())
      return true;
  }
  return false;
}

std::vector<AttentionForm> attention_forms(const std::shared_ptr<AttentionBuilder>& b, eg::EGraph& g, Id scores, Id v) {
  std::vector<AttentionForm> out;
  const auto *ss = b->shape(scores), *sv_found = b->shape(v);
  if (!ss || !sv_found || ss->size() != 4 || sv_found->size() != 4) return out;
  // Copied: the nodes added below may move the analysis' storage.
  const std::vector<SymExpr> sv = *sv_found;
  const auto qdt = b->dtype(g, scores);
  if (!qdt || !is_floating(*qdt)) return out;
  // The canonical scores: [mask +] [scale ·] matmul(q, permute(x, A)). Every
  // other way models write them (a division, a 0-d tensor holding the
  // scale, a transpose, scales on q or k, a scale of 1) meets this form
  // through the identities of rules/matmul.rules and rules/layout.rules.
  struct Form {
    Id scores;  // the class holding matmul(q, kᵀ)
    std::optional<Value> scale;  // a number
    Id mask = kNoId;
    Id scale_tensor = kNoId;  // a 0-d tensor computed at run time: applied to q first
  };
  std::vector<Form> forms;
  auto scaled_forms = [&](Id cls, Id mask) {
    forms.push_back(Form{cls, std::nullopt, mask, kNoId});
    for (Id n : b->nodes(g, cls, "aten.mul.Tensor")) {
      if (auto c = b->scalar_arg(g, n)) {
        forms.push_back(Form{b->child(g, n, 0), c, mask, kNoId});
      } else if (g.children(n).size() == 2) {
        // A scale computed at run time: (q·c)kᵀ = c·(qkᵀ).
        const Id c = b->child(g, n, 1);
        const auto* sc = b->shape(c);
        if (sc && sc->empty() && b->dtype(g, c) == qdt && !b->t.analysis.constant(g, c))
          forms.push_back(Form{b->child(g, n, 0), std::nullopt, mask, c});
      }
    }
  };
  scaled_forms(g.find(scores), kNoId);
  for (Id add : b->nodes(g, g.find(scores), "aten.add.Tensor")) {
    if (g.children(add).size() != 2 || !b->attrs(g, add).kwargs.empty()) continue;
    scaled_forms(b->child(g, add, 0), b->child(g, add, 1));
  }
  for (const Form& f : forms) {
    for (Id mm : b->nodes(g, f.scores, "aten.matmul.default")) {
      const Id q = b->child(g, mm, 0), kt = b->child(g, mm, 1);
      const auto* sq_found = b->shape(q);
      if (!sq_found || sq_found->size() != 4 || b->dtype(g, q) != qdt || b->dtype(g, v) != qdt) continue;
      const std::vector<SymExpr> sq = *sq_found;
      for (Id p : b->nodes(g, kt, "aten.permute.default")) {
        const NodeAttrs& pa = b->attrs(g, p);
        if (pa.args.size() != 2) continue;
        // kᵀ = permute(x, A): k = x when A swaps the last two dims, else
        // k = permute(x, A with its last two entries swapped) (the form a
        // greedy composition of k's own permute with the transpose leaves).
        const std::vector<int64_t> d = int_list(pa.args[1], 4);
        if (d.size() != 4) continue;
        Id k = b->child(g, p, 0);
        if (!is_last_two_swap(d)) {
          NodeAttrs ka;
          ka.args = {Value::of_node(0), Value::of_list({Value::of_int(d[0]), Value::of_int(d[1]), Value::of_int(d[3]),
                                                        Value::of_int(d[2])})};
          k = b->add(g, "aten.permute.default", ka, {k});
        }
        const auto* sk = b->shape(k);
        if (!sk || !b->same_dims(std::vector<SymExpr>(sk->begin(), sk->begin() + 2),
                                 std::vector<SymExpr>(sq.begin(), sq.begin() + 2)) ||
            !b->same_dims(std::vector<SymExpr>(sv.begin(), sv.begin() + 3),
                          std::vector<SymExpr>(sk->begin(), sk->begin() + 3)))
          continue;
        // A mask that is the causal triangle becomes is_causal (SDPA's own,
        // faster path), one that adds 0 everywhere goes (whatever its
        // dtype: adding 0 or -inf rounds to nothing); any other additive
        // mask is passed as it is, and must be of q's dtype (SDPA's
        // boolean masks mean something else).
        const auto* sm = f.mask == kNoId ? nullptr : b->shape(f.mask);
        const MaskKind kind = sm && sm->size() >= 2 && b->equal((*sm)[sm->size() - 2], sq[2]) &&
                                      b->equal((*sm)[sm->size() - 1], (*sk)[2])
                                  ? classify_mask(b->t, f.mask)
                                  : MaskKind::Other;
        const bool pass_mask = f.mask != kNoId && kind == MaskKind::Other;
        if (pass_mask && b->dtype(g, f.mask) != qdt) continue;
        AttentionForm a;
        a.q = q;
        a.k = k;
        a.causal = kind == MaskKind::Causal;
        a.mask = pass_mask ? f.mask : kNoId;
        a.scale_value = f.scale;
        a.scale = f.scale ? AttentionBuilder::number(*f.scale) : 1.0;
        a.scale_tensor = f.scale_tensor;
        out.push_back(a);
      }
    }
  }
  return out;
}

bool cudnn_takes(const AttentionBuilder& b, const eg::EGraph& g, Id q, Id k, Id v) {
  const auto t = b.dtype(g, q);
  if (!t || (*t != DType::BFloat16 && *t != DType::Float16)) return false;
  const auto *sq = b.shape(q), *sk = b.shape(k), *sv = b.shape(v);
  if (!sq || !sk || !sv || sq->size() != 4 || sk->size() != 4 || sv->size() != 4) return false;
  if (!b.equal((*sq)[1], (*sk)[1]) || !b.equal((*sq)[1], (*sv)[1])) return false;
  const auto e = (*sq)[3].as_constant(), ev = (*sv)[3].as_constant();
  return e && ev && *e == *ev && *e % 8 == 0 && *e <= 128;
}

}  // namespace sator::rules
