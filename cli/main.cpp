// sator: an equality-saturation optimizer for tensor computation graphs.
// Exit status: 0 success, 2 bad input or usage, 1 internal error.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "git_revision.h"
#include "rules/shipped_rules.h"
#include "rulelang/rule_set.h"
#include "rulelang/sexpr.h"
#include "ir/graph_io.h"
#include "ir/printable.h"

namespace {

// Edit distance (insertions, deletions, substitutions), for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A hash of the rules this binary runs: the shipped rule files' text and the
// built-in rules' names (FNV-1a, 64 bits), so that two builds can be told
// apart by what they rewrite.
std::string rule_set_hash() {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator, so that "ab","c" differs from "a","bc"
  };
  for (const std::string& f : sator::rulelang::shipped_rule_file_names()) mix(f + "\n" + sator::rulelang::shipped_rule_source(f));
  for (const std::string& r : sator::rules::shipped_rule_names()) mix(r);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string version_text() {
  return std::string("sator ") + SATOR_VERSION + " (git " + SATOR_GIT_REVISION + ", rule set " + rule_set_hash() + ", " +
         std::to_string(sator::rules::shipped_rule_names().size()) + " rules)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sator: equality saturation for tensor computation graphs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  // `sator help [SUBCOMMAND]`: the same as --help, for the whole tool or one command.
  std::string help_topic;
  CLI::App* help = app.add_subcommand("help", "print help for sator, or for one SUBCOMMAND");
  help->add_option("subcommand", help_topic, "the subcommand");
  sator::cli::add_info_command(app);
  sator::cli::add_dot_command(app);
  sator::cli::add_optimize_command(app);
  sator::cli::add_greedy_command(app);
  sator::cli::add_compare_command(app);
  sator::cli::add_batch_commands(app);
  sator::cli::add_check_rules_command(app);
  sator::cli::add_extract_command(app);
  sator::cli::add_cost_command(app);
  sator::cli::add_chunk_command(app);
  sator::cli::add_ops_command(app);
  sator::cli::add_graph_command(app);
  // A first word that names no subcommand: said so, with the nearest name.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    const CLI::App* found = nullptr;
    std::string nearest;
    size_t best = 3;  // at most two edits away
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == word) found = sub;
      if (const size_t d = edit_distance(word, sub->get_name()); d < best) best = d, nearest = sub->get_name();
    }
    if (!found) {
      std::cerr << "sator: unknown subcommand '" << sator::printable(word) << "'"
                << (nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)")
                << "\n(run `sator --help` for the subcommands)\n";
      return 2;
    }
  }
  // Before parsing (afterwards it is the parsed subcommand's), under the name it was run by.
  const std::string top_help = app.help(std::string(argv[0]));
  try {
    app.parse(argc, argv);
    if (help->parsed()) {
      if (help_topic.empty()) {
        std::cout << top_help;
        return 0;
      }
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        if (sub->get_name() == help_topic && sub != help) {
          std::cout << sub->help(std::string(argv[0]));
          return 0;
        }
      std::cerr << "sator: help: unknown subcommand '" << sator::printable(help_topic) << "'\n";
      return 2;
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {  // a command's own failure status (check-rules: 1)
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    std::cerr << "sator: " << sator::printable(e.what()) << "\n(run `sator --help` for usage)\n";
    return 2;
  } catch (const sator::GraphError& e) {
    std::cerr << "sator: " << sator::printable(e.what()) << "\n";
    return 2;
  } catch (const sator::rulelang::RuleError& e) {  // a rule file: file:line:col: message
    std::cerr << "sator: " << sator::printable(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sator: internal error: " << sator::printable(e.what()) << "\n";
    return 1;
  }
  // What a command printed must have reached its reader (a full disk, a
  // closed pipe): a lost report is not success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "sator: cannot write to standard output\n";
    return 2;
  }
  return 0;
}
