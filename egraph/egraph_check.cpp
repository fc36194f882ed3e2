// EGraph::check_invariants: the invariants of egraph.h, verified from scratch.
#include <algorithm>
#include <unordered_set>

#include "egraph/egraph.h"

namespace sator::eg {

std::string EGraph::check_invariants(const std::function<std::string(const EGraph&, Id)>& check_analysis) const {
  if (!clean()) return "not rebuilt: pending work remains";
  auto node_text = [this](Id n) {
    std::string s("node ");  // appended piecewise: GCC 12 warns falsely on "literal" + string
    s.append(std::to_string(n)).append(" (op ").append(std::to_string(op(n))).append(", children");
    for (Id c : children(n)) s.append(" ").append(std::to_string(c));
    return s + ")";
  };
  size_t total = 0;
  std::vector<Id> roots(slot_owner_.begin(), slot_owner_.end());
  std::sort(roots.begin(), roots.end());
  ensure_index();
  if (roots != class_ids_) return "class_ids() is stale";
  std::vector<std::vector<Id>> sorted_parents(classes_.size());
  for (size_t i = 0; i < classes_.size(); ++i) {
    sorted_parents[i].assign(classes_[i].parents.begin(), classes_[i].parents.end());
    std::sort(sorted_parents[i].begin(), sorted_parents[i].end());
  }
  for (Id c : class_ids_) {
    if (!is_canonical(c)) return "class " + std::to_string(c) + " is not canonical";
    const Class& k = classes_[slot(c)];
    if (k.nodes.empty()) return "class " + std::to_string(c) + " has no nodes";
    total += k.nodes.size();
    for (size_t i = 0; i < k.nodes.size(); ++i) {
      const Id n = k.nodes[i];
      if (find(n) != c) return node_text(n) + " is listed in class " + std::to_string(c) + " but belongs to " + std::to_string(find(n));
      if (i > 0 && !store_.less(k.nodes[i - 1], n)) return "class " + std::to_string(c) + " is not sorted and unique";
      for (Id child : children(n)) {
        if (!is_canonical(child)) return node_text(n) + " has a non-canonical child";
        if (!std::binary_search(sorted_parents[slot(child)].begin(), sorted_parents[slot(child)].end(), n))
          return node_text(n) + " is missing from its child's parent list";
      }
      // Hashcons and congruence: the key maps to a node of this very class.
      const Id holder = hashcons_.find(store_, op(n), attr(n), children(n), Hashcons::hash(op(n), attr(n), children(n)));
      if (holder == kNoId) return node_text(n) + " is not hash-consed";
      if (find(holder) != c) return node_text(n) + " is congruent to a node of class " + std::to_string(find(holder));
    }
    const auto ops = classes_with_op(op(k.nodes.front()));
    if (!std::binary_search(ops.begin(), ops.end(), c)) return "class " + std::to_string(c) + " missing from the op index";
    if (check_analysis) {
      if (std::string why = check_analysis(*this, c); !why.empty()) return "class " + std::to_string(c) + ": " + why;
    }
  }
  if (total != total_class_nodes_) return "node count is off: " + std::to_string(total) + " vs " + std::to_string(total_class_nodes_);
  std::string bad;
  hashcons_.for_each([&](Id n) {
    if (!bad.empty()) return;
    for (Id child : children(n))
      if (!is_canonical(child)) bad = "hash-consed " + node_text(n) + " has a non-canonical child";
    if (hashcons_.find(store_, op(n), attr(n), children(n), Hashcons::hash(op(n), attr(n), children(n))) != n)
      bad = "hash-consed " + node_text(n) + " is not found under its own key";
  });
  return bad;
}

}  // namespace sator::eg
