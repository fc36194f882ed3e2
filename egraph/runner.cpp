#include "egraph/runner.h"

#include <cstdio>

namespace sator::eg {

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::None: return "none";
    case StopReason::Saturated: return "saturated";
    case StopReason::IterationLimit: return "iteration limit";
    case StopReason::NodeLimit: return "node limit";
    case StopReason::TimeLimit: return "time limit";
    case StopReason::Other: return "stopped by hook";
  }
  return "?";
}

Runner::Runner() : scheduler_(std::make_unique<BackoffScheduler>()) {}

// The time limit as a point in time: a rule's apply stops there too (one
// rule's matches can take long on a large graph).
std::chrono::steady_clock::time_point Runner::deadline() const {
  if (!(time_limit_s_ < 1e9)) return std::chrono::steady_clock::time_point::max();
  return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(time_limit_s_));
}

StopReason Runner::check_limits(const EGraph& g) const {
  if (since(start_) > time_limit_s_) return StopReason::TimeLimit;
  if (g.egg_memo_size() > node_limit_) return StopReason::NodeLimit;
  if (iterations_.size() >= iter_limit_) return StopReason::IterationLimit;
  return StopReason::None;
}

Iteration Runner::run_one(EGraph& g, const std::vector<Rewrite>& rules) {
  Iteration it;
  const auto t0 = std::chrono::steady_clock::now();
  StopReason result = check_limits(g);
  it.nodes = g.total_class_nodes();
  it.classes = g.num_classes();
  it.memo = g.egg_memo_size();
  if (result == StopReason::None) {
    for (const Hook& h : hooks_) {
      if (auto msg = h(*this, g)) {
        result = StopReason::Other;
        stop_message_ = *msg;
        break;
      }
    }
  }
  const size_t i = iterations_.size();
  // Match buffers keep their memory from one iteration to the next.
  std::vector<Matches>& matches = matches_;
  matches.resize(rules.size());
  for (Matches& m : matches) m.clear();
  const auto ts = std::chrono::steady_clock::now();
  for (size_t r = 0; r < rules.size() && result == StopReason::None; ++r) {
    const auto t = std::chrono::steady_clock::now();
    scheduler_->search(i, g, rules[r], r, matches[r]);
    it.matches += matches[r].size();
    rule_runs_[r].matches += matches[r].size();
    rule_runs_[r].search_s += since(t);
    result = check_limits(g);
  }
  it.search_s = since(ts);
  const auto ta = std::chrono::steady_clock::now();
  for (size_t r = 0; r < rules.size() && result == StopReason::None; ++r) {
    if (matches[r].empty()) continue;
    const auto t = std::chrono::steady_clock::now();
    const size_t applied = rules[r].apply(g, matches[r], deadline());
    it.applied += applied;
    rule_runs_[r].applied += applied;
    rule_runs_[r].apply_s += since(t);
    result = check_limits(g);
  }
  it.apply_s = since(ta);
  const auto tr = std::chrono::steady_clock::now();
  it.rebuild_unions = g.rebuild();
  it.rebuild_s = since(tr);
  if (result == StopReason::None && it.applied == 0 && scheduler_->can_stop(i) && it.memo == g.egg_memo_size() &&
      it.classes == g.num_classes())
    result = StopReason::Saturated;
  it.stop = result;
  it.total_s = since(t0);
  return it;
}

StopReason Runner::run(EGraph& g, const std::vector<Rewrite>& rules) {
  start_ = std::chrono::steady_clock::now();
  stop_ = StopReason::None;
  stop_message_.clear();
  rule_runs_.assign(rules.size(), RuleRun{});
  g.rebuild();
  for (;;) {
    iterations_.push_back(run_one(g, rules));
    StopReason r = iterations_.back().stop;
    if (r == StopReason::None) r = check_limits(g);
    if (r != StopReason::None) {
      stop_ = r;
      return r;
    }
  }
}

std::string Runner::report(const EGraph& g) const {
  double search = 0, apply = 0, rebuild = 0, total = 0;
  for (const Iteration& it : iterations_) {
    search += it.search_s;
    apply += it.apply_s;
    rebuild += it.rebuild_s;
    total += it.total_s;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Runner report\n  Stop reason: %s%s%s\n  Iterations: %zu\n  Egraph size: %zu nodes, %zu classes, %zu memo\n"
                "  Total time: %.4f s (search %.4f, apply %.4f, rebuild %.4f)\n",
                stop_reason_name(stop_), stop_message_.empty() ? "" : ": ", stop_message_.c_str(), iterations_.size(),
                g.total_class_nodes(), g.num_classes(), g.egg_memo_size(), total, search, apply, rebuild);
  return buf;
}

}  // namespace sator::eg
