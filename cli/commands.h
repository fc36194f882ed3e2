// One function per `sator` subcommand; each returns the process exit status.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace sator::cli {

// Registers the subcommand on `app`; the returned callback state lives in
// static storage owned by each command file.
void add_info_command(CLI::App& app);
void add_dot_command(CLI::App& app);
void add_optimize_command(CLI::App& app);
void add_greedy_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_batch_commands(CLI::App& app);  // batch and batch-merge
void add_check_rules_command(CLI::App& app);
void add_extract_command(CLI::App& app);
void add_cost_command(CLI::App& app);
void add_chunk_command(CLI::App& app);
void add_ops_command(CLI::App& app);
void add_graph_command(CLI::App& app);

}  // namespace sator::cli
