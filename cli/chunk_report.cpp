#include "cli/chunk_report.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ir/graph_io.h"

namespace sator::cli {

namespace {

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

}  // namespace

double parse_bytes(const std::string& path, const std::string& flag, const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "B" ? 1.0
                       : unit == "KiB"             ? 1024.0
                       : unit == "MiB"             ? 1024.0 * 1024
                       : unit == "GiB"             ? 1024.0 * 1024 * 1024
                       : unit == "KB"              ? 1e3
                       : unit == "MB"              ? 1e6
                       : unit == "GB"              ? 1e9
                                                   : -1.0;
  if (used == 0 || scale < 0 || !(value > 0) || !std::isfinite(value))
    throw GraphError(path, "", flag + " " + text + " is not a positive size (bytes, or with KiB/MiB/GiB/KB/MB/GB)");
  // A pebibyte: more than any machine holds, and far inside double's exact integers.
  constexpr double kMaxBytes = 1125899906842624.0;
  if (value * scale > kMaxBytes) throw GraphError(path, "", flag + " " + text + " is beyond 1 PiB (the range is 1 B to 1 PiB)");
  return value * scale;
}

chunk::ChunkOptions read_chunk_options(const std::string& path, const std::string& chunks, const std::string& budget,
                                       const std::string& device) {
  chunk::ChunkOptions o;
  o.device = cost::find_device(device);
  if (!o.device) throw GraphError(path, "", "unknown --device " + device + " (known: h200, h100)");
  if (chunks != "auto") {
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(chunks, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != chunks.size() || n < 1 || n > 1'000'000)
      throw GraphError(path, "", "--chunks " + chunks + " must be auto or a count from 1 to 1000000");
    o.chunks = n;
  }
  if (!budget.empty()) {
    if (o.chunks) throw GraphError(path, "", "give --chunks N or --memory-budget, not both");
    o.memory_budget = parse_bytes(path, "--memory-budget", budget);
  }
  return o;
}

void apply_hints(const std::string& path, Graph& g, const std::vector<std::string>& hints) {
  for (const std::string& h : hints) {
    const size_t eq = h.find('=');
    const std::string name = h.substr(0, eq);
    Symbol* s = nullptr;
    for (Symbol& x : g.symbols)
      if (x.name == name) s = &x;
    if (eq == std::string::npos || !s)
      throw GraphError(path, "", "--hint " + h + " must be SYMBOL=VALUE for a symbol of the graph" +
                                     (g.symbols.empty() ? " (it has none)" : ""));
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(h.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != h.size() - eq - 1 || (s->min && v < *s->min) || (s->max && v > *s->max))
      throw GraphError(path, "", "--hint " + h + ": the value must be an integer within " + name + "'s range");
    s->hint = v;
  }
}

nlohmann::ordered_json chunk_plan_json(const chunk::ChunkPlan& p) {
  nlohmann::ordered_json j;
  j["chunked"] = p.chunked;
  if (!p.chunked) j["why_not"] = p.why_not;
  j["time_limited"] = p.time_limited;
  j["amplifier"] = p.amplifier;
  j["amplifier_op"] = p.amplifier_op;
  j["amplification"] = p.amplification;
  j["dim"] = p.dim;
  j["rows"] = p.rows;
  j["chunks"] = p.chunks;
  j["remainder_chunk"] = p.remainder_chunk;
  j["region"] = {{"nodes", p.region_nodes}, {"inputs", p.inputs}, {"outputs", p.outputs}};
  j["tangent"] = p.tangent.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.tangent);
  j["tangent_scaled_results"] = p.tangent_scaled;
  if (!p.tangent_why_not.empty()) j["tangent_kept_because"] = p.tangent_why_not;
  j["peak_bytes_before"] = p.peak_before;
  j["peak_bytes_after"] = p.peak_after;
  j["peak_node_before"] = p.peak_node_before;
  j["peak_node_after"] = p.peak_node_after;
  j["eager_us_before"] = p.seconds_before * 1e6;
  j["eager_us_after"] = p.seconds_after * 1e6;
  nlohmann::ordered_json trials = nlohmann::ordered_json::array();
  for (const auto& t : p.trials) trials.push_back({{"chunks", t.chunks}, {"peak_bytes", t.peak_bytes}, {"eager_us", t.seconds * 1e6}});
  j["trials"] = std::move(trials);
  return j;
}

void print_chunk_plan(const chunk::ChunkPlan& p) {
  if (!p.chunked) {
    std::printf("chunk: not chunked: %s\n", p.why_not.c_str());
    return;
  }
  std::printf("chunk: amplifier %s (%s, %.1fx its inputs), dim %lld, %lld chunks over %s rows%s; region %zu nodes, "
              "%zu inputs, %zu outputs\n",
              p.amplifier.c_str(), p.amplifier_op.c_str(), p.amplification, static_cast<long long>(p.dim),
              static_cast<long long>(p.chunks), p.rows.c_str(), p.remainder_chunk ? " (a remainder chunk)" : "",
              p.region_nodes, p.inputs, p.outputs);
  if (!p.tangent.empty())
    std::printf("chunk: tangent %s taken out of the chunked node (run with 1, %zu results scaled after it)\n", p.tangent.c_str(),
                p.tangent_scaled);
  else if (!p.tangent_why_not.empty())
    std::printf("chunk: a tangent stays in the chunked node: %s\n", p.tangent_why_not.c_str());
  std::printf("chunk: estimated peak %.0f MiB (at %s) -> %.0f MiB (at %s), -%.0f MiB; eager time %.1f us -> %.1f us (%+.2f%%)\n",
              mib(p.peak_before), p.peak_node_before.c_str(), mib(p.peak_after), p.peak_node_after.c_str(),
              mib(p.peak_before - p.peak_after), p.seconds_before * 1e6,
              p.seconds_after * 1e6, 100.0 * (p.seconds_after / p.seconds_before - 1.0));
  std::string tried;
  for (const auto& t : p.trials) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%lld: %.0f MiB %+.2f%%", tried.empty() ? "" : ", ", static_cast<long long>(t.chunks),
                  mib(t.peak_bytes), 100.0 * (t.seconds / p.seconds_before - 1.0));
    tried += buf;
  }
  if (!tried.empty()) std::printf("chunk: tried %s\n", tried.c_str());
}

}  // namespace sator::cli
