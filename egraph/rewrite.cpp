#include "egraph/rewrite.h"

#include <algorithm>
#include <stdexcept>

#include "egraph/explain.h"

namespace sator::eg {

namespace {
std::vector<const Pattern*> pointers(const std::vector<Pattern>& ps) {
  std::vector<const Pattern*> out;
  for (const Pattern& p : ps) out.push_back(&p);
  return out;
}
}  // namespace

void Rewrite::parse_searcher(Language& lang, std::string_view text) {
  size_t start = 0;
  for (;;) {
    const size_t semi = text.find(';', start);
    searcher_.push_back(Pattern::parse(text.substr(start, semi == std::string_view::npos ? semi : semi - start), lang, vars_));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
}

void Rewrite::name_later_roots() {
  for (size_t j = 1; j < searcher_.size(); ++j) vars_.push_back("?#root" + std::to_string(j));
}

Rewrite::Rewrite(std::string name, Language& lang, std::string_view searcher, std::string_view applier,
                 std::vector<Condition> conditions)
    : name_(std::move(name)), conditions_(std::move(conditions)) {
  parse_searcher(lang, searcher);
  const size_t bound = vars_.size();
  applier_.push_back(Pattern::parse(applier, lang, vars_));
  if (vars_.size() != bound)
    throw PatternError("rule " + name_ + ": applier uses " + vars_.back() + ", which the searcher does not bind");
  program_ = Program::compile(pointers(searcher_), static_cast<uint32_t>(vars_.size()));
  name_later_roots();
}

Rewrite::Rewrite(std::string name, Language& lang, std::string_view searcher, Builder builder,
                 std::vector<Condition> conditions)
    : name_(std::move(name)), builder_(std::move(builder)), conditions_(std::move(conditions)) {
  parse_searcher(lang, searcher);
  program_ = Program::compile(pointers(searcher_), static_cast<uint32_t>(vars_.size()));
  name_later_roots();
}

uint32_t Rewrite::var(std::string_view name) const {
  auto it = std::find(vars_.begin(), vars_.end(), name);
  if (it == vars_.end()) throw std::invalid_argument("rule " + name_ + " has no variable " + std::string(name));
  return static_cast<uint32_t>(it - vars_.begin());
}

Id instantiate_pattern(EGraph& g, const Pattern& p, Subst s, bool uncanonical) {
  const auto& nodes = p.nodes();
  Id small[16];
  std::vector<Id> big(nodes.size() > 16 ? nodes.size() : 0);
  Id* ids = big.empty() ? small : big.data();
  std::vector<Id> kids;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PatternNode& n = nodes[i];
    if (n.is_var) {
      ids[i] = s[n.var];
      continue;
    }
    if (n.term.any_attr) throw std::invalid_argument("cannot instantiate a pattern with an attribute wildcard");
    kids.clear();
    for (uint32_t c : n.children) kids.push_back(ids[c]);
    ids[i] = uncanonical ? g.add_uncanonical(n.term.op, n.term.attr, kids) : g.add(n.term.op, n.term.attr, kids);
  }
  return ids[nodes.size() - 1];
}

Id Rewrite::build(EGraph& g, const Matches& matches, size_t i) const {
  const Subst s{matches.subst(i), matches.roots[i]};
  const Id eclass = matches.classes[i];
  for (const Condition& c : conditions_)
    if (!c(g, eclass, s)) return kNoId;
  return builder_ ? builder_(g, eclass, s) : instantiate_pattern(g, applier_.front(), s, false);
}

size_t Rewrite::apply(EGraph& g, const Matches& matches, std::chrono::steady_clock::time_point deadline) const {
  size_t changed = 0;
  const bool explain = g.explain() != nullptr;
  const bool timed = deadline != std::chrono::steady_clock::time_point::max();
  for (size_t i = 0; i < matches.size(); ++i) {
    if (timed && i % 64 == 63 && std::chrono::steady_clock::now() > deadline) break;
    const Id eclass = matches.classes[i];
    if (explain && !builder_) {
      // Proofs name terms: instantiate both sides as written.
      const Subst s{matches.subst(i), matches.roots[i]};
      bool ok = true;
      for (const Condition& c : conditions_)
        if (!(ok = c(g, eclass, s))) break;
      if (!ok) continue;
      const Id lhs = instantiate_pattern(g, searcher_.front(), s, true);
      const Id rhs = instantiate_pattern(g, applier_.front(), s, true);
      if (g.union_classes(lhs, rhs, name_)) ++changed;
      continue;
    }
    const Id before = static_cast<Id>(g.num_nodes());
    const Id rhs = build(g, matches, i);
    if (g.records_makers()) g.note_made_by(before, name_);
    if (rhs == kNoId) continue;
    // (Argument order as before the split: it decides which id stays canonical.)
    if (builder_ ? g.union_classes(eclass, rhs, name_) : g.union_classes(rhs, eclass, name_)) ++changed;
  }
  return changed;
}

}  // namespace sator::eg
