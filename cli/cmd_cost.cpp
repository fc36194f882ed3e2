// `sator cost GRAPH.json [--device h200] [--csv OUT.csv]`: the roofline
// model's estimate for every node of a graph and in total (what the
// calibration compares with GPU timings; docs/cost-model.md).
#include <cstdio>
#include <fstream>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/kept_until_exit.h"
#include "cli/commands.h"
#include "cli/validators.h"
#include "cli/output_paths.h"
#include "cost/fused_estimate.h"
#include "cost/graph_cost.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"

namespace sator::cli {

namespace {

struct Options {
  std::string path, device = "h200", csv;
};

void run(const Options& o) {
  const cost::Device* d = cost::find_device(o.device);
  if (!d) throw CLI::ValidationError("--device", "unknown device '" + o.device + "' (known: h200, h100)");
  require_distinct_outputs(o.path, {{"--csv", o.csv}});
  const Graph& g = keep_until_exit(load_graph(o.path));
  const auto costs = cost::graph_costs(g, *d);
  std::map<std::string, std::pair<size_t, double>> by_kind;
  for (const auto& c : costs)
    if (c.cost.kind != cost::CostKind::Free) {
      auto& k = by_kind[cost::cost_kind_name(c.cost.kind)];
      ++k.first;
      k.second += c.cost.seconds;
    }
  std::printf("%s on %s: %.1f us compiled, %.1f us eager (roofline estimates)\n", g.name.c_str(), d->name.c_str(),
              cost::total_seconds(costs) * 1e6, cost::total_eager_seconds(costs, *d) * 1e6);
  for (const auto& [kind, v] : by_kind) std::printf("  %-12s %5zu kernels %10.1f us\n", kind.c_str(), v.first, v.second * 1e6);
  const cost::FusedEstimate fused = cost::fused_estimate(g, *d, costs);
  std::printf("  as Inductor fuses it: %.1f us compiled (%zu fused kernels of memory-bound ops, %.1f MB moved; "
              "%.1f us of matmuls, attention, convolutions)\n",
              fused.seconds * 1e6, fused.groups, fused.group_bytes / 1e6, fused.extern_seconds * 1e6);
  if (!o.csv.empty()) {
    std::string text = "node,op,kind,dtype,flops,bytes,gpu_seconds,seconds,host_seconds,eager_seconds\n";
    for (const auto& c : costs) {
      const Node& n = g.nodes[c.node];
      char line[512];
      std::snprintf(line, sizeof line, "%s,%s,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", n.name.c_str(), n.op.c_str(),
                    cost::cost_kind_name(c.cost.kind), std::string(dtype_name(c.cost.dtype)).c_str(), c.cost.flops, c.cost.bytes, c.cost.gpu_seconds,
                    c.cost.seconds, c.cost.host_seconds, c.cost.eager_seconds);
      text += line;
    }
    write_file_atomic(o.csv, text);
  }
}

}  // namespace

void add_cost_command(CLI::App& app) {
  static Options opt;
  CLI::App* cmd = app.add_subcommand("cost", "estimate a graph's time per node with the roofline model");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_option("--device", opt.device, "device: h200 (default) or h100");
  cmd->add_option("--csv", opt.csv, "write per-node estimates here")->check(output_path());
  cmd->callback([] { run(opt); });
}

}  // namespace sator::cli
