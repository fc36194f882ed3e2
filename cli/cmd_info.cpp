// `sator info GRAPH.json [--json]`: validates a graph and summarises it.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "memory/peak_memory.h"
#include "memory/saved_memory.h"
#include "schedule/saved_copies.h"
#include "cli/kept_until_exit.h"
#include "cli/commands.h"
#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/op_table.h"
#include "ir/shape_check.h"

namespace sator::cli {

namespace {

struct InfoOptions {
  std::string path;
  bool json = false;
};

std::string range_text(const Symbol& s) {
  return "[" + (s.min ? std::to_string(*s.min) : std::string("-inf")) + ", " +
         (s.max ? std::to_string(*s.max) : std::string("inf")) + "]";
}

void run_info(const InfoOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  Graph& g = keep_until_exit(read_graph_file(opt.path));
  const auto read_done = std::chrono::steady_clock::now();
  ShapeProver prover(g.symbols);
  ShapeCheckReport check = check_shapes(g, prover);
  const auto check_done = std::chrono::steady_clock::now();
  require_consistent_shapes(g, check, opt.path);
  const GraphStats stats = compute_stats(g);
  const memory::PeakMemory peak = memory::estimate_peak_memory(g);
  const memory::SavedMemory saved = memory::saved_memory(g);
  const double read_ms = std::chrono::duration<double, std::milli>(read_done - start).count();
  const double check_ms = std::chrono::duration<double, std::milli>(check_done - read_done).count();

  std::map<std::string, size_t> roles;
  for (NodeId id : stats.inputs) ++roles[std::string(role_name(g.nodes[id].role))];
  std::vector<std::string> outputs;
  for (const Value& v : stats.outputs) outputs.push_back(v.is_node() ? g.nodes[v.node].name : "None");
  std::vector<std::pair<std::string, size_t>> hist(stats.op_histogram.begin(), stats.op_histogram.end());
  std::stable_sort(hist.begin(), hist.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  if (opt.json) {
    nlohmann::ordered_json j;
    j["graph"] = g.name;
    j["file"] = opt.path;
    j["nodes"] = stats.nodes;
    j["layout_ops"] = stats.layout_ops;
    j["sdpa_ops"] = stats.sdpa_ops;
    j["symbols"] = nlohmann::ordered_json::array();
    for (const Symbol& s : g.symbols)
      j["symbols"].push_back({{"name", s.name}, {"hint", s.hint}, {"min", s.min ? nlohmann::ordered_json(*s.min) : nullptr},
                              {"max", s.max ? nlohmann::ordered_json(*s.max) : nullptr}});
    j["inputs"] = nlohmann::ordered_json::object();
    for (NodeId id : stats.inputs) j["inputs"][std::string(role_name(g.nodes[id].role))].push_back(g.nodes[id].name);
    j["outputs"] = outputs;
    j["op_histogram"] = nlohmann::ordered_json::object();
    for (const auto& [op, n] : hist) j["op_histogram"][op] = n;
    j["opaque_ops"] = check.opaque_ops;
    j["peak_memory"] = {{"peak_bytes", peak.peak_bytes}, {"at", g.nodes[peak.peak_node].name},
                        {"input_bytes", peak.input_bytes}, {"output_bytes", peak.output_bytes}};
    // What is live at the peak (largest first): where to look to lower it.
    nlohmann::json live = nlohmann::json::array();
    for (const memory::LiveTensor& l : peak.at_peak)
      live.push_back({{"node", g.nodes[l.node].name}, {"op", g.nodes[l.node].op}, {"bytes", l.bytes}});
    j["peak_memory"]["live"] = std::move(live);
    j["saved_for_backward"] = {{"bytes", saved.bytes}, {"pinned_by_views", saved.pinned_by_views}};
    j["shape_check"] = {{"inferred", check.checked}, {"opaque", check.opaque}, {"mismatches", check.issues.size()}};
    j["z3"] = {{"queries", prover.stats().queries}, {"canonical", prover.stats().canonical},
               {"z3_calls", prover.stats().z3_calls}, {"cache_hits", prover.stats().cache_hits}};
    j["time_ms"] = {{"read", read_ms}, {"shape_check", check_ms}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "graph       " << g.name << "  (" << opt.path << ")\n";
  std::cout << "nodes       " << stats.nodes << "\n";
  std::cout << "layout ops  " << stats.layout_ops << "\n";
  std::cout << "sdpa ops    " << stats.sdpa_ops << "\n";
  std::cout << "symbols     ";
  if (g.symbols.empty()) std::cout << "none (static shapes)";
  for (const Symbol& s : g.symbols) std::cout << s.name << " (hint " << s.hint << ", range " << range_text(s) << ")  ";
  std::cout << "\ninputs      " << stats.inputs.size();
  for (const auto& [role, n] : roles) std::cout << "  " << role << ": " << n;
  std::cout << "\noutputs     " << outputs.size() << ":";
  for (size_t i = 0; i < outputs.size() && i < 8; ++i) std::cout << " " << outputs[i];
  if (outputs.size() > 8) std::cout << " ... (" << outputs.size() - 8 << " more)";
  std::cout << "\nopaque ops  ";
  if (check.opaque_ops.empty()) std::cout << "none";
  for (const auto& op : check.opaque_ops) std::cout << op << " ";
  std::cout << "\nshapes      " << check.checked << " nodes inferred and checked, 0 mismatches ("
            << prover.stats().queries << " size questions, " << prover.stats().z3_calls << " Z3 checks)\n";
  std::cout << "peak memory " << std::fixed << std::setprecision(1) << peak.peak_bytes / (1024.0 * 1024.0)
            << " MiB estimated at " << g.nodes[peak.peak_node].name << " (inputs " << peak.input_bytes / (1024.0 * 1024.0)
            << " MiB, outputs " << peak.output_bytes / (1024.0 * 1024.0) << " MiB; at the hints, in node order)\n";
  if (saved.bytes > 0)
    std::cout << "saved       " << saved.bytes / (1024.0 * 1024.0)
              << " MiB of forward storages the backward reads, " << saved.pinned_by_views / (1024.0 * 1024.0)
              << " MiB of them kept only for smaller views of them\n";
  std::cout << "load        " << std::fixed << std::setprecision(2) << read_ms << " ms read, " << check_ms
            << " ms shape check\n";
  std::cout << "op histogram\n";
  for (const auto& [op, n] : hist) {
    const OpInfo* info = find_op(op);
    std::cout << "  " << std::setw(6) << n << "  " << op;
    if (info) std::cout << "  [" << op_class_name(info->cls) << "]";
    std::cout << "\n";
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  static InfoOptions opt;
  CLI::App* cmd = app.add_subcommand("info", "validate a graph and print its summary");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_flag("--json", opt.json, "print the summary as JSON");
  cmd->callback([] { run_info(opt); });
}

}  // namespace sator::cli
