#include "extract/dag_search.h"

#include <algorithm>
#include <cstdint>

namespace sator::extract {

namespace {

using Clock = std::chrono::steady_clock;

// The chosen DAG, kept up to date under single switches: each class's number
// of references from the reached classes' chosen nodes (a root counts once
// as well); a class is reached while that number is positive. A switch then
// costs what it brings in or drops, not a walk of the whole DAG (a full
// re-evaluation per trial made the search quadratic: on 17 copies of a
// training graph it could not finish one pass in its budget).
class DagState {
 public:
  DagState(const Problem& p, std::vector<NodeIdx>& choice)
      : p_(p), choice_(choice), refs_(p.num_classes(), 0), stamp_(p.num_classes(), 0) {
    double unused = 0;
    for (ClassIdx r : p.roots) add(r, unused, nullptr);
  }

  bool reached(ClassIdx c) const { return refs_[c] > 0; }

  // Chooses node n for class c; returns the change of the DAG cost, and
  // appends to `brought` the classes the switch newly reaches.
  double set(ClassIdx c, NodeIdx n, std::vector<ClassIdx>* brought = nullptr) {
    const NodeIdx old = choice_[c];
    choice_[c] = n;
    if (!reached(c)) return 0.0;
    double delta = p_.nodes[n].cost - p_.nodes[old].cost;
    for (ClassIdx k : p_.nodes[n].children) add(k, delta, brought);
    for (ClassIdx k : p_.nodes[old].children) remove(k, delta);
    return delta;
  }

  // Whether the chosen DAG below class c's node reaches c again.
  bool cyclic_at(ClassIdx c) {
    ++generation_;
    stack_.assign(p_.nodes[choice_[c]].children.begin(), p_.nodes[choice_[c]].children.end());
    while (!stack_.empty()) {
      const ClassIdx k = stack_.back();
      stack_.pop_back();
      if (k == c) return true;
      if (stamp_[k] == generation_ || choice_[k] == kNoNode) continue;
      stamp_[k] = generation_;
      const auto& kids = p_.nodes[choice_[k]].children;
      stack_.insert(stack_.end(), kids.begin(), kids.end());
    }
    return false;
  }

 private:
  // One more reference to k; a class reached anew adds its node's cost and
  // references its children in turn (a worklist: graphs can be deep).
  void add(ClassIdx k, double& delta, std::vector<ClassIdx>* brought) {
    work_.assign(1, k);
    while (!work_.empty()) {
      const ClassIdx c = work_.back();
      work_.pop_back();
      if (refs_[c]++ > 0) continue;
      if (brought) brought->push_back(c);
      const NodeIdx n = choice_[c];
      if (n == kNoNode) {  // a class without a finite extraction: no move may reach it
        delta += kInfinite;
        continue;
      }
      delta += p_.nodes[n].cost;
      work_.insert(work_.end(), p_.nodes[n].children.begin(), p_.nodes[n].children.end());
    }
  }

  void remove(ClassIdx k, double& delta) {
    work_.assign(1, k);
    while (!work_.empty()) {
      const ClassIdx c = work_.back();
      work_.pop_back();
      if (--refs_[c] > 0) continue;
      const NodeIdx n = choice_[c];
      if (n == kNoNode) {
        delta -= kInfinite;
        continue;
      }
      delta -= p_.nodes[n].cost;
      work_.insert(work_.end(), p_.nodes[n].children.begin(), p_.nodes[n].children.end());
    }
  }

  const Problem& p_;
  std::vector<NodeIdx>& choice_;
  std::vector<uint32_t> refs_;
  std::vector<uint32_t> stamp_;
  uint32_t generation_ = 0;
  std::vector<ClassIdx> work_, stack_;
};

// The reached classes, roots first (the order the passes visit them).
std::vector<ClassIdx> reached_order(const Problem& p, const std::vector<NodeIdx>& choice) {
  std::vector<bool> seen(p.num_classes(), false);
  std::vector<ClassIdx> order, stack(p.roots.begin(), p.roots.end());
  while (!stack.empty()) {
    const ClassIdx c = stack.back();
    stack.pop_back();
    if (seen[c]) continue;
    seen[c] = true;
    order.push_back(c);
    for (ClassIdx k : p.nodes[choice[c]].children) stack.push_back(k);
  }
  return order;
}

// Classes whose nodes' children include each class, by class.
std::vector<std::vector<ClassIdx>> users_by_class(const Problem& p) {
  std::vector<std::vector<ClassIdx>> users(p.num_classes());
  for (const ProblemNode& n : p.nodes)
    for (ClassIdx k : n.children) users[k].push_back(n.cls);
  for (auto& u : users) {
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
  }
  return users;
}

// Whether a switch that changes the cost by `delta` lowers it.
bool lowers(double delta) { return delta < -1e-12; }

// One pass of single switches over the reached classes; true if one helped.
bool switch_pass(const Problem& p, DagState& s, std::vector<NodeIdx>& choice, double& cost,
                 Clock::time_point deadline) {
  bool changed = false;
  for (ClassIdx c : reached_order(p, choice)) {
    if (Clock::now() >= deadline) break;
    if (p.class_nodes[c].size() < 2 || !s.reached(c)) continue;
    const NodeIdx current = choice[c];
    for (NodeIdx alt : p.class_nodes[c]) {
      if (alt == current) continue;
      const double delta = s.set(c, alt);
      if (lowers(delta) && !s.cyclic_at(c)) {
        cost += delta;
        changed = true;
        break;
      }
      s.set(c, current);
    }
  }
  return changed;
}

// A pair move for sharing: switching class c to `alt` alone may cost more
// (it brings in a new class k), yet pay once other classes switch to nodes
// that share k too -- e.g. one scaling of a matrix used by two matmuls
// instead of a scaling after each. Tries c := alt, then every other class
// with a node reading one of the classes alt brought in, each kept if it
// lowers the cost; keeps the lot if the total beats the cost before.
bool share_move(const Problem& p, const std::vector<std::vector<ClassIdx>>& users, DagState& s,
                std::vector<NodeIdx>& choice, double& cost, ClassIdx c, NodeIdx alt,
                const std::vector<bool>& was_reached) {
  const NodeIdx current = choice[c];
  std::vector<ClassIdx> brought;
  double change = s.set(c, alt, &brought);
  if (brought.empty() || s.cyclic_at(c)) {
    s.set(c, current);
    return false;
  }
  std::vector<std::pair<ClassIdx, NodeIdx>> undo{{c, current}};
  for (ClassIdx k : brought)
    for (ClassIdx d : users[k]) {
      if (d == c || !was_reached[d] || !s.reached(d)) continue;
      const NodeIdx before = choice[d];
      for (NodeIdx n : p.class_nodes[d]) {
        if (n == before || std::find(p.nodes[n].children.begin(), p.nodes[n].children.end(), k) == p.nodes[n].children.end())
          continue;
        const double delta = s.set(d, n);
        if (lowers(delta) && !s.cyclic_at(d)) {
          change += delta;
          undo.push_back({d, before});
          break;
        }
        s.set(d, before);
      }
    }
  if (lowers(change)) {
    cost += change;
    return true;
  }
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) s.set(it->first, it->second);
  return false;
}

// One pair move somewhere; true if one helped.
bool pair_pass(const Problem& p, const std::vector<std::vector<ClassIdx>>& users, DagState& s,
               std::vector<NodeIdx>& choice, double& cost, Clock::time_point deadline) {
  const std::vector<ClassIdx> order = reached_order(p, choice);
  std::vector<bool> reached(p.num_classes(), false);
  for (ClassIdx c : order) reached[c] = true;
  std::vector<ClassIdx> stack, seen;
  for (ClassIdx c : order) {
    if (Clock::now() >= deadline) break;
    if (p.class_nodes[c].size() < 2) continue;
    for (NodeIdx alt : p.class_nodes[c]) {
      if (alt == choice[c]) continue;
      // Worth trying only if alt brings in a class another reached class
      // could read too (else nothing new can be shared). What alt brings in:
      // the classes below it, through the current choices, not yet reached.
      stack.assign(p.nodes[alt].children.begin(), p.nodes[alt].children.end());
      seen.clear();
      bool shareable = false;
      while (!stack.empty() && !shareable) {
        const ClassIdx k = stack.back();
        stack.pop_back();
        if (reached[k] || k == c || std::find(seen.begin(), seen.end(), k) != seen.end()) continue;
        seen.push_back(k);
        for (ClassIdx d : users[k]) shareable = shareable || (d != c && reached[d]);
        if (choice[k] != kNoNode)
          stack.insert(stack.end(), p.nodes[choice[k]].children.begin(), p.nodes[choice[k]].children.end());
      }
      if (shareable && share_move(p, users, s, choice, cost, c, alt, reached)) return true;
    }
  }
  return false;
}

}  // namespace

bool improve_dag(const Problem& p, std::vector<NodeIdx>& choice, double& cost, Clock::time_point deadline) {
  // Single switches to convergence (cheap), then a pair move, and again.
  DagState state(p, choice);
  std::vector<std::vector<ClassIdx>> users;  // made when pair moves are first tried
  while (Clock::now() < deadline) {
    while (switch_pass(p, state, choice, cost, deadline) && Clock::now() < deadline) {
    }
    if (users.empty()) users = users_by_class(p);
    if (!pair_pass(p, users, state, choice, cost, deadline)) return Clock::now() >= deadline;
  }
  return true;
}

}  // namespace sator::extract
