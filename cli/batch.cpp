#include "cli/batch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/batch_isolate.h"
#include "ir/graph_io.h"
#include "ir/input_file.h"
#include "ir/printable.h"

namespace sator::cli {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

std::string stem_of(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
  return name;
}

// A manifest or a result file: a regular file of bounded size, or a GraphError naming it.
std::string read_text(const std::string& path) {
  try {
    return read_input_file(path, kMaxRuleFileBytes);
  } catch (const InputFileError& e) {
    throw GraphError(path, "", e.what());
  }
}

// A graph's name becomes its result file OUT/graphs/NAME.json: it must be a
// plain file name (no folder, no "..", no control characters), or a manifest
// entry could write outside --out.
void require_plain_name(const std::string& name, const std::string& where) {
  std::string why;
  if (name.empty()) why = "is empty";
  else if (name == "." || name == "..") why = "is a folder reference";
  else if (name.size() > 200) why = "is longer than 200 characters";
  else
    for (unsigned char c : name)
      if (c == '/' || c == '\\') why = "holds a path separator";
      else if (c < 0x20 || c == 0x7f) why = "holds a control character";
  if (!why.empty())
    throw GraphError(where, "", "graph name \"" + printable(name, 80) + "\" " + why + "; names become result files");
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::vector<BatchInput> from_manifest(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  const std::string text = read_text(path);
  std::vector<BatchInput> out;
  const ordered_json doc = ordered_json::parse(text, nullptr, false);
  if (!doc.is_discarded() && doc.is_array()) {
    for (const auto& e : doc) {
      if (e.is_object() && e.contains("graph") && e["graph"].is_string()) {
        const std::string name = e["graph"].get<std::string>();
        out.push_back({name, (dir / "graphs" / (name + ".json")).string()});
      } else if (e.is_string()) {
        const fs::path p = fs::path(e.get<std::string>());
        const std::string full = (p.is_absolute() ? p : dir / p).string();
        out.push_back({stem_of(full), full});
      } else {
        throw GraphError(path, "", "a manifest entry is neither a path nor an object with \"graph\"");
      }
    }
    return out;
  }
  if (!doc.is_discarded()) throw GraphError(path, "", "a JSON manifest must be an array");
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    const fs::path p(line);
    const std::string full = (p.is_absolute() ? p : dir / p).string();
    out.push_back({stem_of(full), full});
  }
  return out;
}

class Progress {
 public:
  Progress(size_t total, size_t skipped) : total_(total), done_(skipped), tty_(isatty(STDERR_FILENO) != 0) {}

  void finished(const std::string& name, bool ok, const std::string& error, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    ++ran_;
    failed_ += !ok;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = elapsed / static_cast<double>(ran_) * static_cast<double>(total_ - done_);
    if (tty_) {
      const size_t width = 30, filled = total_ ? width * done_ / total_ : width;
      std::fprintf(stderr, "\r[%s%s] %zu/%zu graphs, %zu failed, %.0f s, ETA %.0f s   ",
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done_, total_, failed_,
                   elapsed, eta);
      if (!ok) std::fprintf(stderr, "\n%s: failed: %s\n", printable(name).c_str(), printable(error).c_str());
      if (done_ == total_) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "[%zu/%zu] %s %s (%.1f s)%s%s\n", done_, total_, printable(name).c_str(), ok ? "ok" : "FAILED",
                   seconds, ok ? "" : ": ", printable(error).c_str());
    }
    std::fflush(stderr);
  }

 private:
  std::mutex mutex_;
  size_t total_, done_, ran_ = 0, failed_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

bool is_ok_result(const std::string& path) {
  if (!fs::exists(path)) return false;
  const ordered_json j = ordered_json::parse(read_text(path), nullptr, false);
  return !j.is_discarded() && j.is_object() && j.value("status", "") == "ok";
}

std::vector<ordered_json> read_results(const fs::path& dir) {
  std::vector<ordered_json> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ordered_json j = ordered_json::parse(read_text(e.path().string()), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("graph"))
      throw GraphError(e.path().string(), "", "not a batch result file");
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

std::vector<BatchInput> list_batch_inputs(const std::string& source) {
  std::vector<BatchInput> out;
  if (fs::is_directory(source)) {
    for (const auto& e : fs::directory_iterator(source))
      if (e.is_regular_file() && e.path().extension() == ".json")
        out.push_back({stem_of(e.path().string()), e.path().string()});
  } else if (fs::is_regular_file(source)) {
    out = from_manifest(source);
  } else {
    throw GraphError(source, "", "no such directory or manifest");
  }
  std::sort(out.begin(), out.end(), [](const BatchInput& a, const BatchInput& b) { return a.name < b.name; });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].name == out[i - 1].name)
      throw GraphError(source, "", "two graphs named " + out[i].name + " (" + out[i - 1].path + ", " + out[i].path + ")");
  if (out.empty()) throw GraphError(source, "", "no graphs (*.json) to optimize");
  for (const BatchInput& b : out) require_plain_name(b.name, source);
  return out;
}

std::vector<BatchInput> shard_of(const std::vector<BatchInput>& all, size_t index, size_t count) {
  std::vector<BatchInput> out;
  for (const BatchInput& b : all)
    if (fnv1a(b.name) % count == index - 1) out.push_back(b);
  return out;
}

// --out must be a folder (or not exist yet) that is neither the source
// folder nor inside it, nor where any input lives.
void require_output_folder(const std::string& out, const std::string& source, const std::vector<BatchInput>& inputs) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw GraphError(out, "", "--out exists and is not a folder");
  const fs::path o = fs::weakly_canonical(out, ec);
  auto inside = [&](const fs::path& dir) {
    const fs::path d = fs::weakly_canonical(dir, ec);
    auto [a, b] = std::mismatch(d.begin(), d.end(), o.begin(), o.end());
    return a == d.end();
  };
  if (fs::is_directory(source, ec) && inside(source))
    throw GraphError(out, "", "--out is the source folder or inside it; results would mix with the graphs");
  for (const BatchInput& b : inputs)
    if (fs::weakly_canonical(fs::path(b.path).parent_path(), ec) == o / "graphs")
      throw GraphError(out, "", "--out/graphs holds the input " + b.path + "; its result would overwrite it");
}

int run_batch(const BatchOptions& o) {
  const std::vector<BatchInput> inputs = shard_of(list_batch_inputs(o.source), o.shard_index, o.shard_count);
  require_output_folder(o.out, o.source, inputs);
  const fs::path results_dir = fs::path(o.out) / "graphs";
  std::vector<BatchInput> todo;
  for (const BatchInput& b : inputs)
    if (!o.resume || !is_ok_result((results_dir / (b.name + ".json")).string())) todo.push_back(b);
  if (o.list_only) {  // the options and the source are checked; nothing is written
    for (const BatchInput& b : todo) std::printf("%s\t%s\n", b.name.c_str(), b.path.c_str());
    return 0;
  }
  fs::create_directories(results_dir);
  const size_t jobs = std::max<size_t>(1, std::min<size_t>(o.jobs ? o.jobs : std::thread::hardware_concurrency(),
                                                           std::max<size_t>(todo.size(), 1)));
  std::fprintf(stderr, "sator batch: %zu graphs%s, %zu to run on %zu thread%s\n", inputs.size(),
               o.shard_count > 1 ? (" (shard " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count) + ")").c_str() : "",
               todo.size(), jobs, jobs == 1 ? "" : "s");
  // Each job is a process of its own: jobs side by side already use the
  // cores, so a large graph's order search stays on one thread in each
  // (schedule/memory_schedule.h), unless the user said otherwise.
  if (jobs > 1) setenv("SATOR_THREADS", "1", /*overwrite=*/0);
  Progress progress(inputs.size(), inputs.size() - todo.size());
  const std::atomic<bool>& stop = interrupt_flag();
  IsolationLimits limits;
  limits.seconds = o.graph_seconds;
  limits.memory_bytes = o.graph_memory_bytes;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < todo.size() && !stop.load(); i = next++) {
      const BatchInput& b = todo[i];
      const auto t0 = std::chrono::steady_clock::now();
      const std::string result_path = (results_dir / (b.name + ".json")).string();
      IsolatedRun run = run_isolated(b, result_path, o.compare, limits, stop);
      if (run.kind == IsolatedRun::Kind::Interrupted) continue;
      // The worker wrote its own result; a failure it could not report
      // (a crash, the time limit) is written here.
      const std::string error = run.result.value("error", "");
      if (run.kind != IsolatedRun::Kind::Finished) write_file_atomic(result_path, run.result.dump(2) + "\n");
      progress.finished(b.name, run.kind == IsolatedRun::Kind::Finished, error,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  };
  std::vector<std::thread> pool;
  for (size_t j = 0; j < jobs; ++j) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  std::set<std::string> mine;
  for (const BatchInput& b : inputs) mine.insert(b.name);
  std::vector<ordered_json> results;
  for (ordered_json& r : read_results(results_dir))
    if (mine.count(r["graph"].get<std::string>())) results.push_back(std::move(r));
  const size_t done = results.size();
  const size_t failed = write_summaries(o.out, std::move(results));
  if (stop.load()) {
    std::fprintf(stderr, "\nsator batch: interrupted: %zu ok, %zu failed, %zu not run; summary of what finished in %s; "
                 "--resume continues\n", done - failed, failed, inputs.size() - done,
                 (fs::path(o.out) / "summary.md").string().c_str());
    return 130;
  }
  std::fprintf(stderr, "sator batch: %zu ok, %zu failed; summary in %s\n", inputs.size() - failed, failed,
               (fs::path(o.out) / "summary.md").string().c_str());
  return failed ? 1 : 0;
}

int merge_batches(const std::vector<std::string>& dirs, const std::string& out, const std::string& expect) {
  // The expected graphs are listed first: a bad source fails before anything is written.
  const std::vector<BatchInput> expected = expect.empty() ? std::vector<BatchInput>{} : list_batch_inputs(expect);
  std::map<std::string, ordered_json> merged;
  for (const std::string& d : dirs) {
    if (!fs::is_directory(fs::path(d) / "graphs")) throw GraphError(d, "", "not a batch output folder (no graphs/)");
    for (ordered_json& r : read_results(fs::path(d) / "graphs")) {
      if (!r["graph"].is_string()) throw GraphError(d, "", "a result file's \"graph\" is not a string");
      const std::string name = r["graph"].get<std::string>();
      require_plain_name(name, (fs::path(d) / "graphs").string());
      auto it = merged.find(name);
      // A graph in two shards (a rerun): an ok result wins over a failed one.
      if (it == merged.end() || (it->second.value("status", "") != "ok" && r.value("status", "") == "ok"))
        merged[name] = std::move(r);
    }
  }
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) throw GraphError(out, "", "--out exists and is not a folder");
  const fs::path results_dir = fs::path(out) / "graphs";
  fs::create_directories(results_dir);
  std::vector<ordered_json> results;
  for (auto& [name, r] : merged) {
    write_file_atomic((results_dir / (name + ".json")).string(), r.dump(2) + "\n");
    results.push_back(std::move(r));
  }
  std::vector<std::string> not_run;
  for (const BatchInput& b : expected)
    if (!merged.count(b.name)) not_run.push_back(b.name);
  const size_t failed = write_summaries(out, std::move(results), not_run);
  std::fprintf(stderr, "sator batch-merge: %zu graphs from %zu folders, %zu failed", merged.size(), dirs.size(),
               failed - not_run.size());
  if (!expect.empty()) std::fprintf(stderr, ", %zu of %zu expected not run", not_run.size(), expected.size());
  std::fprintf(stderr, "; summary in %s\n", (fs::path(out) / "summary.md").string().c_str());
  for (size_t i = 0; i < not_run.size() && i < 20; ++i) std::fprintf(stderr, "  not run: %s\n", not_run[i].c_str());
  if (not_run.size() > 20) std::fprintf(stderr, "  ... and %zu more (summary.json \"not_run\")\n", not_run.size() - 20);
  return failed ? 1 : 0;
}

}  // namespace sator::cli
