#include <algorithm>
#include <chrono>
#include <deque>

#include "extract/extractors.h"

namespace sator::extract {

namespace {

using Clock = std::chrono::steady_clock;

// A class's greedy choice and the distinct nodes of the DAG below it.
struct CostSet {
  std::vector<NodeIdx> nodes;  // sorted
  double total = kInfinite;
  bool set = false;
};

// Node ids the greedy pass may produce in all (the sets it builds): past
// it the pass gives up and the tree extraction starts the local search. A
// chain n classes deep holds n²/2 ids (a 100k-deep graph: 20 GB), so an
// unbounded pass grows quadratically in memory and time.
constexpr size_t kGreedySetBudget = size_t{1} << 25;  // 32M ids, 128 MB

// extraction-gym's faster-greedy-dag, with sorted vectors as node sets; empty
// when its sets outgrow kGreedySetBudget.
std::vector<NodeIdx> greedy_dag(const Problem& p) {
  std::vector<NodeIdx> choice(p.num_classes(), kNoNode);
  std::vector<CostSet> sets(p.num_classes());
  const auto parents = parents_of(p);
  std::deque<NodeIdx> work;
  std::vector<bool> queued(p.nodes.size(), false);
  for (NodeIdx n = 0; n < p.nodes.size(); ++n)
    if (p.nodes[n].children.empty()) work.push_back(n), queued[n] = true;
  std::vector<NodeIdx> merged, scratch;
  size_t produced = 0;
  while (!work.empty()) {
    const NodeIdx n = work.front();
    work.pop_front();
    queued[n] = false;
    const ProblemNode& node = p.nodes[n];
    bool ready = true;
    for (ClassIdx k : node.children) ready = ready && sets[k].set;
    if (!ready) continue;
    merged.assign(1, n);
    for (ClassIdx k : node.children) {
      scratch.clear();
      std::set_union(merged.begin(), merged.end(), sets[k].nodes.begin(), sets[k].nodes.end(), std::back_inserter(scratch));
      merged.swap(scratch);
      produced += merged.size();
      if (produced > kGreedySetBudget) return {};
    }
    double total = 0;
    bool cyclic = false;
    for (NodeIdx m : merged) {
      total += p.nodes[m].cost;
      cyclic = cyclic || (m != n && p.nodes[m].cls == node.cls);
    }
    if (cyclic || !(total < sets[node.cls].total)) continue;
    CostSet& cs = sets[node.cls];
    cs.nodes = merged;
    cs.total = total;
    cs.set = true;
    choice[node.cls] = n;
    for (NodeIdx parent : parents[node.cls])
      if (!queued[parent]) queued[parent] = true, work.push_back(parent);
  }
  return choice;
}

// Local search: switch one reachable class to another of its nodes (or a
// class and the classes that would share what the switch brings in) while
// that lowers the DAG cost, until a pass finds nothing or time runs out.
// Only classes the current DAG reaches can change its cost.
std::vector<ClassIdx> reachable(const Problem& p, const std::vector<NodeIdx>& choice) {
  std::vector<bool> seen(p.num_classes(), false);
  std::vector<ClassIdx> order, stack(p.roots.begin(), p.roots.end());
  while (!stack.empty()) {
    const ClassIdx c = stack.back();
    stack.pop_back();
    if (seen[c] || choice[c] == kNoNode) continue;
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

// A pair move for sharing: switching class c to `alt` alone may cost more
// (it brings in a new class k), yet pay once other classes switch to nodes
// that share k too -- e.g. one scaling of a matrix used by two matmuls
// instead of a scaling after each. Tries c := alt, then every other class
// with a node reading one of the classes alt brought in, each kept if it
// lowers the cost; keeps the lot if the total beats `cost`.
bool share_move(const Problem& p, const std::vector<std::vector<ClassIdx>>& users, std::vector<NodeIdx>& choice,
                double& cost, ClassIdx c, NodeIdx alt, const std::vector<bool>& was_reached) {
  const NodeIdx current = choice[c];
  choice[c] = alt;
  std::vector<ClassIdx> brought;
  for (ClassIdx k : reachable(p, choice))
    if (!was_reached[k]) brought.push_back(k);
  if (brought.empty()) {
    choice[c] = current;
    return false;
  }
  std::vector<std::pair<ClassIdx, NodeIdx>> undo{{c, current}};
  double trial = dag_cost(p, choice);
  for (ClassIdx k : brought)
    for (ClassIdx d : users[k]) {
      if (d == c || !was_reached[d]) continue;
      const NodeIdx before = choice[d];
      for (NodeIdx n : p.class_nodes[d]) {
        if (n == before || std::find(p.nodes[n].children.begin(), p.nodes[n].children.end(), k) == p.nodes[n].children.end())
          continue;
        choice[d] = n;
        const double t = dag_cost(p, choice);
        if (t < trial - 1e-12) {
          trial = t;
          undo.push_back({d, before});
          break;
        }
        choice[d] = before;
      }
    }
  if (trial < cost - 1e-12) {
    cost = trial;
    return true;
  }
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) choice[it->first] = it->second;
  return false;
}

// One pass of single switches over the reachable classes; true if one helped.
bool switch_pass(const Problem& p, std::vector<NodeIdx>& choice, double& cost, Clock::time_point deadline) {
  bool changed = false;
  for (ClassIdx c : reachable(p, choice)) {
    if (Clock::now() >= deadline) break;
    if (p.class_nodes[c].size() < 2) continue;
    const NodeIdx current = choice[c];
    for (NodeIdx alt : p.class_nodes[c]) {
      if (alt == current) continue;
      choice[c] = alt;
      const double trial = dag_cost(p, choice);
      if (trial < cost - 1e-12) {
        cost = trial;
        changed = true;
        break;
      }
      choice[c] = current;
    }
  }
  return changed;
}

// One pair move somewhere; true if one helped.
bool pair_pass(const Problem& p, const std::vector<std::vector<ClassIdx>>& users, std::vector<NodeIdx>& choice,
               double& cost, Clock::time_point deadline) {
  const std::vector<ClassIdx> order = reachable(p, choice);
  std::vector<bool> reached(p.num_classes(), false);
  for (ClassIdx c : order) reached[c] = true;
  for (ClassIdx c : order) {
    if (Clock::now() >= deadline) break;
    if (p.class_nodes[c].size() < 2) continue;
    for (NodeIdx alt : p.class_nodes[c]) {
      if (alt == choice[c]) continue;
      // Worth trying only if alt brings in a class another reached class
      // could read too (else nothing new can be shared). What alt brings in:
      // the classes below it, through the current choices, not yet reached.
      std::vector<ClassIdx> stack(p.nodes[alt].children.begin(), p.nodes[alt].children.end());
      std::vector<ClassIdx> seen;
      bool shareable = false;
      while (!stack.empty() && !shareable) {
        const ClassIdx k = stack.back();
        stack.pop_back();
        if (reached[k] || k == c || std::find(seen.begin(), seen.end(), k) != seen.end()) continue;
        seen.push_back(k);
        for (ClassIdx d : users[k]) shareable = shareable || (d != c && reached[d]);
        if (choice[k] != kNoNode) stack.insert(stack.end(), p.nodes[choice[k]].children.begin(), p.nodes[choice[k]].children.end());
      }
      if (shareable && share_move(p, users, choice, cost, c, alt, reached)) return true;
    }
  }
  return false;
}

// Returns whether the search stopped at the deadline (false: it converged).
bool improve(const Problem& p, std::vector<NodeIdx>& choice, double& cost, Clock::time_point deadline) {
  // Single switches to convergence (cheap), then a pair move, and again.
  std::vector<std::vector<ClassIdx>> users;  // made when pair moves are first tried
  while (Clock::now() < deadline) {
    while (switch_pass(p, choice, cost, deadline) && Clock::now() < deadline) {
    }
    if (users.empty()) users = users_by_class(p);
    if (!pair_pass(p, users, choice, cost, deadline)) return Clock::now() >= deadline;
  }
  return true;
}

}  // namespace

Solution extract_dag(const Problem& p, const DagOptions& options) {
  const auto start = Clock::now();
  Solution best;
  best.choice = greedy_dag(p);
  // The tree solution shares differently and is sometimes the better DAG
  // (and is the start when the greedy pass outgrew its budget).
  const Solution tree = extract_tree(p);
  if (best.choice.empty()) {
    best.choice = tree.choice, best.dag_cost = tree.dag_cost;
  } else {
    best.dag_cost = dag_cost(p, best.choice);
    if (tree.dag_cost < best.dag_cost) best.choice = tree.choice, best.dag_cost = tree.dag_cost;
  }
  // Classes the chosen DAG does not reach keep a choice too (the tree's), so
  // that local search can switch to nodes that need them.
  for (ClassIdx c = 0; c < p.num_classes(); ++c)
    if (best.choice[c] == kNoNode) best.choice[c] = tree.choice[c];
  if (options.improve_seconds > 0 && best.dag_cost < kInfinite) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.improve_seconds));
    best.search_cut = improve(p, best.choice, best.dag_cost, deadline);
  }
  cost_solution(p, best);
  best.micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return best;
}

}  // namespace sator::extract
