#include "pipeline/explain_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <unordered_set>

#include "ir/op_table.h"
#include "rules/causal_mask.h"
#include "rules/mixed_precision.h"

namespace sator::pipeline {

namespace {

bool is_softmax_op(const std::string& op) {
  return op == "aten._softmax.default" || op == "aten._safe_softmax.default" || op == "aten.softmax.int";
}
bool is_matmul_op(const std::string& op) {
  return op == "aten.matmul.default" || op == "aten.bmm.default" || op == "aten.mm.default";
}
bool is_attention_kernel(std::string_view op) { return op.find("scaled_dot_product") != std::string_view::npos; }

// The op without "aten."/"prims." and ".default", as reasons print it.
std::string short_op(const std::string& op) {
  std::string s = op;
  for (const char* prefix : {"aten.", "prims."})
    if (s.rfind(prefix, 0) == 0) s.erase(0, std::string(prefix).size());
  if (s.size() > 8 && s.compare(s.size() - 8, 8, ".default") == 0) s.erase(s.size() - 8);
  return s;
}

// A node reference in argument i, if that argument is one.
std::optional<NodeId> arg_node(const Node& n, size_t i) {
  if (i < n.args.size() && n.args[i].is_node()) return n.args[i].node;
  return std::nullopt;
}

// exp(x) / sum(exp(x), ...) as decompositions write softmax.
bool is_decomposed_softmax(const Graph& g, const Node& n) {
  if (n.op != "aten.div.Tensor") return false;
  const auto num = arg_node(n, 0), den = arg_node(n, 1);
  if (!num || !den || g.nodes[*num].op != "aten.exp.default" || g.nodes[*den].op != "aten.sum.dim_IntList") return false;
  return arg_node(g.nodes[*den], 0) == num;
}

// Ops attention's probabilities pass through on the way to the values'
// matmul: layout ops, casts, dropout's mask and scale.
bool passes_probabilities(const std::string& op) {
  return op_has(op, OpFact::PicksElements) || op == "prims.convert_element_type.default" ||
         op == "aten._to_copy.default" || op == "aten.mul.Tensor" || op == "aten.native_dropout.default" ||
         op == "getitem";
}

// Whether scores are `x + m` with m a bias SDPA would be given (not zero, not
// the causal triangle: those need none).
bool adds_bias(const Graph& g, TensorEGraph& t, NodeId scores) {
  if (g.nodes[scores].op == "prims.convert_element_type.default" && arg_node(g.nodes[scores], 0))
    scores = *arg_node(g.nodes[scores], 0);  // (16-bit scores upcast for the softmax)
  // Any way the e-graph writes the scores as x + m (a masked_fill of the
  // scores is one, through masked-fill-as-add).
  const eg::Id cls = t.class_of(scores);
  const std::vector<eg::Id> nodes(t.egraph.class_nodes(cls).begin(), t.egraph.class_nodes(cls).end());
  for (eg::Id n : nodes)
    if (t.lang.op_name(t.egraph.op(n)) == "aten.add.Tensor" && t.egraph.children(n).size() == 2 &&
        rules::classify_mask(t, t.egraph.find(t.egraph.children(n)[1])) == rules::MaskKind::Other)
      return true;
  return false;
}

// Whether `n` multiplies by a mask drawn at random (dropout written out:
// mul(gt(rand, p), x)).
bool multiplies_by_draws(const Graph& g, const Node& n) {
  if (n.op != "aten.mul.Tensor") return false;
  for (size_t i = 0; i < 2; ++i) {
    const auto a = arg_node(n, i);
    if (!a || g.nodes[*a].op != "aten.gt.Scalar") continue;
    const auto r = arg_node(g.nodes[*a], 0);
    const OpInfo* info = r ? find_op(g.nodes[*r].op) : nullptr;
    if (info && info->cls == OpClass::Random) return true;
  }
  return false;
}

// Whether the scores (looked at through where, casts and adds, a few levels
// down) add a float32 term to a 16-bit one: autocast's promotion of q·kᵀ by
// a float32 bias.
bool adds_wide_term_to_16_bit(const Graph& g, TensorEGraph& t, NodeId n, int depth = 4) {
  const Node& node = g.nodes[n];
  const bool walk = node.op == "aten.where.self" || node.op == "aten.add.Tensor" ||
                    node.op == "prims.convert_element_type.default";
  if (!walk || depth == 0) return false;
  if (node.op == "aten.add.Tensor") {
    const auto a = arg_node(node, 0), b = arg_node(node, 1);
    const auto half = [&](NodeId x) {
      const DType d = g.nodes[x].tensor.dtype;
      return d == DType::BFloat16 || d == DType::Float16;
    };
    // (q·kᵀ first, as models write it: a 16-bit mask added to float32
    // scores is the other way round, and exact.)
    if (a && b && half(*a) && g.nodes[*b].tensor.dtype == DType::Float32 &&
        !rules::zero_or_masking_values(t, t.class_of(*b)))
      return true;
  }
  for (size_t i = 0; i < node.args.size(); ++i)
    if (const auto x = arg_node(node, i); x && adds_wide_term_to_16_bit(g, t, *x, depth - 1)) return true;
  return false;
}

// Whether the e-class holds a softmax node (a decomposed one recomposed).
bool class_has_softmax(const TensorEGraph& t, eg::Id cls) {
  for (eg::Id e : t.egraph.class_nodes(cls))
    if (is_softmax_op(t.lang.op_name(t.egraph.op(e)))) return true;
  return false;
}

// The scores' producers, a few levels deep: "add(mul(matmul, number), where)".
std::string describe(const Graph& g, NodeId n, int depth) {
  const Node& node = g.nodes[n];
  std::string s = short_op(node.op);
  if (node.op == "placeholder") return "an input";
  if (depth == 0) return s;
  std::string args;
  for (const Value& v : node.args) {
    if (!args.empty()) args += ", ";
    if (v.is_node()) args += describe(g, v.node, depth - 1);
    else if (v.kind == Value::Kind::Int || v.kind == Value::Kind::Float) args += "number";
    else args += "_";
  }
  return s + "(" + args + ")";
}

// The scores a softmax normalizes: its input, or for exp(x - max) / sum, x.
NodeId scores_of(const Graph& g, const Node& softmax, bool decomposed) {
  NodeId x = *arg_node(softmax, 0);
  if (!decomposed) return x;
  x = arg_node(g.nodes[x], 0).value_or(x);  // exp's input
  if (g.nodes[x].op == "aten.sub.Tensor") x = arg_node(g.nodes[x], 0).value_or(x);
  return x;
}

}  // namespace

namespace {

// Why the extraction kept a block decomposed, from the estimates: the graph
// as extracted; with the product's decomposed forms priced out (the forward
// takes its kernel); and with its probabilities priced out too (nothing may
// compute them: a training block's backward takes its kernel as well).
std::string kept_decomposed_because(const AttentionFusionOptions& options, const std::unordered_set<eg::Id>& product_forms,
                                    const std::unordered_set<eg::Id>& probabilities) {
  if (!options.cost_without || product_forms.empty()) return " (estimated cheaper, or the output target refuses the kernel)";
  const double extracted = options.cost_without({});
  const double forward = options.cost_without(product_forms);
  if (!std::isfinite(forward)) return ": no form with the kernel can be extracted (the output target refuses it)";
  std::unordered_set<eg::Id> both = product_forms;
  both.insert(probabilities.begin(), probabilities.end());
  const double whole = options.cost_without(both);
  const char* unit = options.cost_unit.c_str();
  char buf[240];
  if (std::isfinite(whole))
    std::snprintf(buf, sizeof buf, ": estimated cheaper (the graph %.1f %s as extracted, %.1f %s with this block's kernels)",
                  extracted, unit, whole, unit);
  else
    std::snprintf(buf, sizeof buf,
                  ": estimated cheaper (the graph %.1f %s as extracted, %.1f %s with the forward's kernel; no form in the "
                  "e-graph computes its gradients without the probabilities)",
                  extracted, unit, forward, unit);
  return buf;
}

// The weighing that left the block whose probabilities are class `cls`
// decomposed, if one did.
const BiasedKernelTrial* weighed_for(const AttentionFusionOptions& options, eg::Id cls) {
  if (!options.biased_kernels) return nullptr;
  for (const BiasedKernelTrial& w : *options.biased_kernels)
    if (!w.kept_kernels && w.decomposed.count(cls)) return &w;
  return nullptr;
}

std::string weighed_because(const BiasedKernelTrial& w) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "fused in the e-graph with the efficient kernels, which take its bias, but the graph as Inductor "
                "fuses it is estimated cheaper without them (%.1f us decomposed, %.1f us with them: "
                "cost/fused_estimate.h)",
                w.without_us, w.with_kernels_us);
  return buf;
}

// The ops of `output` that read a node computing class `cls` (short names).
std::string readers_of_class(const TensorEGraph& t, const Graph& output, const std::vector<eg::Id>& enode_of, eg::Id cls) {
  std::vector<bool> of_class(output.nodes.size(), false);
  for (size_t i = 0; i < output.nodes.size() && i < enode_of.size(); ++i)
    of_class[i] = enode_of[i] != eg::kNoId && t.egraph.find(enode_of[i]) == cls;
  std::string ops;
  std::unordered_set<std::string> said;
  for (size_t i = 0; i < output.nodes.size(); ++i) {
    bool reads = false;
    const auto check = [&](NodeId k) { reads = reads || of_class[k]; };
    for (const Value& v : output.nodes[i].args) v.for_each_node(check);
    for (const auto& kv : output.nodes[i].kwargs) kv.second.for_each_node(check);
    if (reads && !of_class[i] && said.insert(output.nodes[i].op).second)
      ops += (ops.empty() ? "" : ", ") + short_op(output.nodes[i].op);
  }
  return ops;
}

}  // namespace

std::vector<AttentionBlock> explain_attention(const Graph& input, TensorEGraph& t, const Graph& output,
                                              const std::vector<eg::Id>& enode_of, const AttentionFusionOptions& options) {
  // What the output computes, by e-class.
  std::unordered_set<eg::Id> computed;
  for (eg::Id e : enode_of)
    if (e != eg::kNoId) computed.insert(t.egraph.find(e));
  bool output_has_kernel = false;
  for (const Node& n : output.nodes) output_has_kernel |= is_attention_kernel(n.op);
  std::vector<std::vector<NodeId>> users(input.nodes.size());
  bool training = false;
  for (size_t i = 0; i < input.nodes.size(); ++i) {
    const Node& n = input.nodes[i];
    training |= n.op == "placeholder" && n.role == Role::Tangent;
    const auto add = [&](NodeId r) { users[r].push_back(static_cast<NodeId>(i)); };
    for (const Value& v : n.args) v.for_each_node(add);
    for (const auto& kv : n.kwargs) kv.second.for_each_node(add);
  }

  std::vector<AttentionBlock> out;
  for (size_t i = 0; i < input.nodes.size(); ++i) {
    const Node& n = input.nodes[i];
    const bool decomposed = is_decomposed_softmax(input, n);
    if ((!is_softmax_op(n.op) && !decomposed) || n.result != Node::Result::Tensor || n.tensor.shape.size() != 4) continue;
    AttentionBlock b;
    b.softmax = n.name;
    const eg::Id cls = t.class_of(static_cast<NodeId>(i));
    b.fused = output_has_kernel && !computed.count(cls);
    if (b.fused) {
      out.push_back(std::move(b));
      continue;
    }
    // The softmax's dim (a decomposed one reads its sum's).
    const Node& dim_node = decomposed ? input.nodes[*arg_node(n, 1)] : n;
    std::optional<int64_t> dim;
    if (dim_node.args.size() > 1 && dim_node.args[1].kind == Value::Kind::Int) dim = dim_node.args[1].i;
    if (dim_node.args.size() > 1 && dim_node.args[1].is_list() && dim_node.args[1].list.size() == 1 &&
        dim_node.args[1].list[0].kind == Value::Kind::Int)
      dim = dim_node.args[1].list[0].i;
    // Where the probabilities go: through layout ops, casts and dropout.
    std::optional<NodeId> values_matmul;
    std::string elsewhere;
    bool returned = false;
    bool dropout = false;  // the probabilities go through dropout on the way
    std::deque<NodeId> todo{static_cast<NodeId>(i)};
    std::unordered_set<NodeId> seen;
    while (!todo.empty() && seen.size() < 64) {
      const NodeId x = todo.front();
      todo.pop_front();
      if (!seen.insert(x).second) continue;
      for (NodeId u : users[x]) {
        const std::string& op = input.nodes[u].op;
        if (op == "output") returned = true;
        else if (is_matmul_op(op) && arg_node(input.nodes[u], 0) == x) values_matmul = values_matmul.value_or(u);
        else if (passes_probabilities(op)) {
          todo.push_back(u);
          dropout |= op == "aten.native_dropout.default" || multiplies_by_draws(input, input.nodes[u]);
        }
        // SDPA's math path guards the probabilities: where(all masked, 0, p).
        else if (op == "aten.where.self" && arg_node(input.nodes[u], 2) == x) todo.push_back(u);
        else if (elsewhere.empty() && op.find("backward") == std::string::npos) elsewhere = short_op(op);
      }
    }
    if (training && !options.training) {
      b.why = "a joint (training) graph, and training attention fusion is off (--no-training-attention)";
    } else if (dim && *dim != 3 && *dim != -1) {
      b.why = "softmax over dim " + std::to_string(*dim) + ", not the last: not attention's probabilities";
    } else if (returned) {
      b.why = "its probabilities are a graph output (the model returns the attention weights), so they must be computed";
    } else if (!values_matmul) {
      b.why = "its probabilities reach no matmul with the values" + (elsewhere.empty() ? std::string() : " (they go to " + elsewhere + ")");
    } else if (dropout && !options.fuse_dropout) {
      b.why = "its probabilities go through dropout, and the kernels draw their own mask (equal in distribution, "
              "not in value): opt-in, --fuse-dropout";
    } else if (decomposed && !class_has_softmax(t, cls)) {
      b.why = "a decomposed softmax the rules did not recompose";
    } else {
      bool kernel_in_egraph = false;
      // The product's class, or (a flattened bmm) its view's: an attention
      // kernel there, or a training kernel's output getitem(kernel, 0). The
      // other forms of a class holding one are the block's decomposed forms.
      std::vector<NodeId> products{*values_matmul};
      for (NodeId u : users[*values_matmul])
        if (op_has(input.nodes[u].op, OpFact::ReshapeByValue)) products.push_back(u);
      std::unordered_set<eg::Id> decomposed_forms;
      bool product_by_kernel = false;  // the output computes the product with the kernel
      for (NodeId product : products) {
        std::vector<eg::Id> others;
        bool here = false;
        for (eg::Id e : t.egraph.class_nodes(t.class_of(product))) {
          const std::string& op = t.lang.op_name(t.egraph.op(e));
          bool kernel = is_attention_kernel(op);
          if (op == "getitem" && !t.egraph.children(e).empty())
            for (eg::Id k : t.egraph.class_nodes(t.egraph.find(t.egraph.children(e)[0])))
              kernel |= is_attention_kernel(t.lang.op_name(t.egraph.op(k)));
          here |= kernel;
          if (!kernel) others.push_back(e);
          product_by_kernel |= kernel && std::find(enode_of.begin(), enode_of.end(), e) != enode_of.end();
        }
        kernel_in_egraph |= here;
        if (here) decomposed_forms.insert(others.begin(), others.end());
      }
      std::unordered_set<eg::Id> probabilities;
      for (eg::Id e : t.egraph.class_nodes(cls)) probabilities.insert(e);
      const std::string scores = describe(input, scores_of(input, n, decomposed), 3);
      if (product_by_kernel)
        b.why = "its kernels are in the output, but the output still computes its probabilities (read by " +
                readers_of_class(t, output, enode_of, cls) + ")";
      else if (const BiasedKernelTrial* w = weighed_for(options, t.egraph.find(cls)))
        b.why = weighed_because(*w);
      else if (kernel_in_egraph)
        b.why = "fused in the e-graph, but the extraction kept the decomposed block" +
                kept_decomposed_because(options, decomposed_forms, probabilities);
      else if (training && !options.training_bias && adds_bias(input, t, scores_of(input, n, decomposed)))
        b.why = "its scores add a mask (a bias) and the cuDNN kernels do not take the block (not 16-bit, its head "
                "dim or heads, or a mask written out per head and score: 0.92x measured, "
                "docs/results/attention_bias_forms.md), and the efficient kernels, which take any bias, are left out "
                "(--no-training-attention-bias; by default, --training-attention-bias, they are weighed by the graph "
                "as Inductor fuses it) (scores: " + scores + ")";
      else if (adds_wide_term_to_16_bit(input, t, scores_of(input, n, decomposed)))
        b.why = "its scores add a float32 term to 16-bit q·kᵀ (autocast) that the rules cannot show to be only zeros "
                "and masking values (a real-valued bias, e.g. ALiBi): the kernels would round it to 16 bits, beyond "
                "their accuracy (rules/mixed_precision.h; scores: " + scores + ")";
      else
        b.why = "no attention rule fuses scores written as " + scores;
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace sator::pipeline
