// The equality-saturation loop (egg's Runner): search every rule, apply every
// match, rebuild; repeat until saturated or a limit is reached, recording
// what each iteration cost and why the run stopped.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "egraph/scheduler.h"

namespace sator::eg {

enum class StopReason { None, Saturated, IterationLimit, NodeLimit, TimeLimit, Other };
const char* stop_reason_name(StopReason r);

struct Iteration {
  size_t nodes = 0;      // class nodes at the start (egg's total_number_of_nodes)
  size_t classes = 0;    // classes at the start
  size_t memo = 0;       // egg-compatible hashcons size at the start
  size_t matches = 0;    // matches found by all rules
  size_t applied = 0;    // matches that changed the e-graph
  size_t rebuild_unions = 0;
  double search_s = 0, apply_s = 0, rebuild_s = 0, total_s = 0;
  StopReason stop = StopReason::None;
};

// One rule over a whole run (egg's Runner report has these): its matches,
// the matches that changed the e-graph, and the time it took.
struct RuleRun {
  size_t matches = 0;
  size_t applied = 0;
  double search_s = 0, apply_s = 0;
};

class Runner {
 public:
  // Returns a message to stop the run with, or nothing to go on.
  using Hook = std::function<std::optional<std::string>(const Runner&, const EGraph&)>;

  Runner();
  Runner& with_iter_limit(size_t n) { iter_limit_ = n; return *this; }
  // Compared against the egg-compatible hashcons size, as egg does.
  Runner& with_node_limit(size_t n) { node_limit_ = n; return *this; }
  Runner& with_time_limit(double seconds) { time_limit_s_ = seconds; return *this; }
  Runner& with_scheduler(std::unique_ptr<Scheduler> s) { scheduler_ = std::move(s); return *this; }
  Runner& with_hook(Hook h) { hooks_.push_back(std::move(h)); return *this; }

  StopReason run(EGraph& g, const std::vector<Rewrite>& rules);

  const std::vector<Iteration>& iterations() const { return iterations_; }
  // By rule, in the order run() was given them.
  const std::vector<RuleRun>& rule_runs() const { return rule_runs_; }
  StopReason stop_reason() const { return stop_; }
  const std::string& stop_message() const { return stop_message_; }
  std::string report(const EGraph& g) const;

 private:
  StopReason check_limits(const EGraph& g) const;
  std::chrono::steady_clock::time_point deadline() const;
  Iteration run_one(EGraph& g, const std::vector<Rewrite>& rules);

  size_t iter_limit_ = 30, node_limit_ = 10000;
  double time_limit_s_ = 5.0;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<Hook> hooks_;
  std::vector<Iteration> iterations_;
  std::vector<RuleRun> rule_runs_;
  std::vector<Matches> matches_;  // one buffer per rule, reused across iterations
  StopReason stop_ = StopReason::None;
  std::string stop_message_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sator::eg
