#include "egraph/explain.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "egraph/egraph.h"
#include "egraph/language.h"

namespace sator::eg {

Id Explain::term_id(OpId op, AttrId attr, std::span<const Id> children) const {
  auto it = term_ids_.find({op, attr, std::vector<Id>(children.begin(), children.end())});
  return it == term_ids_.end() ? kNoId : it->second;
}

void Explain::add_term(Id id, OpId op, AttrId attr, std::span<const Id> children) {
  if (forest_.size() <= id) {
    forest_.resize(id + 1);
    original_.resize(id + 1);
  }
  original_[id].assign(children.begin(), children.end());
  term_ids_.emplace(std::make_tuple(op, attr, original_[id]), id);
}

uint32_t Explain::intern_reason(std::string_view r) {
  if (r.empty()) r = "union";
  for (uint32_t i = 1; i < reasons_.size(); ++i)
    if (reasons_[i] == r) return i;
  reasons_.emplace_back(r);
  return static_cast<uint32_t>(reasons_.size() - 1);
}

// Reverses the edges from x to its root, so that x becomes the root. A
// reversed edge is walked the other way, so its rule direction flips.
void Explain::reroot(Id x) {
  Id prev = kNoId;
  Edge carried{};
  Id cur = x;
  while (cur != kNoId) {
    const Edge old = forest_[cur];
    forest_[cur] = Edge{prev, carried.reason, !carried.forward};
    prev = cur;
    carried = old;
    cur = old.parent;
  }
}

void Explain::record_union(Id a, Id b, std::string_view reason, bool congruence) {
  reroot(a);
  forest_[a] = Edge{b, congruence ? 0u : intern_reason(reason), true};
  ++edges_;
}

std::vector<Id> Explain::path_to_root(Id x) const {
  std::vector<Id> path;
  for (Id cur = x; cur != kNoId; cur = forest_[cur].parent) path.push_back(cur);
  return path;
}

std::string Explain::term_text(Id id, const Language& lang) const {
  const std::string head = lang.format_node(g_.op(id), g_.attr(id));
  if (original_[id].empty()) return head;
  std::string s("(");  // appended piecewise: GCC 12 warns falsely on "(" + string
  s += head;
  for (Id c : original_[id]) s.append(" ").append(term_text(c, lang));
  return s + ")";
}

std::vector<std::tuple<Id, Id, uint32_t, bool>> Explain::proof_edges(Id a, Id b) const {
  const std::vector<Id> pa = path_to_root(a), pb = path_to_root(b);
  // Lowest common ancestor: the first node of pa that is on pb.
  Id lca = kNoId;
  for (Id x : pa)
    if (std::find(pb.begin(), pb.end(), x) != pb.end()) {
      lca = x;
      break;
    }
  if (lca == kNoId) throw std::logic_error("explain: the terms are not equal");
  // Edges a -> ... -> lca (forward), then lca -> ... -> b (backward).
  std::vector<std::tuple<Id, Id, uint32_t, bool>> edges;
  for (Id x = a; x != lca; x = forest_[x].parent)
    edges.emplace_back(x, forest_[x].parent, forest_[x].reason, forest_[x].forward);
  std::vector<std::tuple<Id, Id, uint32_t, bool>> down;
  for (Id x = b; x != lca; x = forest_[x].parent)
    down.emplace_back(forest_[x].parent, x, forest_[x].reason, !forest_[x].forward);
  edges.insert(edges.end(), down.rbegin(), down.rend());
  return edges;
}

std::vector<std::string> Explain::rules_between(Id a, Id b) const {
  if (g_.find(a) != g_.find(b)) throw std::invalid_argument("explain: the terms are not in one class");
  std::vector<std::string> rules;
  // Pairs of equal terms still to explain; a pair seen once is not walked
  // again (congruences of a DAG reach the same pair by many paths).
  std::vector<std::pair<Id, Id>> todo{{a, b}};
  std::set<std::pair<Id, Id>> seen;
  while (!todo.empty()) {
    const auto [x, y] = todo.back();
    todo.pop_back();
    if (x == y || !seen.insert({x, y}).second) continue;
    const auto edges = proof_edges(x, y);
    // Children's pairs go on the stack in reverse, so they are explained in order.
    for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
      const auto& [from, to, reason, forward] = *e;
      if (reason != 0) continue;
      for (size_t i = original_[from].size(); i-- > 0;) todo.emplace_back(original_[from][i], original_[to][i]);
    }
    for (const auto& [from, to, reason, forward] : edges)
      if (reason != 0 && std::find(rules.begin(), rules.end(), reasons_[reason]) == rules.end())
        rules.push_back(reasons_[reason]);
  }
  return rules;
}

// Appends the steps from a to b (not a's own line) to `out`.
void Explain::flatten(Id a, Id b, const Language& lang, std::vector<Step>& out, int depth) const {
  if (depth > 10000) throw std::runtime_error("explanation too deep");
  if (a == b) return;
  const auto edges = proof_edges(a, b);
  for (const auto& [from, to, reason, forward] : edges) {
    if (reason != 0) {
      out.push_back(Step{term_text(to, lang), reasons_[reason], forward});
      continue;
    }
    // Congruence: same operator, children equal pairwise; rewrite them in turn.
    std::vector<std::string> kids;
    for (Id c : original_[from]) kids.push_back(term_text(c, lang));
    const std::string head = lang.format_node(g_.op(from), g_.attr(from));
    for (size_t i = 0; i < original_[from].size(); ++i) {
      std::vector<Step> sub;
      flatten(original_[from][i], original_[to][i], lang, sub, depth + 1);
      for (Step& s : sub) {
        kids[i] = s.term;
        std::string t("(");
        t += head;
        for (const std::string& k : kids) t.append(" ").append(k);
        out.push_back(Step{t + ")", s.rule, s.forward});
      }
    }
  }
}

std::vector<Explain::Step> Explain::explain_equivalence(Id a, Id b, const Language& lang) const {
  if (g_.find(a) != g_.find(b)) throw std::invalid_argument("explain: the terms are not in one class");
  std::vector<Step> out{Step{term_text(a, lang), "", true}};
  flatten(a, b, lang, out, 0);
  return out;
}

}  // namespace sator::eg
