#include "cli/batch_isolate.h"

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "ir/graph_io.h"

extern char** environ;

namespace sator::cli {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

std::atomic<bool> g_interrupted{false};

void on_interrupt(int) { g_interrupted.store(true); }

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("sator") : p.string();
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// A failed graph's result record (written by the worker, or by the parent
// for a failure the worker could not report).
ordered_json failure(const std::string& name, const std::string& path, const std::string& error) {
  return ordered_json{{"graph", name}, {"file", fs::path(path).filename().string()}, {"status", "failed"},
                      {"error", error}};
}

std::string signal_text(int sig) {
  const char* name = strsignal(sig);
  return "signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
}

}  // namespace

const std::atomic<bool>& interrupt_flag() {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return true;
  }();
  (void)installed;
  return g_interrupted;
}

IsolatedRun run_isolated(const BatchInput& b, const std::string& result_path, const CompareOptions& c,
                         const IsolationLimits& limits, const std::atomic<bool>& stop) {
  std::vector<std::string> args = {self_exe(), "batch-one", b.path, "--name", b.name, "--result", result_path,
                                   "--cost", c.cost, "--device", c.device, "--extractor", c.extractor,
                                   "--objective", c.objective, "--repeat", std::to_string(c.repeat)};
  if (c.greedy_fixpoint) args.push_back("--greedy-fixpoint");
  args.insert(args.end(), c.user_rule_args.begin(), c.user_rule_args.end());
  if (limits.memory_bytes > 0) args.insert(args.end(), {"--memory", number(limits.memory_bytes)});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::error_code ec;
  fs::remove(result_path, ec);  // a stale result must not pass for this run's

  // The child ignores SIGINT: the parent decides what an interrupt stops.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a terminal's Ctrl-C reaches the parent only
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  IsolatedRun run;
  if (rc != 0) {
    run.result = failure(b.name, b.path, std::string("could not start a worker process: ") + std::strerror(rc));
    return run;
  }
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  bool timed_out = false, interrupted = false;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (stop.load() || elapsed > limits.seconds) {
      interrupted = stop.load();
      timed_out = !interrupted;
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      // A write it had begun: write_file_atomic's RESULT.tmp.PID.XXXXXX.
      const std::string begun = fs::path(result_path + ".tmp." + std::to_string(pid) + ".").filename().string();
      const fs::path folder = fs::path(result_path).has_parent_path() ? fs::path(result_path).parent_path() : fs::path(".");
      for (const auto& e : fs::directory_iterator(folder, ec))
        if (e.path().filename().string().rfind(begun, 0) == 0) fs::remove(e.path(), ec);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(elapsed < 1 ? 2 : 20));
  }
  if (interrupted) {
    run.kind = IsolatedRun::Kind::Interrupted;
    return run;
  }
  if (timed_out) {
    run.result = failure(b.name, b.path, "exceeded the per-graph time limit of " + number(limits.seconds) + " s (killed)");
    return run;
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) {
    // A SIGTERM for the whole job (Slurm's scancel, a system shutdown)
    // reaches the worker and this process alike, and the worker's death can
    // be seen before this process's handler has run: that is an interrupt,
    // not the graph's failure, and --resume runs the graph again.
    for (int i = 0; i < 50 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (stop.load()) {
      run.kind = IsolatedRun::Kind::Interrupted;
      return run;
    }
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    run.result = failure(b.name, b.path, "the worker died of " + signal_text(sig) +
                                (sig == SIGKILL ? ": out of memory, or killed from outside" : ": a crash in sator"));
    return run;
  }
  std::ifstream in(result_path);
  const ordered_json j = in ? ordered_json::parse(in, nullptr, false) : ordered_json();
  if (j.is_discarded() || !j.is_object() || !j.contains("status")) {
    run.result = failure(b.name, b.path, "the worker exited " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                " without a result");
    return run;
  }
  run.kind = j.value("status", "") == "ok" ? IsolatedRun::Kind::Finished : IsolatedRun::Kind::Failed;
  run.result = j;
  return run;
}

// The process's mapped address space now (/proc/self/statm's first field),
// or 0 where it cannot be read.
static std::size_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

int run_batch_one(const std::string& graph, const std::string& name, const std::string& result_path,
                  const CompareOptions& c, double memory_bytes) {
  signal(SIGINT, SIG_IGN);
  // A crash on demand, for the isolation test (tests/batch_isolation_test.sh).
  if (const char* crash = std::getenv("SATOR_TEST_CRASH_ON"); crash && name == crash) std::abort();
  // A hang on demand (until the parent's timeout or interrupt kills it).
  if (const char* hang = std::getenv("SATOR_TEST_HANG_ON"); hang && name == hang)
    for (;;) pause();
  if (memory_bytes > 0) {
    // The limit counts what this graph's work maps, on top of what the
    // process already has: the shared libraries (Z3, CBC, BLAS) and the
    // allocator's first reservations are tens of MiB of address space that
    // differ between machines, and must not decide whether a small graph fits.
    const double limit = static_cast<double>(address_space_bytes()) + memory_bytes;
    const rlimit lim{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
    setrlimit(RLIMIT_AS, &lim);
  }
  ordered_json r;
  std::string error;
  try {
    r = compare_graph(graph, c);
    r["status"] = "ok";
  } catch (const GraphError& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory (the per-graph memory limit, --graph-memory)";
  } catch (const std::exception& e) {  // a rule or writer failure on this graph
    error = std::string("internal error: ") + e.what();
  }
  if (!error.empty()) r = failure(name, graph, error);
  r["graph"] = name;
  write_file_atomic(result_path, r.dump(2) + "\n");
  return 0;
}

}  // namespace sator::cli
