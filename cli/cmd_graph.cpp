// `sator graph TEXT -o GRAPH.json`: a sator.graph file written from a few
// lines of text (tensor/graph_text.h says the format), typed by the ops'
// shape functions and strided as PyTorch lays the results out; then read
// back and checked as any input graph is. For rule authors without torch:
// write the graph a rule should rewrite, then `sator optimize --rules`.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/validators.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "ir/shape_prover.h"
#include "tensor/graph_text.h"

namespace sator::cli {

namespace {

struct Options {
  std::string path, out;
};

void run(const Options& o) {
  require_distinct_outputs(o.path, {{"-o", o.out}});
  const Graph g = read_text_graph_file(o.path);
  // What the file says is checked as a graph file's would be: the JSON
  // written is one `sator` itself reads.
  const std::string json = write_graph_text(g);
  const Graph back = read_graph_text(json, o.path);
  ShapeProver prover(back.symbols);
  require_consistent_shapes(back, check_shapes(back, prover), o.path);
  if (o.out.empty()) {
    std::fwrite(json.data(), 1, json.size(), stdout);
    return;
  }
  write_file_atomic(o.out, json);
  std::printf("%s: %zu nodes; wrote %s\n", g.name.c_str(), g.nodes.size(), o.out.c_str());
}

}  // namespace

void add_graph_command(CLI::App& app) {
  static Options opt;
  CLI::App* cmd = app.add_subcommand(
      "graph", "write a sator.graph JSON file from a few lines of text (x = input([4, 8]); y = neg(x); ...)");
  cmd->add_option("text", opt.path, "the graph as text (docs/graph-text.md)")->required();
  cmd->add_option("-o,--output", opt.out, "write the graph here (default: standard output)")->check(output_path());
  cmd->callback([] { run(opt); });
}

}  // namespace sator::cli
