// Rule schedulers (egg's SimpleScheduler and BackoffScheduler).
#pragma once

#include <vector>

#include "egraph/rewrite.h"

namespace sator::eg {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Matches of rule `rule` (its index in the rule list) at `iteration`.
  virtual void search(size_t iteration, const EGraph& g, const Rewrite& rw, size_t rule, Matches& out) {
    (void)iteration, (void)rule;
    rw.search(g, out);
  }
  // Whether the runner may stop as saturated at `iteration`.
  virtual bool can_stop(size_t iteration) {
    (void)iteration;
    return true;
  }
};

using SimpleScheduler = Scheduler;  // every rule, every match, every iteration

// Bans a rule for a while when it matches too often, so explosive rules do
// not starve the rest: a rule with more than limit << times_banned matches
// is skipped for ban_length << times_banned iterations, where limit is
// match_limit or matches_per_node times the e-graph's nodes, whichever
// is larger. Relative to the graph's size, because "too often" is: with a
// fixed limit (egg's), a graph of N copies of a model banned its ordinary
// one-match-per-site rules N times as often and needed more iterations to
// saturate as it grew (5 at 2.7k nodes, 30 and unsaturated at 165k).
class BackoffScheduler : public Scheduler {
 public:
  explicit BackoffScheduler(size_t match_limit = 1000, size_t ban_length = 5, double matches_per_node = 1.0)
      : match_limit_(match_limit), ban_length_(ban_length), matches_per_node_(matches_per_node) {}
  void search(size_t iteration, const EGraph& g, const Rewrite& rw, size_t rule, Matches& out) override;
  bool can_stop(size_t iteration) override;
  size_t times_banned(size_t rule) const { return rule < stats_.size() ? stats_[rule].times_banned : 0; }

 private:
  struct RuleStats {
    size_t times_applied = 0;
    size_t banned_until = 0;
    size_t times_banned = 0;
  };
  size_t match_limit_, ban_length_;
  double matches_per_node_;
  std::vector<RuleStats> stats_;
};

}  // namespace sator::eg
