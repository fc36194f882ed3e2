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
// not starve the rest: a rule with more than match_limit << times_banned
// matches is skipped for ban_length << times_banned iterations.
class BackoffScheduler : public Scheduler {
 public:
  explicit BackoffScheduler(size_t match_limit = 1000, size_t ban_length = 5)
      : match_limit_(match_limit), ban_length_(ban_length) {}
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
  std::vector<RuleStats> stats_;
};

}  // namespace sator::eg
