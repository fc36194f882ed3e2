// The summaries of a batch: summary.csv / .json / .md (deterministic: the
// same graphs give the same files, however they were sharded or resumed) and
// timings.csv (the methods' times, which vary from run to run).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/batch.h"
#include "ir/graph_io.h"

namespace sator::cli {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

const char* const kMethods[] = {"input", "greedy", "sator", "inductor"};
const char* const kFields[] = {"layout_ops", "attention_fused", "cost", "peak_bytes"};

// A number of a method's result, or nullptr when absent.
ordered_json field(const ordered_json& r, const char* method, const char* key) {
  if (!r.contains(method) || r[method].is_null() || !r[method].contains(key)) return nullptr;
  return r[method][key];
}

std::string num(const ordered_json& v, int decimals) {
  if (v.is_null()) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v.get<double>());
  return buf;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

int decimals_of(const char* key) { return std::string(key) == "cost" ? 3 : 0; }

// -1, 0, 1: sator better, equal, worse than greedy (lower is better), or 2 if unknown.
// Why sator's result reads worse than greedy's where it kept the input's
// form on purpose (the peak guard, a time limit): " (kept the input: ...)".
std::string kept_why(const ordered_json& r, bool worse) {
  if (!worse || !r.contains("sator") || !r["sator"].is_object()) return "";
  for (const ordered_json& d : r["sator"].value("declined", ordered_json::array()))
    if (d.is_string() && d.get<std::string>().find("the input is kept") != std::string::npos) {
      std::string why = d.get<std::string>();
      const size_t colon = why.find(':');
      return " (input kept: " + why.substr(0, colon) + ")";
    }
  return "";
}

constexpr const char* kChartLinks =
    "Made by `scripts/plot` from this folder:\n\n"
    "![layout ops](charts/layout_ops.svg)\n\n![estimated cost](charts/cost.svg)\n\n"
    "![optimize time](charts/time.svg)\n";

int verdict(const ordered_json& r, const char* key) {
  const ordered_json g = field(r, "greedy", key), s = field(r, "sator", key);
  if (g.is_null() || s.is_null()) return 2;
  const double a = s.get<double>(), b = g.get<double>();
  const double tol = 1e-9 * std::max(1.0, std::abs(b));
  return a < b - tol ? -1 : a > b + tol ? 1 : 0;
}

}  // namespace

size_t write_summaries(const std::string& out, std::vector<ordered_json> results, const std::vector<std::string>& not_run) {
  std::sort(results.begin(), results.end(),
            [](const ordered_json& a, const ordered_json& b) { return a["graph"].get<std::string>() < b["graph"].get<std::string>(); });
  std::string csv = "graph,status";
  for (const char* m : kMethods)
    for (const char* f : kFields)
      if (!(std::string(m) == "input" && std::string(f) == "attention_fused")) csv += std::string(",") + m + "_" + f;
  csv += ",error\n";
  std::string timings = "graph,greedy_ms,sator_ms\n";
  ordered_json rows = ordered_json::array(), failed = ordered_json::array();
  ordered_json totals = ordered_json::object();
  size_t ok = 0, inductor_graphs = 0, inductor_costed = 0;
  int counts[2][3] = {{0, 0, 0}, {0, 0, 0}};  // [layout, cost][better, equal, worse]
  std::string md_rows;
  for (const ordered_json& r : results) {
    const std::string name = r["graph"].get<std::string>(), status = r.value("status", "failed");
    csv += csv_escape(name) + "," + status;
    ordered_json row = {{"graph", name}, {"status", status}};
    for (const char* m : kMethods)
      for (const char* f : kFields) {
        if (std::string(m) == "input" && std::string(f) == "attention_fused") continue;
        const ordered_json v = field(r, m, f);
        csv.append(",").append(num(v, decimals_of(f)));  // (append: GCC 12 warns falsely on "," + string)
        row[std::string(m) + "_" + f] = v;
      }
    const std::string error = r.value("error", "");
    csv.append(",").append(csv_escape(error)).append("\n");
    if (status != "ok") {
      row["error"] = error;
      failed.push_back({{"graph", name}, {"error", error}});
      rows.push_back(std::move(row));
      md_rows += "| " + name + " | failed: " + error + " |||||||||\n";
      continue;
    }
    ++ok;
    const bool has_inductor = !r["inductor"].is_null();
    inductor_graphs += has_inductor;
    inductor_costed += has_inductor && !field(r, "inductor", "cost").is_null();
    for (const char* m : kMethods)
      for (const char* f : kFields) {
        const ordered_json v = field(r, m, f);
        if (!v.is_null()) totals[std::string(m) + "_" + f] = totals.value(std::string(m) + "_" + f, 0.0) + v.get<double>();
      }
    const int lv = verdict(r, "layout_ops"), cv = verdict(r, "cost");
    if (lv != 2) ++counts[0][lv + 1];
    if (cv != 2) ++counts[1][cv + 1];
    timings += name + "," + num(field(r, "greedy", "time_ms"), 3) + "," + num(field(r, "sator", "time_ms"), 3) + "\n";
    rows.push_back(std::move(row));
    auto cell = [&](const char* m, const char* f, int d) {
      const ordered_json v = field(r, m, f);
      return v.is_null() ? std::string("–") : num(v, d);
    };
    md_rows += "| " + name + " | " + cell("input", "layout_ops", 0) + " | " + cell("greedy", "layout_ops", 0) + " | **" +
               cell("sator", "layout_ops", 0) + "** | " + cell("inductor", "layout_ops", 0) + " | " +
               cell("greedy", "attention_fused", 0) + " / **" + cell("sator", "attention_fused", 0) + "** / " +
               cell("inductor", "attention_fused", 0) + " | " + cell("input", "cost", 1) + " | " + cell("greedy", "cost", 1) +
               " | **" + cell("sator", "cost", 1) + "** | " + cell("inductor", "cost", 1) + " | " +
               (lv == -1 ? "fewer layout ops" : lv == 1 ? "MORE layout ops" : "same layout ops") + ", " +
               (cv == -1 ? "cheaper" : cv == 1 ? "COSTLIER" : "same cost") + kept_why(r, lv == 1 || cv == 1) + " |\n";
  }
  // Graphs with no result (their shard never finished): a row each, after
  // the results, so a user reading any one file sees what is missing.
  std::vector<std::string> missing(not_run);
  std::sort(missing.begin(), missing.end());
  const std::string not_run_error = "not run: no result (its shard did not finish)";
  for (const std::string& name : missing) {
    csv += csv_escape(name) + ",not_run";
    for (const char* m : kMethods)
      for (const char* f : kFields)
        if (!(std::string(m) == "input" && std::string(f) == "attention_fused")) csv += ",";
    csv.append(",").append(csv_escape(not_run_error)).append("\n");
    rows.push_back({{"graph", name}, {"status", "not_run"}, {"error", not_run_error}});
    md_rows += "| " + name + " | not run (its shard did not finish) |||||||||\n";
  }
  const char* names[] = {"better", "equal", "worse"};
  ordered_json versus;
  for (int k = 0; k < 2; ++k)
    for (int v = 0; v < 3; ++v) versus[k == 0 ? "layout_ops" : "cost"][names[v]] = counts[k][v];
  ordered_json summary = {{"graphs", results.size() + missing.size()},
                          {"ok", ok},
                          {"failed_count", results.size() - ok},
                          {"with_inductor", inductor_graphs},
                          {"sator_vs_greedy", versus},
                          {"totals", totals},
                          {"failed", failed},
                          {"rows", rows}};
  if (!missing.empty()) {  // only then, so a complete merge equals an unsharded run byte for byte
    summary["not_run_count"] = missing.size();
    summary["not_run"] = missing;
  }
  const fs::path dir(out);
  write_file_atomic((dir / "summary.json").string(), summary.dump(2) + "\n");
  write_file_atomic((dir / "summary.csv").string(), csv);
  write_file_atomic((dir / "timings.csv").string(), timings);

  std::string md = "# Batch summary\n\n";
  md += std::to_string(results.size() + missing.size()) + " graphs: " + std::to_string(ok) + " ok, " +
        std::to_string(results.size() - ok) + " failed" +
        (missing.empty() ? std::string() : ", " + std::to_string(missing.size()) + " NOT RUN (their shard did not finish)") +
        ". Equality saturation (sator) against greedy rewriting with the same rules: layout ops fewer on " +
        std::to_string(counts[0][0]) + ", equal on " + std::to_string(counts[0][1]) + ", more on " +
        std::to_string(counts[0][2]) + "; estimated cost lower on " + std::to_string(counts[1][0]) + ", equal on " +
        std::to_string(counts[1][1]) + ", higher on " + std::to_string(counts[1][2]) + ".\n\n";
  md += "| graph | layout ops in | greedy | sator | Inductor | attention fused (greedy / sator / Inductor) | est. cost in | "
        "greedy | sator | Inductor | sator vs greedy |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  md += md_rows;
  auto total = [&](const char* m, const char* f, int d) {
    const std::string key = std::string(m) + "_" + f;
    return totals.contains(key) ? num(totals[key], d) : std::string("–");
  };
  md += "| **total** | " + total("input", "layout_ops", 0) + " | " + total("greedy", "layout_ops", 0) + " | **" +
        total("sator", "layout_ops", 0) + "** | " + total("inductor", "layout_ops", 0) + " (" +
        std::to_string(inductor_graphs) + " graphs) | " + total("greedy", "attention_fused", 0) + " / **" +
        total("sator", "attention_fused", 0) + "** / " + total("inductor", "attention_fused", 0) + " | " +
        total("input", "cost", 1) + " | " + total("greedy", "cost", 1) + " | **" + total("sator", "cost", 1) + "** | " +
        total("inductor", "cost", 1) + " (" + std::to_string(inductor_costed) + " graphs) | |\n\n";
  md += "Cost: the roofline model's estimated compiled time in µs (or node count with `--cost nodes`); Inductor's "
        "column is its graph after its joint-graph passes where the corpus holds it, – where that graph calls chunk "
        "bodies the corpus does not hold (`hop.invoke_subgraph`). \"input kept\": sator wrote the input's form where "
        "its own would have raised the estimated peak (or the time limit ran out), so it can read worse than greedy's. "
        "Per-graph details: "
        "`graphs/NAME.json`; times of each method: `timings.csv`.\n\n";
  // Linked only once drawn: a link to a chart that does not exist yet is a
  // broken image to the reader (issue 43); scripts/plot adds the links.
  md += "## Charts\n\n";
  if (std::filesystem::exists(dir / "charts" / "layout_ops.svg"))
    md += std::string(kChartLinks);
  else
    md += "Not drawn yet: `scripts/plot` on this folder draws them (matplotlib) and links them here.\n";
  write_file_atomic((dir / "summary.md").string(), md);
  return results.size() - ok + missing.size();
}

}  // namespace sator::cli
