#include "check/proof_cache.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <unistd.h>

#include "check/cases_generated.h"
#include "ir/graph_io.h"
#include "check/rule_check.h"

namespace sator::check {

namespace fs = std::filesystem;

namespace {

// Bump when what check-rules proves or tests changes: earlier passes are
// then checked again.
constexpr const char* kCheckerVersion = "sator check-rules 1 (200 trials, seed 1, tolerance 1e-9)";

std::string key_of(const std::string& rule_text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : std::string(kCheckerVersion) + "\n" + rule_text) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool cached(const std::string& dir, const std::string& key, const std::string& text) {
  if (dir.empty()) return false;
  std::ifstream in(dir + "/" + key + ".passed");
  if (!in) return false;
  const std::string stored((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return stored == std::string(kCheckerVersion) + "\n" + text + "\n";
}

// Written to a temporary name and renamed: a cache file is whole or absent.
void remember(const std::string& dir, const std::string& key, const std::string& text) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Created exclusively under an unpredictable name (write_file_atomic): a
  // link planted in the cache folder is never followed.
  try {
    write_file_atomic(dir + "/" + key + ".passed", std::string(kCheckerVersion) + "\n" + text + "\n");
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
  const RuleFactory rules = file_rules(files);
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
    if (progress) *progress << "checking rule '" << cases[i].name << "' (check-rules: Z3 proofs and 200 float64 trials)\n";
    const RuleReport r = check_rule(cases[i], rules, CheckOptions{});
    if (!r.ok()) {
      std::string why = r.failures.empty() ? r.shape : r.failures[0].substr(0, r.failures[0].find('\n'));
      throw rulelang::RuleError(specs[i]->at, "rule '" + cases[i].name + "' does not pass check-rules (" + why +
                                                  "); `sator check-rules --rules " + paths[i] +
                                                  "` prints the counterexample, --unchecked runs it anyway");
    }
    remember(dir, key, text);
  }
}

}  // namespace sator::check
