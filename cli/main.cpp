// sator: an equality-saturation optimizer for tensor computation graphs.
// Exit status: 0 success, 2 bad input or usage, 1 internal error.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "rulelang/sexpr.h"
#include "ir/graph_io.h"
#include "ir/printable.h"

int main(int argc, char** argv) {
  CLI::App app{"sator: equality saturation for tensor computation graphs"};
  app.require_subcommand(1);
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
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
