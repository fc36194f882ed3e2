// Output targets: what a graph sator writes may contain, for the program
// that reads it next. `any` (the default for the CLI) allows every op sator
// knows. `inductor-joint` (sator_torch.InductorPass's default) allows only
// the ops Inductor accepts in a joint graph after its decompositions ran:
// ir/targets/inductor_joint_ops.json, generated from Inductor's lowering and
// decomposition tables by python/gpu/inductor_ops.py and compiled in.
// An op the input graph already has is always allowed: the input's own form
// is what the consumer was going to accept anyway.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace sator {

struct OpVerdict {
  std::string status;  // lowered, fallback, bridge, structural, decomposed, unknown
  std::string why;
  bool allowed = false;
};

class OutputTarget {
 public:
  const std::string& name() const { return name_; }
  bool restricts() const { return restricts_; }
  // What the target says of `op`; nullopt when it does not list it.
  std::optional<OpVerdict> verdict(std::string_view op) const;
  // Why `op` cannot be written for this target (unlisted ops cannot either,
  // when the target restricts), or nullopt when it can.
  std::optional<std::string> refuses(std::string_view op) const;
  // The torch version the op list was generated with ("" for `any`).
  const std::string& generated_with() const { return torch_; }

 private:
  friend const OutputTarget& output_target(std::string_view name);
  std::string name_, torch_;
  bool restricts_ = false;
  std::vector<std::pair<std::string, OpVerdict>> ops_;  // sorted by name
};

// Throws std::invalid_argument naming the known targets for an unknown name.
const OutputTarget& output_target(std::string_view name);
std::vector<std::string> output_target_names();

// The ops a graph uses, chunk bodies included.
std::unordered_set<std::string> ops_of(const Graph& g);

struct TargetViolation {
  std::string node, op, why;  // node: "outer/inner" inside a chunk body
};

// The first node of `g` (chunk bodies included) whose op `target` refuses
// and `allowed_anyway` (the input's ops) does not hold.
std::optional<TargetViolation> find_target_violation(const Graph& g, const OutputTarget& target,
                                                     const std::unordered_set<std::string>& allowed_anyway);

}  // namespace sator
