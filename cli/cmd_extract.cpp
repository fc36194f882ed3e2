// `sator extract FILE.json --extractor tree|dag|ilp [--time-limit S] [--json]`:
// extraction on an extraction-gym e-graph (egraph-serialize JSON), printing
// the tree cost, the DAG cost and the microseconds the extractor took.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/validators.h"
#include "extract/extractors.h"
#include "extract/gym_json.h"
#include "ir/graph_io.h"

namespace sator::cli {

namespace {

struct Options {
  std::string path, extractor = "dag";
  double time_limit = 60.0;
  bool json = false;
};

void run(const Options& o) {
  if (o.extractor != "tree" && o.extractor != "dag" && o.extractor != "ilp")
    throw CLI::ValidationError("--extractor", "must be tree, dag or ilp, not '" + o.extractor + "'");
  if (!(o.time_limit > 0)) throw CLI::ValidationError("--time-limit", "must be a positive number of seconds");
  const extract::Problem p = extract::read_gym_file(o.path);
  extract::Solution s;
  if (o.extractor == "tree") {
    s = extract::extract_tree(p);
  } else if (o.extractor == "dag") {
    extract::DagOptions d;
    d.improve_seconds = std::min(0.5, o.time_limit);
    s = extract::extract_dag(p, d);
  } else {
    extract::IlpOptions i;
    i.time_limit_s = o.time_limit;
    s = extract::extract_ilp(p, i);
  }
  // Every node of a needed class reads a class that cannot be built (a
  // cycle with no way out): there is nothing to extract.
  if (!std::isfinite(s.dag_cost)) throw GraphError(o.path, "", "no finite extraction: a root e-class has no acyclic term");
  if (o.json) {
    nlohmann::ordered_json j = {{"file", o.path},         {"extractor", o.extractor},
                                {"classes", p.num_classes()}, {"nodes", p.nodes.size()},
                                {"tree_cost", s.tree_cost}, {"dag_cost", s.dag_cost},
                                {"micros", s.micros}};
    if (o.extractor == "ilp") j["proved_optimal"] = s.proved_optimal;
    std::cout << j.dump() << "\n";
  } else {
    std::printf("%s: %zu classes, %zu nodes; %s: tree cost %.17g, dag cost %.17g, %.0f us%s%s\n", o.path.c_str(),
                p.num_classes(), p.nodes.size(), o.extractor.c_str(), s.tree_cost, s.dag_cost, s.micros,
                o.extractor == "ilp" ? "; " : "", o.extractor == "ilp" ? s.note.c_str() : "");
  }
}

}  // namespace

void add_extract_command(CLI::App& app) {
  static Options opt;
  CLI::App* cmd = app.add_subcommand("extract", "extract from an extraction-gym e-graph (egraph-serialize JSON)");
  cmd->add_option("file", opt.path, "an egraph-serialize JSON file")->required();
  cmd->add_option("--extractor", opt.extractor, "tree, dag (default) or ilp");
  cmd->add_option("--time-limit", opt.time_limit, "seconds for ilp (default 60)")->check(in_range(0, 86400, true));
  cmd->add_flag("--json", opt.json, "print one JSON object");
  cmd->callback([] { run(opt); });
}

}  // namespace sator::cli
