#include "check/index_proof.h"

#include <optional>
#include <sstream>

#include <z3++.h>

#include "ir/op_table.h"
#include "ir/sym_z3.h"

namespace sator::check {

namespace {

// Elementwise ops of one tensor that the layout rules move layout ops through
// (rules/layout_rules.cpp): index-transparent, compared by name and arguments.

struct NotAnIndexMap {
  std::string why;
};

std::string value_text(const Value& v) {
  std::ostringstream s;
  switch (v.kind) {
    case Value::Kind::Int: s << v.i; break;
    case Value::Kind::Float: s << v.f; break;
    case Value::Kind::Bool: s << (v.b ? "True" : "False"); break;
    case Value::Kind::DType: s << dtype_name(v.dtype); break;
    case Value::Kind::None: s << "None"; break;
    case Value::Kind::Node: s << "%"; break;
    default: s << "?"; break;
  }
  return s.str();
}

int64_t wrap(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

// One side: from its output index back to a placeholder's index.
struct Trace {
  const Graph& g;
  z3::context& ctx;
  SymToZ3& terms;
  std::vector<std::string> elementwise;  // outermost first, with their arguments

  const std::vector<SymExpr>& shape_of(NodeId n) const {
    const TensorType* t = tensor_of(g, n);
    if (!t) throw NotAnIndexMap{g.nodes[n].name + " is not a tensor"};
    return t->shape;
  }

  // Returns the placeholder reached; `idx` becomes its index.
  NodeId walk(NodeId n, std::vector<z3::expr>& idx) {
    // Consecutive reshapes compose into one (flattening what was just
    // unflattened over the same shape gives the position back).
    bool in_chain = false;
    std::vector<z3::expr> chain_idx;
    std::vector<SymExpr> chain_out;
    while (true) {
      const Node& node = g.nodes[n];
      if (node.op == "placeholder") return n;
      if (node.args.empty() || !node.args[0].is_node()) throw NotAnIndexMap{node.op + " has no tensor input"};
      const NodeId x = node.args[0].node;
      const auto& in = shape_of(x);
      const auto& out = shape_of(n);
      const std::string& op = node.op;
      if (op_has(op, OpFact::Valuewise)) {
        std::string sig = op + "(";
        for (size_t i = 1; i < node.args.size(); ++i) {
          if (node.args[i].is_node()) throw NotAnIndexMap{op + " of two tensors"};
          sig += value_text(node.args[i]) + ",";
        }
        for (const auto& [k, v] : node.kwargs) sig += k + "=" + value_text(v) + ",";
        elementwise.push_back(sig + ")");
      } else if (op_has(op, OpFact::SameValue)) {
      } else if (op == "aten.permute.default") {
        std::vector<z3::expr> j(in.size(), ctx.int_val(0));
        const auto& dims = node.args.at(1).list;
        for (size_t k = 0; k < dims.size(); ++k) j[static_cast<size_t>(wrap(dims[k].i, in.size()))] = idx[k];
        idx = j;
      } else if (op == "aten.transpose.int") {
        const auto a = static_cast<size_t>(wrap(node.args.at(1).i, in.size()));
        const auto b = static_cast<size_t>(wrap(node.args.at(2).i, in.size()));
        // A rank-0 tensor has one dim to name (PyTorch wraps as for rank 1):
        // its transpose is itself.
        if (a < idx.size() && b < idx.size()) std::swap(idx[a], idx[b]);
      } else if (op == "aten.t.default") {
        if (idx.size() == 2) std::swap(idx[0], idx[1]);
      } else if (op == "aten.expand.default") {
        std::vector<z3::expr> j;
        const size_t lead = out.size() - in.size();
        for (size_t k = 0; k < in.size(); ++k)
          j.push_back(in[k] == SymExpr(1) ? ctx.int_val(0) : idx[lead + k]);
        idx = j;
      } else if (op == "aten.slice.Tensor") {
        const auto dim = static_cast<size_t>(wrap(node.args.size() > 1 ? node.args[1].i : 0, in.size()));
        int64_t start = node.args.size() > 2 && !node.args[2].is_none() ? node.args[2].i : 0;
        const int64_t step = node.args.size() > 4 ? node.args[4].i : 1;
        z3::expr s = ctx.int_val(start);
        if (start < 0) s = s + terms.translate(in[dim]);  // a negative start counts from the end
        idx[dim] = s + ctx.int_val(step) * idx[dim];
      } else if (op == "aten.select.int") {
        const auto dim = static_cast<size_t>(wrap(node.args.at(1).i, in.size()));
        z3::expr k = ctx.int_val(node.args.at(2).i);
        if (node.args.at(2).i < 0) k = k + terms.translate(in[dim]);
        idx.insert(idx.begin() + static_cast<std::ptrdiff_t>(dim), k);
      } else if (op_has(op, OpFact::ReshapeByValue)) {
        // A chain of reshapes is one reshape from the chain's output shape.
        if (!in_chain) {
          chain_idx = idx;
          chain_out = out;
          in_chain = true;
        }
        if (!op_has(g.nodes[x].op, OpFact::ReshapeByValue)) {
          idx = reshape_map(chain_idx, chain_out, in);
          in_chain = false;
        }
      } else {
        throw NotAnIndexMap{op + " is not an index remapping"};
      }
      n = x;
    }
  }

  // Index of `in` read by index `idx` of `out` under a row-major reshape.
  // Dims of size 1 carry index 0; leading and trailing dims the shapes share
  // map straight through; only the rest is flattened and unflattened (which
  // needs / and % by sizes, nonlinear when they are symbolic).
  std::vector<z3::expr> reshape_map(const std::vector<z3::expr>& idx, const std::vector<SymExpr>& out,
                                    const std::vector<SymExpr>& in) {
    std::vector<z3::expr> oi;
    std::vector<SymExpr> os, is;
    for (size_t k = 0; k < out.size(); ++k)
      if (!(out[k] == SymExpr(1))) oi.push_back(idx[k]), os.push_back(out[k]);
    for (const SymExpr& d : in)
      if (!(d == SymExpr(1))) is.push_back(d);
    size_t pre = 0;
    while (pre < os.size() && pre < is.size() && os[pre] == is[pre]) ++pre;
    size_t suf = 0;
    while (suf < os.size() - pre && suf < is.size() - pre && os[os.size() - 1 - suf] == is[is.size() - 1 - suf]) ++suf;
    std::vector<z3::expr> ji(oi.begin(), oi.begin() + static_cast<std::ptrdiff_t>(pre));
    const std::vector<z3::expr> mid_idx(oi.begin() + static_cast<std::ptrdiff_t>(pre), oi.end() - static_cast<std::ptrdiff_t>(suf));
    const std::vector<SymExpr> mid_out(os.begin() + static_cast<std::ptrdiff_t>(pre), os.end() - static_cast<std::ptrdiff_t>(suf));
    const std::vector<SymExpr> mid_in(is.begin() + static_cast<std::ptrdiff_t>(pre), is.end() - static_cast<std::ptrdiff_t>(suf));
    for (const z3::expr& e : delinearize(linearize(mid_idx, mid_out), mid_in)) ji.push_back(e);
    ji.insert(ji.end(), oi.end() - static_cast<std::ptrdiff_t>(suf), oi.end());
    std::vector<z3::expr> j;
    size_t next = 0;
    for (const SymExpr& d : in) j.push_back(d == SymExpr(1) ? ctx.int_val(0) : ji[next++]);
    return j;
  }
  // Row-major position of `idx` in `shape` (dims of size 1 contribute nothing).
  z3::expr linearize(const std::vector<z3::expr>& idx, const std::vector<SymExpr>& shape) {
    z3::expr f = ctx.int_val(0);
    for (size_t k = 0; k < idx.size(); ++k)
      if (!(shape[k] == SymExpr(1))) f = f * terms.translate(shape[k]) + idx[k];
    return f;
  }
  std::vector<z3::expr> delinearize(z3::expr f, const std::vector<SymExpr>& shape) {
    std::vector<z3::expr> j(shape.size(), ctx.int_val(0));
    for (size_t m = shape.size(); m-- > 0;) {
      if (shape[m] == SymExpr(1)) continue;
      const z3::expr size = terms.translate(shape[m]);
      j[m] = z3::mod(f, size);
      f = f / size;
    }
    return j;
  }
};

std::string model_text(const z3::model& m, const std::map<std::string, z3::expr>& vars,
                       const std::vector<z3::expr>& out_idx) {
  std::ostringstream s;
  for (const auto& [name, v] : vars) s << name << "=" << m.eval(v, true) << " ";
  s << "at output index [";
  for (size_t k = 0; k < out_idx.size(); ++k) s << (k ? ", " : "") << m.eval(out_idx[k], true);
  s << "]";
  return s.str();
}

}  // namespace

IndexProof prove_same_indices(const Graph& lhs, const Graph& rhs, unsigned timeout_ms) {
  z3::context ctx;
  SymToZ3 terms(ctx);
  z3::solver solver(ctx);
  z3::params p(ctx);
  p.set("timeout", timeout_ms);
  solver.set(p);
  for (const Symbol& s : lhs.symbols) {
    solver.add(terms.var(s.name) >= ctx.int_val(static_cast<int64_t>(s.min.value_or(0))));
    if (s.max) solver.add(terms.var(s.name) <= ctx.int_val(static_cast<int64_t>(*s.max)));
  }
  const NodeId lout = lhs.nodes.back().args.at(0).list.at(0).node;
  const NodeId rout = rhs.nodes.back().args.at(0).list.at(0).node;
  const TensorType* type = tensor_of(lhs, lout);
  if (!type) return {IndexProof::Status::NotIndexMap, "the output is not a tensor"};
  std::vector<z3::expr> out_idx;
  for (size_t k = 0; k < type->shape.size(); ++k) {
    std::string name = "i";
    name += std::to_string(k);
    out_idx.push_back(ctx.int_const(name.c_str()));
    solver.add(out_idx[k] >= 0 && out_idx[k] < terms.translate(type->shape[k]));
  }
  Trace left{lhs, ctx, terms, {}}, right{rhs, ctx, terms, {}};
  std::vector<z3::expr> li = out_idx, ri = out_idx;
  NodeId lin = 0, rin = 0;
  try {
    lin = left.walk(lout, li);
    rin = right.walk(rout, ri);
  } catch (const NotAnIndexMap& e) {
    return {IndexProof::Status::NotIndexMap, e.why};
  }
  if (lhs.nodes[lin].name != rhs.nodes[rin].name)
    return {IndexProof::Status::Refuted, "the sides read different inputs: " + lhs.nodes[lin].name + " and " + rhs.nodes[rin].name};
  if (left.elementwise != right.elementwise) return {IndexProof::Status::Refuted, "the sides apply different elementwise ops"};
  if (li.size() != ri.size()) return {IndexProof::Status::Refuted, "the sides index inputs of different ranks"};
  z3::expr differ = ctx.bool_val(false);
  for (size_t m = 0; m < li.size(); ++m) differ = differ || li[m] != ri[m];
  solver.add(differ);
  switch (solver.check()) {
    case z3::unsat: return {IndexProof::Status::Proved, ""};
    case z3::sat: return {IndexProof::Status::Refuted, model_text(solver.get_model(), terms.vars(), out_idx)};
    default: break;
  }
  return {IndexProof::Status::Unknown, "Z3: " + solver.reason_unknown()};
}

}  // namespace sator::check
