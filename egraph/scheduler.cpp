#include "egraph/scheduler.h"

#include <algorithm>

namespace sator::eg {

void BackoffScheduler::search(size_t iteration, const EGraph& g, const Rewrite& rw, size_t rule, Matches& out) {
  if (stats_.size() <= rule) stats_.resize(rule + 1);
  RuleStats& s = stats_[rule];
  if (iteration < s.banned_until) return;
  const auto relative = static_cast<size_t>(matches_per_node_ * static_cast<double>(g.total_class_nodes()));
  const size_t threshold = std::max(match_limit_, relative) << s.times_banned;
  rw.search(g, out, threshold + 1);
  if (out.size() > threshold) {
    s.banned_until = iteration + (ban_length_ << s.times_banned);
    ++s.times_banned;
    out.clear();
    return;
  }
  ++s.times_applied;
}

bool BackoffScheduler::can_stop(size_t iteration) {
  size_t min_ban = SIZE_MAX;
  for (const RuleStats& s : stats_)
    if (s.banned_until > iteration) min_ban = std::min(min_ban, s.banned_until);
  if (min_ban == SIZE_MAX) return true;
  // Saturated except for banned rules: unban them now rather than stop.
  const size_t delta = min_ban - iteration;
  for (RuleStats& s : stats_)
    if (s.banned_until > iteration) s.banned_until -= delta;
  return false;
}

}  // namespace sator::eg
