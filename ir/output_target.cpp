#include "ir/output_target.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>


namespace sator {

// The generated op list, embedded by CMake (ir/targets/embed.cpp.in).
extern const char* const kInductorJointOpsJson;

std::optional<OpVerdict> OutputTarget::verdict(std::string_view op) const {
  auto it = std::lower_bound(ops_.begin(), ops_.end(), op,
                             [](const auto& entry, std::string_view key) { return entry.first < key; });
  if (it == ops_.end() || it->first != op) return std::nullopt;
  return it->second;
}

std::optional<std::string> OutputTarget::refuses(std::string_view op) const {
  if (!restricts_) return std::nullopt;
  const std::optional<OpVerdict> v = verdict(op);
  if (!v) return "not in the target's op list (" + name_ + ")";
  if (v->allowed) return std::nullopt;
  return v->status + ": " + v->why;
}

const OutputTarget& output_target(std::string_view name) {
  // Built on first use; the embedded list is parsed once.
  if (name == "any") {
    static const OutputTarget any = [] {
      OutputTarget t;
      t.name_ = "any";
      return t;
    }();
    return any;
  }
  if (name == "inductor-joint") {
    static const OutputTarget joint = [] {
      // $SATOR_INDUCTOR_JOINT_OPS names a list generated for another torch
      // (python/gpu/inductor_ops.py); otherwise the compiled-in one.
      std::string text = kInductorJointOpsJson;
      if (const char* path = std::getenv("SATOR_INDUCTOR_JOINT_OPS"); path && *path) {
        std::ifstream in(path);
        if (!in) throw std::invalid_argument(std::string("cannot read $SATOR_INDUCTOR_JOINT_OPS: ") + path);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
      OutputTarget t;
      t.name_ = "inductor-joint";
      t.restricts_ = true;
      try {
        const nlohmann::json doc = nlohmann::json::parse(text);
        t.torch_ = doc.at("torch").get<std::string>();
        std::vector<std::string> allowed = doc.at("allowed").get<std::vector<std::string>>();
        for (const auto& [op, v] : doc.at("ops").items()) {
          OpVerdict verdict;
          verdict.status = v.at("status").get<std::string>();
          verdict.why = v.at("why").get<std::string>();
          verdict.allowed = std::find(allowed.begin(), allowed.end(), verdict.status) != allowed.end();
          t.ops_.emplace_back(op, std::move(verdict));
        }
      } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("the inductor-joint op list is malformed: ") + e.what());
      }
      std::sort(t.ops_.begin(), t.ops_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      return t;
    }();
    return joint;
  }
  throw std::invalid_argument("unknown output target '" + std::string(name) + "' (any or inductor-joint)");
}

std::vector<std::string> output_target_names() { return {"any", "inductor-joint"}; }

namespace {

void collect_ops(const Graph& g, std::unordered_set<std::string>& out) {
  for (const Node& n : g.nodes) {
    out.insert(n.op);
    for (const Graph& body : n.body) collect_ops(body, out);
  }
}

std::optional<TargetViolation> first_violation(const Graph& g, const OutputTarget& target,
                                               const std::unordered_set<std::string>& allowed_anyway,
                                               const std::string& prefix) {
  for (const Node& n : g.nodes) {
    if (!allowed_anyway.count(n.op))
      if (std::optional<std::string> why = target.refuses(n.op)) return TargetViolation{prefix + n.name, n.op, *why};
    for (const Graph& body : n.body)
      if (auto v = first_violation(body, target, allowed_anyway, prefix + n.name + "/")) return v;
  }
  return std::nullopt;
}

}  // namespace

std::unordered_set<std::string> ops_of(const Graph& g) {
  std::unordered_set<std::string> out;
  collect_ops(g, out);
  return out;
}

std::optional<TargetViolation> find_target_violation(const Graph& g, const OutputTarget& target,
                                                     const std::unordered_set<std::string>& allowed_anyway) {
  return first_violation(g, target, allowed_anyway, "");
}

}  // namespace sator
