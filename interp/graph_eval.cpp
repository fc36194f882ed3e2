#include "interp/graph_eval.h"
#include "interp/rounding.h"

#include <functional>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <random>

#include "interp/chunked_eval.h"
#include "interp/op_args.h"
#include "ir/chunked_node.h"
#include "ir/infer_context.h"
#include "ir/op_table.h"
#include "ir/shape_prover.h"

namespace sator::interp {

namespace {

std::function<int64_t(const SymExpr&)> concretizer(const Graph& g, const SymbolValues& given) {
  SymbolValues values;
  for (const Symbol& s : g.symbols) values[s.name] = s.hint;
  for (const auto& [name, v] : given) values[name] = v;
  return [values, &g](const SymExpr& e) {
    const auto v = e.evaluate([&](const std::string& name) -> std::optional<int64_t> {
      const auto it = values.find(name);
      return it == values.end() ? std::nullopt : std::optional<int64_t>(it->second);
    });
    if (!v) throw InterpError(g.name + ": a size uses a symbol without a value");
    return *v;
  };
}

Shape concrete_shape(const std::vector<SymExpr>& shape, const std::function<int64_t(const SymExpr&)>& f) {
  Shape out;
  for (const SymExpr& d : shape) out.push_back(f(d));
  return out;
}

// A get_attr constant: its nested list of numbers, laid out row-major.
Tensor64 constant_tensor(const Node& n, const Shape& shape) {
  Tensor64 t = Tensor64::filled(shape, 0.0, n.tensor.dtype);
  if (!n.value || n.value->is_none()) throw InterpError("constant without data");
  if (n.value->kind == Value::Kind::Numbers) {
    const PackedNumbers& p = *n.value->numbers;
    if (p.size() != t.data.size()) throw InterpError("constant has the wrong number of elements");
    for (size_t k = 0; k < p.size(); ++k) t.data[k] = p.number(k);
    return t;
  }
  std::vector<double> flat;
  std::function<void(const Value&)> walk = [&](const Value& v) {
    if (v.is_list()) {
      for (const Value& x : v.list) walk(x);
    } else if (v.kind == Value::Kind::Int) {
      flat.push_back(static_cast<double>(v.i));
    } else if (v.kind == Value::Kind::Float) {
      flat.push_back(v.f);
    } else if (v.kind == Value::Kind::Bool) {
      flat.push_back(v.b ? 1.0 : 0.0);
    } else {
      throw InterpError("constant holds a non-number");
    }
  };
  walk(*n.value);
  if (flat.size() != t.data.size()) throw InterpError("constant has the wrong number of elements");
  t.data = std::move(flat);
  return t;
}

EvalValue structural(const Node& n, const std::vector<EvalValue>& values,
                     const std::function<int64_t(const SymExpr&)>& concrete) {
  if (n.op == "getitem") {
    const EvalValue& tuple = values[n.args.at(0).node];
    const auto index = static_cast<size_t>(n.args.at(1).i);
    if (tuple.kind != EvalValue::Kind::Tuple || index >= tuple.items.size())
      throw InterpError("getitem of something that is not a tuple of that length");
    return tuple.items[index];
  }
  // Symbolic-int arithmetic and sym_size: their recorded value is the
  // expression; evaluate it at the chosen symbol values.
  return EvalValue::of_number(static_cast<double>(concrete(n.symint)));
}

}  // namespace

std::vector<InputSpec> input_specs(const Graph& g, const SymbolValues& symbols) {
  const auto concrete = concretizer(g, symbols);
  std::vector<InputSpec> specs;
  for (const Node& n : g.nodes)
    if (n.op == "placeholder" && n.result == Node::Result::Tensor)
      specs.push_back({n.name, concrete_shape(n.tensor.shape, concrete), n.tensor.dtype});
  return specs;
}

// Whole models allocate and free weight-sized tensors by the hundred. glibc
// would map each from the kernel and unmap it on free, paying a page fault
// per 4 KiB every time; keeping freed memory in the heap makes it reusable.
namespace {
void keep_freed_memory() {
#ifdef __GLIBC__
  static const bool once = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)once;
#endif
}
// An op's result as its dtype stores it: each tensor rounded to the type the
// graph records for it.
void round_result(const Node& n, EvalValue& v) {
  if (v.kind == EvalValue::Kind::Tensor && n.result == Node::Result::Tensor) {
    round_tensor(v.tensor, n.tensor.dtype);
  } else if (v.kind == EvalValue::Kind::Tuple && n.result == Node::Result::Tuple) {
    for (size_t i = 0; i < v.items.size() && i < n.outputs.size(); ++i)
      if (v.items[i].kind == EvalValue::Kind::Tensor && n.outputs[i].kind == OutputSlot::Kind::Tensor)
        round_tensor(v.items[i].tensor, n.outputs[i].tensor.dtype);
  }
}
}  // namespace

std::vector<EvalValue> evaluate_graph(const Graph& g, const std::vector<Tensor64>& inputs,
                                      const SymbolValues& symbols, const EvalOptions& options) {
  keep_freed_memory();
  const auto concrete = concretizer(g, symbols);
  uint64_t draws = 0;
  const Node* current = nullptr;
  const UniformDraw uniform = [&](const Shape& shape) {
    const uint64_t key = options.random == EvalOptions::Random::ByDrawOrder
                             ? draws++
                             : std::hash<std::string>()(current->name);
    std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ULL + key);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Tensor64 t = Tensor64::filled(shape, 0.0);
    for (double& x : t.data) x = u(rng);
    return t;
  };
  const UniformDraw* random = options.random == EvalOptions::Random::Refuse ? nullptr : &uniform;
  ShapeProver prover(g.symbols);
  const bool rounded = options.precision == EvalOptions::Precision::Dtype;
  std::vector<EvalValue> values(g.nodes.size());
  // Each value is dropped after its last use: whole models fit in memory.
  std::vector<size_t> last_use(g.nodes.size(), 0);
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    auto mark = [&](NodeId used) { last_use[used] = std::max(last_use[used], id); };
    for (const Value& v : g.nodes[id].args) v.for_each_node(mark);
    for (const auto& kv : g.nodes[id].kwargs) kv.second.for_each_node(mark);
  }
  size_t next_input = 0;
  for (size_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    current = &n;
    try {
      if (n.op == "placeholder") {
        if (n.result == Node::Result::SymInt) {
          values[id] = EvalValue::of_number(static_cast<double>(concrete(n.symint)));
          continue;
        }
        if (next_input >= inputs.size()) throw InterpError("more tensor placeholders than inputs given");
        const Tensor64& in = inputs[next_input++];
        if (in.shape != concrete_shape(n.tensor.shape, concrete)) throw InterpError("input of the wrong shape");
        values[id] = EvalValue::of_tensor(cast_to(in, n.tensor.dtype));
        if (rounded) round_tensor(values[id].tensor, n.tensor.dtype);
      } else if (n.op == "get_attr") {
        values[id] = EvalValue::of_tensor(constant_tensor(n, concrete_shape(n.tensor.shape, concrete)));
      } else if (n.op == "output") {
        std::vector<EvalValue> out;
        for (const Value& v : n.args.at(0).list) out.push_back(v.is_node() ? values[v.node] : EvalValue{});
        return out;
      } else if (n.op == "getitem" || n.op.rfind("_operator.", 0) == 0 || n.op == "aten.sym_size.int") {
        values[id] = structural(n, values, concrete);
      } else if (n.op == kChunkedOp) {
        values[id] = evaluate_chunked(g, n, values, concrete, symbols, options);
      } else {
        const OpInfo* op = find_op(n.op);
        if (op && op->cls == OpClass::Random && !random)
          throw InterpError("a random op: random draws are not allowed in this run");
        const OpKernel kernel = find_kernel(n.op);
        if (!op || !kernel) throw InterpError("the interpreter has no kernel for " + n.op);
        InferContext ctx(g, n, *op, prover);
        values[id] = kernel(OpArgs(ctx, values, concrete, random));
        if (rounded) round_result(n, values[id]);
      }
      for (const Value& v : n.args)
        v.for_each_node([&](NodeId used) {
          if (last_use[used] == id) values[used] = EvalValue{};
        });
    } catch (const InterpError& e) {
      throw InterpError(g.name + ": node '" + n.name + "' (" + n.op + "): " + e.what());
    } catch (const ShapeError& e) {
      throw InterpError(g.name + ": node '" + n.name + "' (" + n.op + "): " + e.what());
    }
  }
  throw InterpError(g.name + ": no output node");
}

}  // namespace sator::interp
