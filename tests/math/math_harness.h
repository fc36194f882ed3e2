// egg's test_runner for the math language: run rules from a start term until
// every goal is in its class (checked by a hook before each iteration, as
// egg's test_fn does), then check the goals.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "egraph/runner.h"
#include "math_lang.h"

namespace sator::math {

struct MathRun {
  MathLanguage lang;
  ConstantFold fold{lang};
  eg::EGraph g{&fold};
  eg::Runner runner;
  Id root = eg::kNoId;

  // Patterns of `goals` that are not in the root's class.
  std::vector<std::string> missing(const std::vector<std::string>& goals) {
    std::vector<std::string> out;
    for (const std::string& goal : goals) {
      std::vector<std::string> vars;
      eg::Pattern p = eg::Pattern::parse(goal, lang, vars);
      eg::Matches m;
      eg::Program::compile({&p}, static_cast<uint32_t>(vars.size())).search_class(g, root, m, 1);
      if (m.empty()) out.push_back(goal);
    }
    return out;
  }

  // Runs `rules` from `start` (after adding `extra` terms first). With
  // `stop_at_goals`, a hook ends the run once all goals are present.
  eg::StopReason run(const std::vector<eg::Rewrite>& rules, const std::string& start,
                     const std::vector<std::string>& goals, bool stop_at_goals = true,
                     const std::vector<std::string>& extra = {}) {
    for (const std::string& e : extra) add_expr(g, lang, e);
    root = add_expr(g, lang, start);
    if (stop_at_goals)
      runner.with_hook([this, goals](const eg::Runner&, const eg::EGraph&) -> std::optional<std::string> {
        if (missing(goals).empty()) return "Done";
        return std::nullopt;
      });
    return runner.run(g, rules);
  }
};

}  // namespace sator::math
