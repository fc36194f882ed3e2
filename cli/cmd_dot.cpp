// `sator dot GRAPH.json -o OUT.dot`: a Graphviz picture of a graph. Layout ops
// are filled boxes so the view/permute noise stands out; edges carry shapes.
#include <CLI/CLI.hpp>

#include "cli/kept_until_exit.h"
#include "cli/commands.h"
#include "cli/validators.h"
#include "cli/output_paths.h"
#include "ir/graph_io.h"
#include "ir/printable.h"
#include "ir/op_table.h"
#include "ir/shape_check.h"

namespace sator::cli {

namespace {

struct DotOptions {
  std::string path, out;
};

// A quoted DOT string: quotes and backslashes escaped, control characters
// (NUL, escape sequences) and over-long names made printable first.
std::string escape(const std::string& s) {
  std::string r;
  for (char c : printable(s, 200)) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

// "aten.view.default" -> "view"
std::string short_op(const std::string& op) {
  std::string s = op;
  if (s.rfind("aten.", 0) == 0 || s.rfind("prims.", 0) == 0) s = s.substr(s.find('.') + 1);
  if (auto dot = s.rfind('.'); dot != std::string::npos && s.rfind("hop.", 0) != 0 && s.rfind("_operator.", 0) != 0)
    s = s.substr(0, dot);
  return s;
}

std::string edge_label(const Node& n) {
  switch (n.result) {
    case Node::Result::Tensor: return shape_text(n.tensor.shape) + " " + std::string(dtype_name(n.tensor.dtype));
    case Node::Result::SymInt: return n.symint.to_string();
    case Node::Result::Tuple: return "tuple";
    case Node::Result::None: return "";
  }
  return "";
}

std::string node_style(const Node& n) {
  if (n.op == "placeholder") return "shape=ellipse, style=filled, fillcolor=\"#d9f2d9\"";
  if (n.op == "output") return "shape=doubleoctagon";
  if (is_counted_layout_op(n.op)) return "shape=box, style=\"filled,dashed\", fillcolor=\"#fde9c4\"";
  const OpInfo* info = find_op(n.op);
  if (info && info->cls == OpClass::Attention) return "shape=box, style=filled, fillcolor=\"#c4dafd\"";
  if (info && info->cls == OpClass::Matmul) return "shape=box, style=filled, fillcolor=\"#e6d9f2\"";
  if (!info) return "shape=box, style=filled, fillcolor=\"#eeeeee\"";  // opaque
  return "shape=box";
}

void run_dot(const DotOptions& opt) {
  require_distinct_outputs(opt.path, {{"-o", opt.out}});
  Graph& g = keep_until_exit(load_graph(opt.path));
  std::string out = "digraph \"" + escape(g.name) + "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    out += "  n" + std::to_string(id) + " [label=\"" + escape(n.name) + "\\n" + escape(short_op(n.op)) + "\", " +
           node_style(n) + "];\n";
  }
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    auto edge = [&](NodeId from) {
      out += "  n" + std::to_string(from) + " -> n" + std::to_string(id) + " [label=\"" +
             escape(edge_label(g.nodes[from])) + "\"];\n";
    };
    for (const Value& a : n.args) a.for_each_node(edge);
    for (const auto& kv : n.kwargs) kv.second.for_each_node(edge);
  }
  out += "}\n";
  write_file_atomic(opt.out, out);
}

}  // namespace

void add_dot_command(CLI::App& app) {
  static DotOptions opt;
  CLI::App* cmd = app.add_subcommand("dot", "write a Graphviz picture of a graph");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_option("-o,--output", opt.out, "the .dot file to write")->check(output_path())->required();
  cmd->callback([] { run_dot(opt); });
}

}  // namespace sator::cli
