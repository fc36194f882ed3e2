#include "cli/run_report.h"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "memory/peak_memory.h"
#include "cost/roofline.h"
#include "ir/graph_io.h"

namespace sator::cli {

namespace {
size_t fused(const pipeline::OptimizeResult& r) { return r.sdpa_out > r.sdpa_in ? r.sdpa_out - r.sdpa_in : 0; }

std::string greedy_stop(const pipeline::GreedyResult& g) {
  if (g.result.stop == eg::StopReason::None) return "one round";
  return g.round_limit_hit ? "round limit" : "fixpoint";
}
}  // namespace

void check_model_options(const std::string& path, const std::string& cost, const std::string& device,
                         const std::string& extractor) {
  if (cost != "nodes" && cost != "roofline") throw GraphError(path, "", "unknown --cost " + cost + " (nodes or roofline)");
  if (!cost::find_device(device)) throw GraphError(path, "", "unknown --device " + device + " (known: h200)");
  if (!extractor.empty() && extractor != "tree" && extractor != "dag" && extractor != "ilp")
    throw GraphError(path, "", "unknown --extractor " + extractor + " (tree, dag or ilp)");
}

static double peak_of(const Graph& g, std::optional<double>& cached) {
  if (!cached) cached = memory::estimate_peak_memory(g).peak_bytes;
  return *cached;
}

// The output's peak: the input's where the output is the input kept.
static double peak_out(const Graph& input, const pipeline::OptimizeResult& r, const RunContext& c) {
  return r.output_is_input ? peak_of(input, c.peak_in) : peak_of(r.output, c.peak_out);
}

// The rules that matched, most applications first.
static std::vector<const std::pair<std::string, eg::RuleRun>*> fired_rules(const pipeline::OptimizeResult& r) {
  std::vector<const std::pair<std::string, eg::RuleRun>*> out;
  for (const auto& run : r.rule_runs)
    if (run.second.matches > 0) out.push_back(&run);
  std::stable_sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    return a->second.applied != b->second.applied ? a->second.applied > b->second.applied
                                                  : a->second.matches > b->second.matches;
  });
  return out;
}

nlohmann::ordered_json run_report(const Graph& input, const pipeline::OptimizeResult& r, const RunContext& c) {
  nlohmann::ordered_json j;
  j["graph"] = input.name;
  j["method"] = c.method;
  j["nodes_in"] = r.nodes_in;
  j["nodes_out"] = r.nodes_out;
  j["layout_ops_in"] = r.layout_ops_in;
  j["layout_ops_out"] = r.layout_ops_out;
  j["attention_fused"] = fused(r);
  if (!c.greedy) j["attention_changed"] = r.attention_changed;
  if (c.greedy) {
    j["rounds"] = c.greedy->rounds;
    j["stop_reason"] = greedy_stop(*c.greedy);
    j["rewrites"] = c.greedy->rewrites;
    j["rewrites_by_rule"] = c.greedy->rewrites_by_rule;
  } else {
    j["extractor"] = c.extractor;
    j["extract_dag_cost"] = r.extract_dag_cost;
    if (c.extractor == "ilp") j["extract_proved_optimal"] = r.extract_proved_optimal;
  }
  j["cost_model"] = c.cost == "roofline" ? "roofline (estimated compiled us on " + c.device + ")" : "nodes";
  j["cost_in"] = r.cost_in;
  j["cost_out"] = r.cost_out;
  // Estimated in node order (memory/peak_memory.h), at the symbols' hints.
  j["peak_bytes_in"] = peak_of(input, c.peak_in);
  j["peak_bytes_out"] = peak_out(input, r, c);
  if (!c.greedy && !r.schedule.empty()) {
    nlohmann::ordered_json tried = nlohmann::ordered_json::object();
    for (const auto& [name, peak] : r.schedules_tried) tried[name] = peak;
    nlohmann::ordered_json given_up = nlohmann::ordered_json::object();
    for (const auto& [name, peak] : r.schedules_given_up) given_up[name] = peak;
    j["schedule"] = {{"order", r.schedule}, {"peak_bytes_by_order", tried}, {"given_up_above_bytes", given_up}};
  }
  if (!c.greedy)
    j["egraph"] = {{"nodes", r.egraph_nodes},
                   {"classes", r.egraph_classes},
                   {"iterations", r.iterations},
                   {"stop_reason", eg::stop_reason_name(r.stop)}};
  if (!c.greedy && c.time_limit_s > 0)
    j["time_limit"] = {{"seconds", c.time_limit_s}, {"reached_in", r.limited}};
  if (!c.greedy) j["declined"] = r.declined;
  if (!c.greedy && !r.biased_kernels.empty()) {
    // Training blocks given a bias through the efficient kernels, weighed by
    // the graph as Inductor fuses it (pipeline/biased_kernels.h).
    nlohmann::ordered_json weighed = nlohmann::ordered_json::array();
    for (const pipeline::BiasedKernelTrial& w : r.biased_kernels)
      weighed.push_back({{"kernel", w.kernel},
                         {"fused_estimate_us_with_kernels", w.with_kernels_us},
                         {"fused_estimate_us_without", w.without_us},
                         {"kept", w.kept_kernels ? "kernels" : "decomposed"}});
    j["biased_kernels_weighed"] = std::move(weighed);
  }
  j["z3"] = {{"queries", r.z3_queries}, {"cache_hits", r.z3_cache_hits}, {"solver_calls", r.z3_calls}};
  if (c.greedy)
    j["time_ms"] = {{"load", c.load_ms}, {"rewrite", r.saturate_ms}, {"write", c.write_ms}, {"total", c.total_ms}};
  else
    j["time_ms"] = {{"load", c.load_ms}, {"saturate", r.saturate_ms}, {"extract", r.extract_ms},
                    {"chunk", c.chunk_ms},      {"write", c.write_ms},       {"total", c.total_ms}};
  if (!c.greedy)
    j["extract_parts"] = {{"search_ms", r.extract_parts.search_ms}, {"write_ms", r.extract_parts.write_ms},
                          {"order_ms", r.extract_parts.order_ms},   {"extractions", r.extract_parts.extractions},
                          {"forms", r.extract_parts.forms}};
  if (c.verify) {
    const interp::VerifyResult& v = *c.verify;
    nlohmann::ordered_json o = {{"status", interp::verify_status_name(v.status)},
                                {"max_rel_error", v.max_error},
                                {"dtype_error_in", v.dtype_error_in < 0 ? nlohmann::ordered_json(nullptr)
                                                                       : nlohmann::ordered_json(v.dtype_error_in)},
                                {"dtype_error_out", v.dtype_error_out < 0 ? nlohmann::ordered_json(nullptr)
                                                                         : nlohmann::ordered_json(v.dtype_error_out)},
                                {"symbols", v.symbols},
                                {"elements", v.elements},
                                {"by_regions", v.by_regions},
                                {"regions", v.regions},
                                {"regions_compared", v.regions_compared},
                                {"random_ops", v.random_ops ? "drawn from identical streams (by node name)" : "none"},
                                {"seconds", v.seconds}};
    if (!v.detail.empty()) o["detail"] = v.detail;
    j["verify"] = std::move(o);
  } else {
    j["verify"] = nullptr;
  }
  if (!c.greedy) {
    nlohmann::ordered_json iters = nlohmann::ordered_json::array();
    for (const eg::Iteration& it : r.per_iteration)
      iters.push_back({{"nodes", it.nodes}, {"classes", it.classes}, {"matches", it.matches}, {"applied", it.applied},
                       {"search_ms", it.search_s * 1e3}, {"apply_ms", it.apply_s * 1e3}, {"rebuild_ms", it.rebuild_s * 1e3}});
    j["iterations"] = std::move(iters);
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (const auto* run : fired_rules(r))
      rules.push_back({{"rule", run->first}, {"matches", run->second.matches}, {"applied", run->second.applied},
                       {"search_ms", run->second.search_s * 1e3}, {"apply_ms", run->second.apply_s * 1e3}});
    j["rules"] = std::move(rules);
  }
  return j;
}

void print_run(const Graph& input, const pipeline::OptimizeResult& r, const RunContext& c) {
  std::printf("%s: %zu nodes -> %zu, layout ops %zu -> %zu, attention fused %zu\n", input.name.c_str(), r.nodes_in,
              r.nodes_out, r.layout_ops_in, r.layout_ops_out, fused(r));
  const std::string how = c.greedy ? "rewritten greedily" : "extracted with " + c.extractor;
  if (c.cost == "roofline")
    std::printf("cost (roofline, %s): %.1f us -> %.1f us estimated; %s\n", c.device.c_str(), r.cost_in, r.cost_out,
                how.c_str());
  else
    std::printf("cost (nodes): %.0f -> %.0f; %s\n", r.cost_in, r.cost_out, how.c_str());
  if (c.greedy) {
    std::printf("greedy: %zu rewrites in %zu round%s (%s); z3: %llu questions, %llu solver calls\n", c.greedy->rewrites,
                c.greedy->rounds, c.greedy->rounds == 1 ? "" : "s", greedy_stop(*c.greedy).c_str(),
                static_cast<unsigned long long>(r.z3_queries), static_cast<unsigned long long>(r.z3_calls));
    std::printf("time: load %.1f ms, rewrite %.1f ms, write %.1f ms, total %.1f ms\n", c.load_ms, r.saturate_ms,
                c.write_ms, c.total_ms);
  } else {
    std::printf("e-graph: %zu nodes, %zu classes, %zu iterations, %s; z3: %llu questions, %llu solver calls\n",
                r.egraph_nodes, r.egraph_classes, r.iterations, eg::stop_reason_name(r.stop),
                static_cast<unsigned long long>(r.z3_queries), static_cast<unsigned long long>(r.z3_calls));
    std::printf("time: load %.1f ms, saturate %.1f ms, extract %.1f ms, write %.1f ms, total %.1f ms\n", c.load_ms,
                r.saturate_ms, r.extract_ms, c.write_ms, c.total_ms);
    // The rules that matched, most applications first (the report's
    // "rules" has each one's matches, applications and time).
    const auto fired = fired_rules(r);
    if (!fired.empty()) {
      std::string top;
      for (size_t k = 0; k < fired.size() && k < 6; ++k)
        top += (k ? ", " : "") + fired[k]->first + " " + std::to_string(fired[k]->second.applied) + "/" +
               std::to_string(fired[k]->second.matches);
      std::printf("rules: %zu of %zu matched (applied/matches): %s%s\n", fired.size(), r.rule_runs.size(), top.c_str(),
                  fired.size() > 6 ? ", ..." : "");
    }
    if (!r.limited.empty()) {
      std::string phases;
      for (const std::string& p : r.limited) phases += (phases.empty() ? "" : ", ") + p;
      std::printf("time limit (%g s) reached in: %s; each phase kept its best result so far\n", c.time_limit_s,
                  phases.c_str());
    }
    if (!r.schedule.empty()) {
      std::string tried;
      const auto mib = [](double bytes) { return std::to_string(static_cast<long long>(bytes / (1024.0 * 1024.0) + 0.5)); };
      for (const auto& [name, peak] : r.schedules_tried) tried += (tried.empty() ? "" : ", ") + name + " " + mib(peak) + " MiB";
      // Given up: its peak so far had passed the writer's own order's.
      for (const auto& [name, peak] : r.schedules_given_up)
        tried += (tried.empty() ? "" : ", ") + name + " over " + mib(peak) + " MiB";
      std::printf("memory: estimated peak %.1f MiB -> %.1f MiB, written in the order \"%s\" (%s)\n",
                  peak_of(input, c.peak_in) / (1024.0 * 1024.0), peak_out(input, r, c) / (1024.0 * 1024.0),
                  r.schedule.c_str(), tried.c_str());
    }
    for (const std::string& why : r.declined) std::printf("declined: %s\n", why.c_str());
    for (const pipeline::BiasedKernelTrial& w : r.biased_kernels)
      std::printf("attention with a bias (training, efficient kernels at %s): %s; the graph as Inductor fuses it "
                  "%.1f us with them, %.1f us without\n",
                  w.kernel.c_str(), w.kept_kernels ? "kept" : "left decomposed", w.with_kernels_us, w.without_us);
  }
}

interp::VerifyOptions verify_options() {
  interp::VerifyOptions o;
  const bool tty = isatty(fileno(stderr)) != 0;
  o.on_region = [tty](size_t k, size_t n, const std::string& node) {
    std::fprintf(stderr, "%sverify: region %zu of %zu (%s)%s", tty ? "\r\033[K" : "", k, n, node.c_str(),
                 tty && k < n ? "" : "\n");
    std::fflush(stderr);
  };
  return o;
}

void print_verify(const interp::VerifyResult& v) {
  // A comparison that stopped before its last region leaves its progress
  // line unfinished on a terminal: cleared before the status line.
  if (v.by_regions && isatty(fileno(stderr))) std::fprintf(stderr, "\r\033[K");
  std::string symbols;
  for (const auto& [name, value] : v.symbols) symbols += (symbols.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  if (v.status == interp::VerifyResult::Status::Skipped) {
    std::printf("verify: SKIPPED, not verified (exit status %d): %s\n", kExitNotVerified, v.detail.c_str());
    return;
  }
  char at_dtypes[96] = "";
  if (v.dtype_error_out >= 0)
    std::snprintf(at_dtypes, sizeof at_dtypes, ", at the dtypes %.2e against the input's %.2e", v.dtype_error_out,
                  v.dtype_error_in);
  const std::string regions =
      !v.by_regions ? std::string()
      : v.regions   ? "; region by region: " + std::to_string(v.regions_compared) + " changed regions"
                    : "; region by region: no region changed";
  std::printf("verify: %s, max relative error %.2e (float64 reference%s%s%s%s)%s, %.1f s\n",
              interp::verify_status_name(v.status), v.max_error, symbols.empty() ? "" : " at ", symbols.c_str(),
              v.random_ops ? "; random ops on identical streams" : "", regions.c_str(), at_dtypes, v.seconds);
}

void fail_if_unverified(const std::string& path, const interp::VerifyResult& v) {
  if (v.status != interp::VerifyResult::Status::Failed) return;
  std::fprintf(stderr, "sator: verify failed for %s: %s (no output written)\n", path.c_str(), v.detail.c_str());
  throw CLI::RuntimeError(1);
}

void exit_if_not_verified(const interp::VerifyResult& v) {
  if (v.status == interp::VerifyResult::Status::Skipped) throw CLI::RuntimeError(kExitNotVerified);
}

}  // namespace sator::cli
