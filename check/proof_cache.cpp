#include "check/proof_cache.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/cases_generated.h"
#include "ir/graph_io.h"
#include "check/rule_check.h"

namespace sator::check {

namespace fs = std::filesystem;

namespace {

// Bump when what check-rules proves or tests changes: earlier passes are
// then checked again.
// 2: the trials also run at the graph's own dtypes (issue 42); a pass from
// version 1 says nothing about those. 3: every branch of a right-hand
// side must be taken by some trial.
constexpr const char* kCheckerVersion =
    "sator check-rules 3 (200 trials, seed 1, tolerance 1e-9, 4 ulp at its dtypes, every right-hand-side branch taken)";

uint64_t fnv1a(uint64_t h, const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ULL;
  return h;
}

// This binary's own contents, hashed once: a pass recorded by another build
// (other rules, another op table, another checker) is not this one's.
uint64_t binary_hash() {
  static const uint64_t h = [] {
    uint64_t x = 0xcbf29ce484222325ULL;
    std::ifstream in("/proc/self/exe", std::ios::binary);
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) x = fnv1a(x, buf, static_cast<size_t>(in.gcount()));
    return x;
  }();
  return h;
}

std::string key_of(const std::string& rule_text) {
  const uint64_t b = binary_hash();
  uint64_t h = fnv1a(0xcbf29ce484222325ULL, reinterpret_cast<const char*>(&b), sizeof b);
  const std::string what = std::string(kCheckerVersion) + "\n" + rule_text;
  h = fnv1a(h, what.data(), what.size());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Whether `path` is something only this user could have written: owned by
// them and writable by no one else (a link is not followed).
bool ours(const std::string& path, bool folder) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return false;
  return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// A recorded pass, trusted only where only this user could have written it;
// read without following a link, at most 1 MiB.
bool cached(const std::string& dir, const std::string& key, const std::string& text) {
  if (dir.empty() || !ours(dir, true)) return false;
  const std::string path = dir + "/" + key + ".passed";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool trusted = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
                       (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 && st.st_size <= (1 << 20);
  std::string stored;
  if (trusted) {
    stored.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < stored.size()) {
      const ssize_t n = ::read(fd, stored.data() + done, stored.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    stored.resize(done);
  }
  ::close(fd);
  return trusted && stored == std::string(kCheckerVersion) + "\n" + text + "\n";
}

// Written to a temporary name and renamed: a cache file is whole or absent.
void remember(const std::string& dir, const std::string& key, const std::string& text) {
  if (dir.empty()) return;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) {
    fs::create_directories(dir, ec);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  if (!ours(dir, true)) return;  // a folder others can write to is no place for passes
  // Created exclusively under an unpredictable name (write_file_atomic): a
  // link planted in the cache folder is never followed.
  try {
    const std::string path = dir + "/" + key + ".passed";
    // Whatever else stands at the entry's name (a link, a FIFO, which the
    // writer would write into) goes: the folder is this user's own.
    std::error_code rm;
    if (fs::exists(fs::symlink_status(path, rm)) && !fs::is_regular_file(fs::symlink_status(path, rm))) fs::remove(path, rm);
    write_file_atomic(path, std::string(kCheckerVersion) + "\n" + text + "\n");
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
  } catch (const GraphError&) {
    // A cache that cannot be written only costs the next run a check.
  }
}

}  // namespace

std::string proof_cache_dir() {
  if (const char* p = std::getenv("SATOR_PROOF_CACHE"); p && *p) return std::string(p) == "off" ? "" : p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/sator/proofs";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/sator/proofs";
  return "";
}

void require_proved(const std::vector<rulelang::RuleFile>& files, std::ostream* progress) {
  const std::string dir = proof_cache_dir();
  const std::vector<RuleCase> cases = generated_cases(files);
  // Each compiled rule (a `<=>` rule's two directions) with its entry.
  std::vector<const rulelang::RuleSpec*> specs;
  std::vector<std::string> paths;
  for (const rulelang::RuleFile& f : files)
    for (const rulelang::RuleSpec& s : f.rules)
      for (int direction = 0; direction < (s.both_ways ? 2 : 1); ++direction) {
        specs.push_back(&s);
        paths.push_back(f.path);
      }
  for (size_t i = 0; i < cases.size() && i < specs.size(); ++i) {
    const std::string text = cases[i].name + " " + specs[i]->text;
    const std::string key = key_of(text);
    if (cached(dir, key, text)) continue;
    if (progress) *progress << "checking rule '" << cases[i].name << "' (check-rules: Z3 proofs, 200 float64 trials and the same at its dtypes)\n";
    const RuleReport r = check_rule(cases[i], file_rule(files, cases[i].name), CheckOptions{});
    if (!r.ok()) {
      std::string why = r.failures.empty() ? r.shape : r.failures[0].substr(0, r.failures[0].find('\n'));
      throw rulelang::RuleError(specs[i]->at, "rule '" + cases[i].name + "' does not pass check-rules (" + why +
                                                  "); `sator check-rules --rules " + paths[i] +
                                                  "` says why (the counterexample, where there is one), --unchecked runs it anyway");
    }
    remember(dir, key, text);
  }
}

}  // namespace sator::check
