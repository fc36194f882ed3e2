// `sator ops [--target T] [--json]`: the op table (every op sator knows: its
// class and whether it has a shape function) with what an output target
// says of each op. python/gpu/inductor_ops.py reads the JSON form to know
// which ops to classify.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "ir/op_table.h"
#include "ir/output_target.h"

namespace sator::cli {

namespace {

struct Options {
  std::string target = "inductor-joint";
  bool json = false;
};

void run(const Options& o) {
  const OutputTarget* target = nullptr;
  try {
    target = &output_target(o.target);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--target", e.what());
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const OpInfo& op : all_ops()) {
    const std::optional<OpVerdict> v = target->verdict(op.name);
    const std::optional<std::string> refused = target->refuses(op.name);
    if (o.json) {
      nlohmann::ordered_json j;
      j["name"] = op.name;
      j["class"] = std::string(op_class_name(op.cls));
      j["shape_function"] = op.shape_fn != nullptr;
      j["target_status"] = v ? v->status : (target->restricts() ? "unlisted" : "any");
      j["allowed"] = !refused.has_value();
      all.push_back(std::move(j));
    } else {
      std::printf("%-62s %-10s %-5s %s\n", op.name.c_str(), std::string(op_class_name(op.cls)).c_str(),
                  op.shape_fn ? "shape" : "-", refused ? ("refused: " + *refused).c_str() : "allowed");
    }
  }
  if (o.json)
    std::printf("%s\n", all.dump(1).c_str());
  else
    std::printf("%zu ops; target %s%s\n", all_ops().size(), target->name().c_str(),
                target->restricts() ? (" (op list from torch " + target->generated_with() + ")").c_str() : "");
}

}  // namespace

void add_ops_command(CLI::App& app) {
  static Options opt;
  CLI::App* cmd = app.add_subcommand("ops", "list the ops sator knows and what an output target allows");
  cmd->add_option("--target", opt.target, "output target: inductor-joint (default) or any");
  cmd->add_flag("--json", opt.json, "one JSON array");
  cmd->callback([] { run(opt); });
}

}  // namespace sator::cli
