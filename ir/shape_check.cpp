#include "ir/shape_check.h"

#include <algorithm>

#include "ir/chunked_node.h"
#include "ir/graph_io.h"
#include "ir/infer_context.h"
#include "ir/op_table.h"

namespace sator {

namespace {

std::string describe_result(const Node& n) {
  switch (n.result) {
    case Node::Result::None: return "no result (no \"shape\", \"outputs\" or \"symint\")";
    case Node::Result::Tensor: return "a tensor";
    case Node::Result::Tuple: return "a tuple";
    case Node::Result::SymInt: return "a symbolic int";
  }
  return "?";
}

// Empty when `recorded` agrees with `inferred`, else what differs.
std::string compare_tensor(ShapeProver& prover, const TensorType& recorded, const InferredSlot& inferred) {
  if (recorded.dtype != inferred.dtype)
    return "recorded dtype " + std::string(dtype_name(recorded.dtype)) + " contradicts the op's " +
           std::string(dtype_name(inferred.dtype));
  bool same = recorded.shape.size() == inferred.shape.size();
  for (size_t i = 0; same && i < recorded.shape.size(); ++i)
    same = prover.equal(recorded.shape[i], inferred.shape[i]) == Truth::True;
  if (!same)
    return "recorded shape " + shape_text(recorded.shape) + " contradicts the op's " + shape_text(inferred.shape);
  return {};
}

std::string compare(ShapeProver& prover, const Node& n, const Inferred& inf) {
  if (n.result != inf.result) {
    Node expected;
    expected.result = inf.result;
    return "records " + describe_result(n) + " but the op produces " + describe_result(expected);
  }
  switch (inf.result) {
    case Node::Result::Tensor: return compare_tensor(prover, n.tensor, inf.slots[0]);
    case Node::Result::SymInt:
      if (prover.equal(n.symint, inf.symint) != Truth::True)
        return "recorded value " + n.symint.to_string() + " contradicts the op's " + inf.symint.to_string();
      return {};
    case Node::Result::Tuple: {
      if (n.outputs.size() != inf.slots.size())
        return "records " + std::to_string(n.outputs.size()) + " outputs but the op produces " +
               std::to_string(inf.slots.size());
      for (size_t i = 0; i < inf.slots.size(); ++i) {
        const OutputSlot& rec = n.outputs[i];
        const InferredSlot& want = inf.slots[i];
        const std::string where = "output #" + std::to_string(i) + ": ";
        // A scalar element may go unrecorded (Inductor's passes drop it): null is fine there.
        if (want.kind == InferredSlot::Kind::Scalar && rec.kind == OutputSlot::Kind::None) continue;
        if (static_cast<int>(rec.kind) != static_cast<int>(want.kind))
          return where + "recorded and inferred kinds differ (tensor / scalar / None)";
        if (want.kind == InferredSlot::Kind::Tensor) {
          if (auto m = compare_tensor(prover, rec.tensor, want); !m.empty()) return where + m;
        } else if (want.kind == InferredSlot::Kind::Scalar) {
          const SymExpr value = rec.scalar.kind == Value::Kind::Int   ? SymExpr(rec.scalar.i)
                                : rec.scalar.kind == Value::Kind::Sym ? rec.scalar.sym
                                                                      : SymExpr(-1);
          if (prover.equal(value, want.scalar) != Truth::True)
            return where + "recorded scalar contradicts the op's " + want.scalar.to_string();
        }
      }
      return {};
    }
    case Node::Result::None: return {};
  }
  return {};
}

}  // namespace

ShapeCheckReport check_shapes(const Graph& g, ShapeProver& prover) {
  ShapeCheckReport report;
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == kChunkedOp) {
      ++report.checked;
      if (auto m = check_chunked_node(g, id); !m.empty()) report.issues.push_back({id, m});
      continue;
    }
    const OpInfo* op = find_op(n.op);
    auto opaque = [&] {
      ++report.opaque;
      if (std::find(report.opaque_ops.begin(), report.opaque_ops.end(), n.op) == report.opaque_ops.end())
        report.opaque_ops.push_back(n.op);
    };
    if (!op || !op->shape_fn) {
      if (n.op != "placeholder" && n.op != "output" && n.op != "get_attr") opaque();
      continue;
    }
    try {
      InferContext ctx(g, n, *op, prover);
      Inferred inf = op->shape_fn(ctx);
      ++report.checked;
      if (auto m = compare(prover, n, inf); !m.empty()) report.issues.push_back({id, m});
    } catch (const OpaqueResult&) {
      opaque();
    } catch (const ShapeError& e) {
      report.issues.push_back({id, e.what()});
    } catch (const SymOverflow& e) {
      report.issues.push_back({id, std::string("absurd sizes: ") + e.what()});
    }
  }
  return report;
}

void require_consistent_shapes(const Graph& g, const ShapeCheckReport& report, const std::string& file) {
  if (report.issues.empty()) return;
  const ShapeIssue& first = report.issues.front();
  const std::string more =
      report.issues.size() > 1 ? " (and " + std::to_string(report.issues.size() - 1) + " more)" : "";
  throw GraphError(file, g.nodes[first.node].name, first.message + more);
}

Graph load_graph(const std::string& path) {
  Graph g = read_graph_file(path);
  ShapeProver prover(g.symbols);
  require_consistent_shapes(g, check_shapes(g, prover), path);
  return g;
}

}  // namespace sator
