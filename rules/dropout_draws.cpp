#include "rules/dropout_draws.h"

namespace sator::rules {

namespace {

// The dropout probability's position among a fused forward's arguments.
int dropout_slot(const std::string& op) {
  if (op == "aten.scaled_dot_product_attention.default") return 4;
  if (op == "aten._scaled_dot_product_efficient_attention.default") return 5;
  return -1;
}

struct DrawCounts {
  size_t kernels = 0;  // fused forwards with dropout
  size_t rands = 0;    // aten.rand draws
};

DrawCounts count_draws(const Graph& g) {
  DrawCounts c;
  for (const Node& n : g.nodes) {
    if (n.op == "aten.rand.default") ++c.rands;
    const int slot = dropout_slot(n.op);
    if (slot < 0 || n.args.size() <= static_cast<size_t>(slot)) continue;
    const Value& p = n.args[static_cast<size_t>(slot)];
    const double drop = p.kind == Value::Kind::Float ? p.f : p.kind == Value::Kind::Int ? static_cast<double>(p.i) : 0.0;
    if (drop != 0.0) ++c.kernels;
  }
  return c;
}

}  // namespace

bool mixes_dropout_draws(const Graph& input, const Graph& output) {
  const DrawCounts in = count_draws(input), out = count_draws(output);
  if (out.kernels <= in.kernels) return false;
  const size_t replaced = out.kernels - in.kernels;
  return out.rands + replaced > in.rands;
}

}  // namespace sator::rules
