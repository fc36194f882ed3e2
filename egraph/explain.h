// Explanations: why two terms are equal, as the chain of rewrites that
// proves it (egg's proof forest, "Rewrite-based explanations", EGRAPHS 2022).
//
// Every union is recorded as an edge between the two *node ids* it was given
// (terms as written, not canonical classes), labelled with the rule or with
// "congruence". The edges form a forest: a union makes one endpoint the root
// of its tree and hangs it under the other, so exactly one path joins any two
// equal terms. A congruence edge is explained by explaining its children
// pairwise; the result is flattened into whole-term steps.
#pragma once

#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "egraph/id.h"

namespace sator::eg {

class EGraph;
class Language;

class Explain {
 public:
  struct Step {
    std::string term;  // the whole term after this step
    std::string rule;  // empty on the first line
    bool forward = true;  // false: the rule was used right-to-left
  };

  explicit Explain(const EGraph& g) : g_(g) {}

  // The id of a term exactly as written (children as given), or kNoId.
  Id term_id(OpId op, AttrId attr, std::span<const Id> children) const;
  void add_term(Id id, OpId op, AttrId attr, std::span<const Id> children);
  void record_union(Id a, Id b, std::string_view reason, bool congruence);

  // The steps turning term a into term b (ids as returned by add_uncanonical
  // or EGraph::add_expr-style helpers). Throws if they are not equal.
  std::vector<Step> explain_equivalence(Id a, Id b, const Language& lang) const;
  std::string term_text(Id id, const Language& lang) const;
  // The rules on the proof that a equals b, in order, each once (what
  // explain_equivalence's steps name, without writing out the terms: a
  // term of a deep graph written as text is exponential in its depth).
  std::vector<std::string> rules_between(Id a, Id b) const;
  size_t num_edges() const { return edges_; }

 private:
  struct Edge {
    Id parent = kNoId;
    uint32_t reason = 0;  // index into reasons_; 0 is congruence
    bool forward = true;  // this node -> parent applies the rule left to right
  };
  void reroot(Id x);
  std::vector<Id> path_to_root(Id x) const;
  void flatten(Id a, Id b, const Language& lang, std::vector<Step>& out, int depth) const;
  // The proof's edges from a to b: (from, to, reason, forward), reason 0 a congruence.
  std::vector<std::tuple<Id, Id, uint32_t, bool>> proof_edges(Id a, Id b) const;
  uint32_t intern_reason(std::string_view r);

  const EGraph& g_;
  std::vector<Edge> forest_;
  std::vector<std::vector<Id>> original_;  // children as written, per id
  std::map<std::tuple<OpId, AttrId, std::vector<Id>>, Id> term_ids_;
  std::vector<std::string> reasons_ = {"congruence"};
  size_t edges_ = 0;
};

}  // namespace sator::eg
