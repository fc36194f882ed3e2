// The e-graph: hash-consed e-nodes in e-classes, with deferred rebuilding.
//
// Representation. Every e-node gets an Id when first added; its operator,
// attribute and children (ids, in one shared arena) never move. The class it
// starts in has the same Id, and a union-find maps ids to canonical class ids.
// A class holds the ids of its member nodes and of the nodes that use it as a
// child (its parents).
//
// Invariants, as in egg (POPL 2021), hold after rebuild():
//  1. Hashcons: every live node's children are canonical, and the hashcons
//     maps each distinct (op, attr, children) to one node of the right class.
//  2. Congruence: no two classes hold nodes with equal (op, attr, children).
//  3. Class node lists are sorted by (op, attr, children), without duplicates.
//  4. Analysis data is the fixpoint of make/merge over the class's nodes.
// add() and union_classes() may break 1–3; they record the work (parents of
// merged classes go on a pending list) and rebuild() repairs it in one pass,
// repeating until no congruence is left. check_invariants() verifies all of it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "egraph/analysis.h"
#include "egraph/hashcons.h"
#include "egraph/id.h"
#include "egraph/node_store.h"
#include "egraph/small_ids.h"
#include "egraph/unique_queue.h"

namespace sator::eg {

class Explain;

class EGraph {
 public:
  struct Class {
    SmallIds nodes;    // member nodes; sorted and unique after rebuild
    SmallIds parents;  // nodes that have this class as a child (may repeat)
  };

  struct Stats {
    uint64_t unions = 0;             // successful unions, all reasons
    uint64_t congruence_unions = 0;  // unions found by rebuild
    uint64_t rebuilds = 0;
  };

  explicit EGraph(Analysis* analysis = nullptr);
  ~EGraph();
  EGraph(const EGraph&) = delete;
  EGraph& operator=(const EGraph&) = delete;

  // --- building ---------------------------------------------------------
  // Adds a node (children may be non-canonical); returns its canonical class.
  Id add(OpId op, AttrId attr, std::span<const Id> children);
  // Like add, but returns the id of the node itself as written: with
  // explanations enabled, a term not seen before gets a fresh id, equal to
  // the existing class by congruence, so that proofs can name it.
  Id add_uncanonical(OpId op, AttrId attr, std::span<const Id> children);
  // The class of a node if present (children may be non-canonical).
  std::optional<Id> lookup(OpId op, AttrId attr, std::span<const Id> children) const;

  // Merges the classes of a and b; `reason` names the rule for explanations
  // (empty: a user union). Returns false if they were already one class.
  bool union_classes(Id a, Id b, std::string_view reason = {});
  // Restores the invariants; returns the number of congruence unions.
  size_t rebuild();
  bool clean() const { return pending_.empty() && analysis_pending_.empty() && dirty_.empty(); }

  // --- reading ------------------------------------------------------------
  Id find(Id id) const;
  Id find_mut(Id id);
  bool is_canonical(Id id) const { return link_[id] & kRoot; }

  const NodeStore& nodes() const { return store_; }
  OpId op(Id node) const { return store_.op(node); }
  AttrId attr(Id node) const { return store_.attr(node); }
  std::span<const Id> children(Id node) const { return store_.children(node); }

  const Class& eclass(Id id) const { return classes_[slot(find(id))]; }
  std::span<const Id> class_nodes(Id id) const { return eclass(id).nodes; }
  // Canonical ids of all classes, and of those holding a node with `op`
  // (both refreshed by rebuild(); built on first use after it, so that a
  // caller rebuilding after every small change — the greedy rewriter — does
  // not pay a scan of every class each time).
  std::span<const Id> class_ids() const {
    ensure_index();
    return class_ids_;
  }
  std::span<const Id> classes_with_op(OpId op) const;

  size_t num_classes() const { return classes_.size(); }
  size_t num_nodes() const { return store_.size(); }  // every id ever made
  size_t total_class_nodes() const { return total_class_nodes_; }  // sum of class node lists
  size_t hashcons_size() const { return hashcons_.size(); }
  // The number of distinct keys egg's memo would hold (it never drops stale
  // keys); used where egg compares it against a node limit.
  size_t egg_memo_size() const { return egg_memo_size_; }
  const Stats& stats() const { return stats_; }

  // When a class last changed, on a clock that every change advances: a
  // node joined it, it took in another class, its analysis data grew, a
  // member's children were re-canonicalized, or nodes were pruned from it.
  // What a rule reads of a class (its nodes, their children's classes, its
  // data) changes only with it, so a match over classes that have not
  // changed since it was last applied builds nothing new (the rule runner
  // skips it: rulelang/rule_run.cpp). A merged-away id is no longer
  // canonical, which says as much.
  uint32_t changed_at(Id canonical) const { return changed_at_[canonical]; }
  uint32_t change_clock() const { return change_clock_; }

  // Keeps only the nodes of class `id` for which keep(node) is true (egg's
  // pruning in constant folding). Removed nodes stay hash-consed.
  void retain_class_nodes(Id id, const std::function<bool(Id)>& keep);

  Analysis* analysis() const { return analysis_; }

  // Proofs: must be enabled before the first add.
  void enable_explanations();
  Explain* explain() const { return explain_.get(); }

  // Which rule made a node (`optimize --explain`): once enabled, the
  // rewrites note the nodes their right-hand sides add.
  void enable_makers() { record_makers_ = true; }
  bool records_makers() const { return record_makers_; }
  // Nodes from `first` to the last one made so far were made by `rule`.
  void note_made_by(Id first, std::string_view rule);
  // The rule that made a node, or "" (the input's own, or not recorded).
  std::string_view made_by(Id node) const;

  // Checks invariants 1–4 (analysis data only through check_analysis, if
  // given). Returns an empty string when they hold, else what is broken.
  std::string check_invariants(const std::function<std::string(const EGraph&, Id)>& check_analysis = {}) const;

  // Bytes held by the e-graph's own structures (capacities, not sizes), in
  // total and per structure.
  size_t memory_bytes() const;
  std::vector<std::pair<std::string, size_t>> memory_breakdown() const;

 private:
  Id make_class(Id node);
  bool perform_union(Id a, Id b, std::string_view reason, bool congruence);
  void process_unions();
  void rebuild_classes();
  Class& cls(Id canonical) { return classes_[slot(canonical)]; }
  uint32_t slot(Id canonical) const { return link_[canonical] & ~kRoot; }
  void canonicalize_children(Id node);

  Analysis* analysis_;
  NodeStore store_;
  // Union-find and class table in one word per id: a root holds kRoot | its
  // index in classes_, any other id its parent.
  static constexpr Id kRoot = 1u << 31;
  std::vector<Id> link_;
  std::vector<Class> classes_;
  std::vector<Id> slot_owner_;  // index in classes_ -> canonical id
  Hashcons hashcons_;
  std::vector<Id> pending_;  // nodes whose children may have gone stale
  UniqueQueue analysis_pending_;
  std::vector<Id> dirty_;  // classes whose node lists need sorting
  std::vector<uint8_t> is_dirty_;
  std::vector<uint32_t> changed_at_;  // by id: the clock when the class (if canonical) last changed
  uint32_t change_clock_ = 0;
  void note_changed(Id canonical) {
    if (canonical >= changed_at_.size()) changed_at_.resize(link_.size() + 1024, 0);
    changed_at_[canonical] = ++change_clock_;
  }
  void ensure_index() const {
    if (index_stale_) build_index();
  }
  void build_index() const;
  // The class list and operator index: a cache of the classes' state at the
  // last rebuild(), filled lazily (hence mutable).
  mutable bool index_stale_ = false;
  mutable std::vector<Id> class_ids_;
  mutable std::vector<uint32_t> op_class_begin_;  // CSR index: classes_with_op
  mutable std::vector<Id> op_class_ids_;
  size_t total_class_nodes_ = 0;
  size_t egg_memo_size_ = 0;
  Stats stats_;
  std::unique_ptr<Explain> explain_;
  bool record_makers_ = false;
  std::vector<uint32_t> maker_;             // per node id: index into maker_names_ + 1, or 0
  std::vector<std::string> maker_names_;
};

}  // namespace sator::eg
