// The three topological orders Inductor's reorder_for_peak_memory tries
// (torch/_inductor/memory.py), on sator's graphs and its storage estimate,
// so that sator's schedule is never worse than what Inductor would pick for
// the same nodes. Each breaks ties by the context's keys (the input's
// order) and keeps random draws in their order (list_schedule.h).
#pragma once

#include <vector>

#include "schedule/list_schedule.h"

namespace sator::schedule {

// Inductor's "lpmf", least peak memory first: of the ready nodes, the one
// whose run leaves the peak so far lowest (max(live + what it allocates,
// peak so far)), then the one that adds least after its frees (allocates
// less what its run frees: storages it reads last).
Order least_peak_first(const Graph& g, const ScheduleContext& c, PeakWatch* watch = nullptr);

// Inductor's "bfs": of the ready nodes, the one whose operands ran earliest
// (the sorted list of their positions, compared as words), so that what a
// node made is used soon after it was made.
Order earliest_operands_first(const Graph& g, const ScheduleContext& c, PeakWatch* watch = nullptr);

// Inductor's "dfs": nodes visited in ascending order of the bytes they
// allocate plus the freeable bytes they read; each visit runs the node's
// unrun operands first (in that same order, recursively), then the node:
// one consumer chain is finished before the next is started.
Order depth_first(const Graph& g, const ScheduleContext& c, PeakWatch* watch = nullptr);

}  // namespace sator::schedule
