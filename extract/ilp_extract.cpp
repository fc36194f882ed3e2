#include <chrono>
#include <cmath>

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include "extract/extractors.h"

namespace sator::extract {

namespace {

// Classes reachable from the roots through any of their nodes: the only
// ones an extraction can use.
std::vector<bool> live_classes(const Problem& p) {
  std::vector<bool> live(p.num_classes(), false);
  std::vector<ClassIdx> stack(p.roots.begin(), p.roots.end());
  while (!stack.empty()) {
    const ClassIdx c = stack.back();
    stack.pop_back();
    if (live[c]) continue;
    live[c] = true;
    for (NodeIdx n : p.class_nodes[c])
      for (ClassIdx k : p.nodes[n].children) stack.push_back(k);
  }
  return live;
}

}  // namespace

Solution extract_ilp(const Problem& p, const IlpOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Solution warm = options.warm_start ? extract_dag(p) : Solution{};

  // Columns: x_n (binary) for every node of a live class, then t_c (the
  // class's level, continuous in [0, K-1]) for every live class.
  const std::vector<bool> live = live_classes(p);
  std::vector<int> col_of_node(p.nodes.size(), -1), col_of_class(p.num_classes(), -1);
  std::vector<NodeIdx> node_of_col;
  for (NodeIdx n = 0; n < p.nodes.size(); ++n)
    if (live[p.nodes[n].cls]) col_of_node[n] = static_cast<int>(node_of_col.size()), node_of_col.push_back(n);
  const int num_x = static_cast<int>(node_of_col.size());
  int num_cols = num_x;
  for (ClassIdx c = 0; c < p.num_classes(); ++c)
    if (live[c]) col_of_class[c] = num_cols++;
  const double levels = static_cast<double>(num_cols - num_x);

  std::vector<double> lower(static_cast<size_t>(num_cols), 0.0), upper(static_cast<size_t>(num_cols), 1.0),
      objective(static_cast<size_t>(num_cols), 0.0);
  for (int j = 0; j < num_x; ++j) objective[static_cast<size_t>(j)] = p.nodes[node_of_col[static_cast<size_t>(j)]].cost;
  for (int j = num_x; j < num_cols; ++j) upper[static_cast<size_t>(j)] = std::max(levels - 1.0, 0.0);

  // Rows as (row, column, value) triplets, assembled once at the end
  // (appending row by row reallocates the matrix every time).
  std::vector<int> row_index, col_index;
  std::vector<double> element, row_lower, row_upper;
  auto add_row = [&](const std::vector<std::pair<int, double>>& v, double lo, double hi) {
    const int r = static_cast<int>(row_lower.size());
    for (const auto& [col, value] : v) row_index.push_back(r), col_index.push_back(col), element.push_back(value);
    row_lower.push_back(lo);
    row_upper.push_back(hi);
  };
  for (ClassIdx r : p.roots) {  // some node of each root class
    std::vector<std::pair<int, double>> v;
    for (NodeIdx m : p.class_nodes[r]) v.emplace_back(col_of_node[m], 1.0);
    add_row(v, 1.0, COIN_DBL_MAX);
  }
  for (int j = 0; j < num_x; ++j) {
    const NodeIdx n = node_of_col[static_cast<size_t>(j)];
    const ProblemNode& node = p.nodes[n];
    std::vector<ClassIdx> kids = node.children;
    std::sort(kids.begin(), kids.end());
    kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    for (ClassIdx k : kids) {
      if (k == node.cls) {  // a node that needs its own class: never on an acyclic extraction
        upper[static_cast<size_t>(j)] = 0.0;
        continue;
      }
      std::vector<std::pair<int, double>> need = {{j, -1.0}};  // x_n <= sum of x over class k
      for (NodeIdx m : p.class_nodes[k]) need.emplace_back(col_of_node[m], 1.0);
      add_row(need, 0.0, COIN_DBL_MAX);
      // x_n = 1 => t_cls >= t_k + 1
      add_row({{col_of_class[node.cls], 1.0}, {col_of_class[k], -1.0}, {j, -levels}}, 1.0 - levels, COIN_DBL_MAX);
    }
  }

  CoinPackedMatrix rows(false, row_index.data(), col_index.data(), element.data(),
                        static_cast<CoinBigIndex>(element.size()));
  rows.setDimensions(static_cast<int>(row_lower.size()), num_cols);  // columns in no row count too
  OsiClpSolverInterface solver;
  solver.loadProblem(rows, lower.data(), upper.data(), objective.data(), row_lower.data(), row_upper.data());
  for (int j = 0; j < num_x; ++j) solver.setInteger(j);
  solver.messageHandler()->setLogLevel(0);
  // The root LP counts against the limit too (CBC only checks between nodes).
  solver.getModelPtr()->setMaximumSeconds(std::max(options.time_limit_s, 0.01));
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);
  // No presolve: CLP's presolve ignores the time limit and grows
  // quadratically on long chains (a 30,000-relu chain spent 9 s of an 11 s
  // run there under a 2 s limit, issue 39). Without it the 91
  // extraction-gym files extract to the same costs, proved optimal on the
  // same 62 at a 3 s limit, in the same total time (docs/benchmarks.md).
  solver.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  solver.setHintParam(OsiDoPresolveInResolve, false, OsiHintDo);
  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.setMaximumSeconds(std::max(options.time_limit_s, 0.01));
  if (warm.dag_cost < kInfinite) {
    // The dag solution, with each class's level its position in a post-order.
    std::vector<double> x(static_cast<size_t>(num_cols), 0.0);
    std::vector<int> level(p.num_classes(), -1);
    int next = 0;
    std::vector<std::pair<ClassIdx, size_t>> stack;
    for (ClassIdx r : p.roots) {
      if (level[r] >= 0) continue;
      stack.emplace_back(r, 0);
      level[r] = -2;
      while (!stack.empty()) {
        auto& [c, i] = stack.back();
        const auto& kids = p.nodes[warm.choice[c]].children;
        if (i < kids.size()) {
          const ClassIdx k = kids[i++];
          if (level[k] == -1) level[k] = -2, stack.emplace_back(k, 0);
        } else {
          level[c] = next++;
          x[static_cast<size_t>(col_of_node[warm.choice[c]])] = 1.0;
          stack.pop_back();
        }
      }
    }
    for (ClassIdx c = 0; c < p.num_classes(); ++c)
      if (live[c] && level[c] >= 0) x[static_cast<size_t>(col_of_class[c])] = level[c];
    model.setBestSolution(x.data(), num_cols, warm.dag_cost, true);
  }
  model.branchAndBound();

  Solution s;
  s.choice.assign(p.num_classes(), kNoNode);
  const double* best = model.bestSolution();
  if (best) {
    for (int j = 0; j < num_x; ++j) {
      if (best[j] < 0.5) continue;
      const NodeIdx n = node_of_col[static_cast<size_t>(j)];
      NodeIdx& chosen = s.choice[p.nodes[n].cls];
      if (chosen == kNoNode || p.nodes[n].cost < p.nodes[chosen].cost) chosen = n;
    }
  }
  cost_solution(p, s);
  if (!(s.dag_cost < kInfinite) && warm.dag_cost < kInfinite) {
    s = warm;  // the solver found nothing usable in time: the warm start stands
    s.note = "no ILP solution in time; the dag extraction is returned";
  }
  s.proved_optimal = model.isProvenOptimal() && s.dag_cost < kInfinite;
  if (s.note.empty()) s.note = s.proved_optimal ? "proved optimal" : "time limit: not proved optimal";
  s.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace sator::extract
