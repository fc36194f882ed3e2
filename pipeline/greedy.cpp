#include "pipeline/greedy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/shape_check.h"
#include "tensor/tensor_egraph.h"
#include "pipeline/rule_selection.h"
#include "rules/attention_rules.h"
#include "rules/layout_rules.h"

namespace sator::pipeline {

namespace {

using eg::Id;
using eg::kNoId;

enum class PassKind { Layout, Recompose, Attention };
constexpr PassKind kPasses[] = {PassKind::Layout, PassKind::Recompose, PassKind::Attention};

const char* pass_name(PassKind k) {
  switch (k) {
    case PassKind::Layout: return "layout canonicalization";
    case PassKind::Recompose: return "recomposition";
    case PassKind::Attention: return "attention";
  }
  return "?";
}

std::vector<eg::Rewrite> pass_rules(PassKind k, TensorEGraph& t, bool fuse_dropout) {
  switch (k) {
    case PassKind::Layout: return rules::layout_rules(t);
    case PassKind::Recompose: return rules::recompose_rules(t);
    case PassKind::Attention: return rules::attention_rules(t, fuse_dropout);
  }
  return {};
}

// The graph as a term graph held in a never-merged e-graph: each class
// stands for one value, a rewrite replaces a class by another. Sweeps of
// successive passes run on it in turn.
class TermGraph {
 public:
  explicit TermGraph(TensorEGraph& t) : t_(t), g_(t.egraph) {
    // Sweep order follows the graph's order (FX's): an original node's
    // position is its index; a rewrite's new nodes go just before the node
    // they replace, as replace_by_example inserts them.
    const Graph& src = t.source();
    for (size_t i = src.nodes.size(); i-- > 0;)
      if (src.nodes[i].op != "output") set_key(g_.find(t.class_of(static_cast<NodeId>(i))), {static_cast<int64_t>(i), kOriginal});
  }

  // One pass: visits the live nodes last to first (by the order above);
  // returns the rewrites made.
  size_t sweep(const std::vector<eg::Rewrite>& rules, std::map<std::string, size_t>& by_rule) {
    size_t rewrites = 0;
    count_users();
    const std::vector<Id> order = topological_order();
    position_.assign(g_.num_nodes(), kNoPosition);
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = i;
    for (size_t i = order.size(); i-- > 0;) {
      const Id c = order[i];
      const std::string& op = t_.lang.op_name(g_.op(node_of(c)));
      if (op == "placeholder" || op == "get_attr" || is_replaced(c) || !is_live(c)) continue;
      const Id before = static_cast<Id>(g_.num_nodes());
      if (const eg::Rewrite* fired = rewrite_at(c, rules)) {
        ++rewrites;
        ++by_rule[fired->name()];
        for (Id n = before; n < g_.num_nodes(); ++n)
          if (!has_key(g_.find(n))) set_key(g_.find(n), {key_of(c).first, next_seq_++});
      }
    }
    compact();
    return rewrites;
  }

  // The chosen node of every class, for writing the graph back (after a
  // sweep, each class holds exactly the node that stands for it).
  eg::Extraction finish() const {
    eg::Extraction x;
    x.choice.assign(g_.num_nodes(), kNoId);
    x.cost.assign(g_.num_nodes(), 0.0);
    for (Id c = 0; c < g_.num_nodes(); ++c)
      if (g_.is_canonical(c)) x.choice[c] = node_of(c);
    return x;
  }

 private:
  static constexpr int64_t kOriginal = INT64_MAX;

  // The live classes in a topological order (Kahn's), ties broken by key.
  // Vectors by class id (ids are dense): hash maps here cost a fifth of a
  // greedy run on large graphs.
  std::vector<Id> topological_order() const {
    const size_t n = live_.size();
    std::vector<uint32_t> pending(n, 0);  // distinct live children not yet placed
    std::vector<std::vector<Id>> parents(n);
    std::vector<std::pair<int64_t, int64_t>> key(n);
    std::vector<Id> kids;
    for (Id c = 0; c < n; ++c) {
      if (!live_[c]) continue;
      key[c] = key_of(c);
      kids = distinct_children(c);
      pending[c] = static_cast<uint32_t>(kids.size());
      for (Id k : kids)
        if (k < n) parents[k].push_back(c);
    }
    auto later = [&](Id a, Id b) { return key[a] > key[b]; };
    std::priority_queue<Id, std::vector<Id>, decltype(later)> ready(later);
    for (Id c = 0; c < n; ++c)
      if (live_[c] && pending[c] == 0) ready.push(c);
    std::vector<Id> order;
    while (!ready.empty()) {
      const Id c = ready.top();
      ready.pop();
      order.push_back(c);
      for (Id p : parents[c])
        if (--pending[p] == 0) ready.push(p);
    }
    return order;
  }
  using Key = std::pair<int64_t, int64_t>;
  static constexpr Key kNoKey{INT64_MIN, INT64_MIN};
  bool has_key(Id c) const { return c < key_.size() && key_[c] != kNoKey; }
  void set_key(Id c, Key k) {
    if (c >= key_.size()) key_.resize(std::max<size_t>(c + 1, g_.num_nodes()), kNoKey);
    key_[c] = k;
  }
  Key key_of(Id c) const { return has_key(c) ? key_[c] : Key{INT64_MAX, static_cast<int64_t>(c)}; }

  bool is_replaced(Id c) const { return c < replacement_.size() && replacement_[c] != kNoId; }
  void set_replaced(Id c, Id r) {
    if (c >= replacement_.size()) replacement_.resize(std::max<size_t>(c + 1, g_.num_nodes()), kNoId);
    replacement_[c] = r;
    replaced_.push_back(c);
  }

  // Ends a sweep: merges each replaced class with its replacement and keeps
  // in every class only the node that stands for it now, so the e-graph is
  // the current term graph again: the next pass's patterns see what a
  // destructive rewriter's graph would hold, and nothing it has replaced.
  void compact() {
    if (replaced_.empty()) return;
    // By class id, as everywhere here: the classes not replaced, their node
    // and key.
    const size_t n = g_.num_nodes();
    std::vector<Id> standing;
    std::vector<Id> node(n, kNoId);
    std::vector<Key> keys(n);
    for (Id c = 0; c < n; ++c)
      if (g_.is_canonical(c) && !is_replaced(c)) {
        standing.push_back(c);
        node[c] = node_of(c);
        keys[c] = key_of(c);
      }
    // Producers before consumers (the sweep replaced consumers first): the
    // order decides which class of a pair is the root, and so which of two
    // equal symbolic shapes the merged class shows.
    for (auto it = replaced_.rbegin(); it != replaced_.rend(); ++it) g_.union_classes(*it, replacement_[*it], "greedy");
    g_.rebuild();
    replaced_.clear();
    replacement_.clear();
    // Each merged class keeps one node: the one of its earliest-keyed member.
    std::vector<Id> keep(n, kNoId);
    for (Id c : standing) {
      const Id m = g_.find(c);
      if (keep[m] == kNoId || keys[c] < keys[keep[m]]) keep[m] = c;
    }
    key_.assign(n, kNoKey);
    for (Id m = 0; m < n; ++m)
      if (keep[m] != kNoId) {
        const Id only = node[keep[m]];
        g_.retain_class_nodes(m, [&](Id x) { return x == only; });
        key_[m] = keys[keep[m]];
      }
  }

  // The class a class stands for now (following replacements).
  Id resolve(Id c) const {
    c = g_.find(c);
    if (replaced_.empty()) return c;  // most calls: no rewrite in this sweep yet
    while (is_replaced(c)) c = g_.find(replacement_[c]);
    return c;
  }
  // The node a class holds now: its original node where it has one (a
  // builder may have merged a class or two of its own), else its first.
  Id node_of(Id c) const {
    c = resolve(c);
    const auto nodes = g_.class_nodes(c);
    for (Id n : nodes)
      if (t_.is_original(n)) return n;
    return nodes.front();
  }
  std::vector<Id> children_of(Id c) const {
    std::vector<Id> out;
    for (Id k : g_.children(node_of(c))) out.push_back(resolve(k));
    return out;
  }

  // Users per class in the live term graph (distinct user nodes, as fx's
  // node.users: the live classes reading it, and the output node once), and
  // which classes are live (reached from the outputs). Counted in full at
  // the start of a sweep; a rewrite then updates them where it changed the
  // graph (replace()), so a sweep stays linear in the graph's size.
  void count_users() {
    parents_.assign(g_.num_nodes(), {});
    live_.assign(g_.num_nodes(), 0);
    outputs_.clear();
    for (const auto& o : t_.outputs())
      if (o) {
        outputs_.insert(resolve(*o));
        make_live(resolve(*o));
      }
  }
  size_t users(Id c) const { return (c < parents_.size() ? parents_[c].size() : 0) + outputs_.count(c); }
  bool is_live(Id c) const { return c < live_.size() && live_[c]; }
  // Marks c live; false if it already was.
  bool make_live_one(Id c) {
    if (c >= live_.size()) live_.resize(g_.num_nodes(), 0);
    if (live_[c]) return false;
    live_[c] = 1;
    return true;
  }
  // The readers of a class: a small set kept as a vector (most values have a
  // few readers), indexed by class id.
  std::vector<Id>& readers_of(Id c) {
    if (c >= parents_.size()) parents_.resize(g_.num_nodes());
    return parents_[c];
  }
  void add_reader(Id k, Id reader) {
    std::vector<Id>& r = readers_of(k);
    if (std::find(r.begin(), r.end(), reader) == r.end()) r.push_back(reader);
  }
  bool remove_reader(Id k, Id reader) {
    std::vector<Id>& r = readers_of(k);
    const auto it = std::find(r.begin(), r.end(), reader);
    if (it == r.end()) return false;
    *it = r.back();
    r.pop_back();
    return true;
  }
  std::vector<Id> distinct_children(Id c) const {
    std::vector<Id> kids = children_of(c);
    std::sort(kids.begin(), kids.end());
    kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    return kids;
  }

  // Records that class c now stands for class r, and updates liveness and
  // users: c's users read r; r (and what it was built from) becomes live
  // first, so a class c and r share stays live; then c and whatever only c
  // read die.
  void replace(Id c, Id r) {
    const std::vector<Id> old_kids = distinct_children(c);
    const std::vector<Id> readers = readers_of(c);
    const bool output = outputs_.count(c) > 0;
    set_replaced(c, r);
    for (Id p : readers) add_reader(r, p);
    if (output) outputs_.insert(r);
    make_live(r);
    readers_of(c).clear();
    outputs_.erase(c);
    live_[c] = 0;
    for (Id k : old_kids) release(k, c);
  }
  void make_live(Id c) {
    if (!make_live_one(c)) return;
    std::vector<Id> stack{c};
    while (!stack.empty()) {
      const Id x = stack.back();
      stack.pop_back();
      for (Id k : distinct_children(x)) {
        add_reader(k, x);
        if (make_live_one(k)) stack.push_back(k);
      }
    }
  }
  // Class k loses reader `p`; with no reader left it dies, and so on down.
  void release(Id k, Id p) {
    std::vector<std::pair<Id, Id>> stack{{k, p}};
    while (!stack.empty()) {
      const auto [x, reader] = stack.back();
      stack.pop_back();
      if (!remove_reader(x, reader) || !readers_of(x).empty() || outputs_.count(x) || !is_live(x)) continue;
      live_[x] = 0;
      for (Id kid : distinct_children(x)) stack.push_back({kid, x});
    }
  }

  // The classes a match's non-root, non-variable pattern nodes stand for,
  // each with how many distinct users the pattern gives it; false if the
  // term graph does not hold the pattern as matched.
  bool intermediates(const eg::Pattern& p, Id root, std::unordered_map<Id, std::unordered_set<Id>>& parents) const {
    const auto& nodes = p.nodes();
    std::vector<Id> cls(nodes.size(), kNoId);
    cls[nodes.size() - 1] = root;
    for (size_t i = nodes.size(); i-- > 0;) {
      const eg::PatternNode& n = nodes[i];
      if (n.is_var || cls[i] == kNoId) continue;
      const std::vector<Id> kids = children_of(cls[i]);
      if (kids.size() != n.children.size()) return false;
      for (size_t j = 0; j < kids.size(); ++j) {
        const uint32_t pj = n.children[j];
        if (nodes[pj].is_var) continue;
        if (cls[pj] != kNoId && cls[pj] != kids[j]) return false;
        cls[pj] = kids[j];
        parents[kids[j]].insert(cls[i]);
      }
    }
    return true;
  }

  // Whether `target` is below `from`. Classes placed before target in the
  // sweep's topological order cannot reach it (what a class reads comes
  // earlier), so the search stops there: it walks the rewrite's new nodes,
  // not the whole graph below them.
  bool reaches(Id from, Id target) const {
    const size_t tp = target < position_.size() ? position_[target] : kNoPosition;
    std::vector<Id> stack{from};
    std::unordered_set<Id> seen;
    while (!stack.empty()) {
      const Id c = stack.back();
      stack.pop_back();
      if (c == target) return true;
      if (!seen.insert(c).second) continue;
      if (tp != kNoPosition && c < position_.size() && position_[c] < tp) continue;
      for (Id k : children_of(c)) stack.push_back(k);
    }
    return false;
  }

  // Tries the rules in order at class c; the first match that passes the
  // users check and builds a replacement rewrites. Returns that rule.
  const eg::Rewrite* rewrite_at(Id c, const std::vector<eg::Rewrite>& rules) {
    for (const eg::Rewrite& rule : rules) {
      eg::Matches m;
      rule.search_class(g_, c, m);
      for (size_t i = 0; i < m.size(); ++i) {
        std::unordered_map<Id, std::unordered_set<Id>> parents;
        if (m.roots[i] != kNoId && g_.find(m.roots[i]) != c) continue;
        if (!intermediates(rule.searcher().front(), c, parents)) continue;
        bool users_ok = true;
        for (const auto& [k, ps] : parents) users_ok &= is_live(k) && users(k) == ps.size();
        if (!users_ok) continue;
        const size_t classes = g_.num_classes(), ids = g_.num_nodes();
        const Id rhs = rule.build(g_, m, i);
        g_.rebuild();
        // A builder that merged existing classes changed ids the user counts
        // are keyed by: count again (rare).
        const bool merged = g_.num_classes() != classes + (g_.num_nodes() - ids);
        if (merged) count_users();
        if (rhs == kNoId) continue;
        const Id r = resolve(rhs);
        if (r == g_.find(c) || reaches(r, g_.find(c))) continue;  // no change, or a cycle
        replace(g_.find(c), r);
        return &rule;
      }
    }
    return nullptr;
  }

  TensorEGraph& t_;
  eg::EGraph& g_;
  // By class id (ids are dense; hash maps here cost a large share of a
  // greedy run on large graphs): what a class was replaced by in this sweep
  // (kNoId: not replaced), the classes replaced in order, each class's sweep
  // key (position, creation).
  std::vector<Id> replacement_;
  std::vector<Id> replaced_;
  std::vector<Key> key_;
  int64_t next_seq_ = 0;
  // By class id: live readers, liveness, position in the sweep's order.
  static constexpr size_t kNoPosition = SIZE_MAX;
  std::vector<std::vector<Id>> parents_;
  std::vector<char> live_;
  std::vector<size_t> position_;
  std::unordered_set<Id> outputs_;  // classes the output node reads
};

// A graph's text with its nodes named by position: two rounds that leave the
// same graph, whatever names the writer gave new nodes, read the same.
std::string structure(const Graph& g) {
  Graph copy = g;
  for (size_t i = 0; i < copy.nodes.size(); ++i)
    if (copy.nodes[i].op != "placeholder" && copy.nodes[i].op != "output") {
      char name[32];
      std::snprintf(name, sizeof name, "n%zu", i);
      copy.nodes[i].name.assign(name, std::strlen(name));
    }
  return write_graph_text(copy);
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::vector<GreedyPassInfo> greedy_passes(bool fuse_dropout) {
  std::vector<GreedyPassInfo> out;
  for (const std::vector<rules::RuleInfo>* infos :
       {&rules::layout_rule_info(), &rules::recompose_rule_info(), &rules::attention_rule_info()}) {
    GreedyPassInfo p{pass_name(kPasses[out.size()]), {}};
    for (const rules::RuleInfo& r : *infos)
      if (fuse_dropout || std::string(r.name) != "attention-dropout") p.rules.push_back(r.name);
    out.push_back(std::move(p));
  }
  return out;
}

GreedyResult greedy_optimize(const Graph& input, const GreedyOptions& options) {
  GreedyResult gr;
  OptimizeResult& r = gr.result;
  const GraphStats in = compute_stats(input);
  r.nodes_in = in.nodes;
  r.layout_ops_in = in.layout_ops;
  r.sdpa_in = in.sdpa_ops;
  r.cost_in = estimate_cost(input, options.cost, options.device);
  const bool training = is_training_graph(input);

  const auto t0 = std::chrono::steady_clock::now();
  // Each pass reads the graph the previous one wrote (kept alive here: a
  // TensorEGraph refers to its source).
  std::deque<Graph> graphs;
  const Graph* current = &input;
  const size_t rounds = options.fixpoint ? std::max<size_t>(options.max_rounds, 1) : 1;
  // The fixpoint compares whole graphs (below); a single round needs no copy.
  std::string before = options.fixpoint ? structure(input) : std::string();
  for (size_t round = 0; round < rounds; ++round) {
    // One e-graph per round: all passes rewrite the same term graph, as
    // Inductor's passes rewrite one FX graph.
    TensorEGraph t(*current);
    TermGraph term(t);
    size_t changed = 0;
    for (PassKind k : kPasses) {
      if ((k == PassKind::Attention && training) || options.rules_only) continue;
      const std::vector<eg::Rewrite> rules = pass_rules(k, t, options.fuse_dropout);
      changed += term.sweep(rules, gr.rewrites_by_rule);
    }
    if (!options.user_rules.empty()) changed += term.sweep(rulelang::make_rewrites(options.user_rules, t), gr.rewrites_by_rule);
    r.egraph_nodes = t.egraph.total_class_nodes();
    r.egraph_classes = t.egraph.num_classes();
    r.z3_queries += t.prover.stats().queries;
    r.z3_cache_hits += t.prover.stats().cache_hits;
    r.z3_calls += t.prover.stats().z3_calls;
    if (changed > 0) {
      graphs.push_back(t.write(term.finish()));
      current = &graphs.back();
    }
    gr.rewrites += changed;
    gr.rounds = round + 1;
    if (changed == 0 || !options.fixpoint) break;
    // A round can rewrite and still leave the same graph (the writer emits
    // a view as `reshape` where its input may not be contiguous): the
    // fixpoint is the graph, not the rewrite count.
    std::string after = structure(*current);
    if (after == before) break;
    before = std::move(after);
    gr.round_limit_hit = round + 1 == rounds;
  }
  r.iterations = gr.rounds;
  r.stop = !options.fixpoint ? eg::StopReason::None
           : gr.round_limit_hit ? eg::StopReason::IterationLimit
                                : eg::StopReason::Saturated;
  r.saturate_ms = ms_since(t0);

  const auto tw = std::chrono::steady_clock::now();
  // Moved, not copied (a conditional over `input` would make a const copy).
  if (graphs.empty()) r.output = input;
  else r.output = std::move(graphs.back());
  finish_result(r, "greedy", options.cost, options.device);
  r.write_ms = ms_since(tw);
  r.extract_dag_cost = r.cost_out;
  return gr;
}

}  // namespace sator::pipeline
