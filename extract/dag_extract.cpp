#include <algorithm>
#include <chrono>
#include <deque>

#include "extract/dag_search.h"
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
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.improve_seconds));
  if (options.improve_seconds > 0 && best.dag_cost < kInfinite)
    best.search_cut = improve_dag(p, best.choice, best.dag_cost, deadline);
  // The greedy pass prices each class by its tree, which counts a shared
  // value once per reader: where that led the search to a DAG dearer than
  // the known solution (a fused attention forward beside a backward that
  // still needs the probabilities), the search goes on from the known one.
  if (options.known.size() == p.num_classes()) {
    std::vector<NodeIdx> known = options.known;
    for (ClassIdx c = 0; c < p.num_classes(); ++c)
      if (known[c] == kNoNode) known[c] = tree.choice[c];
    if (double cost = dag_cost(p, known); cost < best.dag_cost) {
      best.search_cut = false;
      if (options.improve_seconds > 0) best.search_cut = improve_dag(p, known, cost, deadline);
      best.choice = std::move(known), best.dag_cost = cost;
    }
  }
  cost_solution(p, best);
  best.micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return best;
}

}  // namespace sator::extract
