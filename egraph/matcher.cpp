#include "egraph/matcher.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace sator::eg {

uint32_t Program::ground_index(const Pattern& p, uint32_t node) {
  grounds_.push_back(Ground{&p, node});
  return static_cast<uint32_t>(grounds_.size() - 1);
}

// Binds the pattern breadth-first from its root register; variables get the
// register where they first appear, later occurrences become Compares, and
// ground subterms become Lookups.
void Program::compile_root(const Pattern& p, std::vector<int64_t>& var_reg, uint32_t& next_reg) {
  const PatternNode& root = p.root_node();
  const uint32_t root_reg = next_reg++;
  if (root.is_var) {
    code_.push_back(Instr{Kind::Scan, false, 0, root_reg, 0, kNoId, 0});
    if (var_reg[root.var] < 0) var_reg[root.var] = root_reg;
    else code_.push_back(Instr{Kind::Compare, false, 0, root_reg, static_cast<uint32_t>(var_reg[root.var]), 0, 0});
    return;
  }
  code_.push_back(Instr{Kind::Scan, false, 0, root_reg, 0, root.term.op, 0});
  std::deque<std::pair<uint32_t, uint32_t>> todo{{p.root(), root_reg}};  // (pattern node, register)
  while (!todo.empty()) {
    auto [pn, reg] = todo.front();
    todo.pop_front();
    const PatternNode& n = p.nodes()[pn];
    const uint32_t out = next_reg;
    next_reg += static_cast<uint32_t>(n.children.size());
    Instr bind{Kind::Bind, n.term.any_attr, static_cast<uint16_t>(n.children.size()), reg, out, n.term.op, n.term.attr};
    // A first child that is an already-bound variable narrows the node range
    // by binary search (nodes are sorted by children too), instead of a
    // Compare after enumerating every node: joins like (+ (* ?x ?y) (* ?x ?z))
    // become a lookup rather than a product.
    size_t first = 0;
    if (!n.children.empty() && !n.term.any_attr) {
      const PatternNode& c0 = p.nodes()[n.children[0]];
      if (c0.is_var && var_reg[c0.var] >= 0) {
        bind.eq = static_cast<uint32_t>(var_reg[c0.var]);
        first = 1;
      }
    }
    bind.root = code_.size() == 1 && pn == p.root();
    code_.push_back(bind);
    for (size_t i = first; i < n.children.size(); ++i) {
      const uint32_t r = out + static_cast<uint32_t>(i);
      const PatternNode& c = p.nodes()[n.children[i]];
      if (c.is_var) {
        if (var_reg[c.var] < 0) var_reg[c.var] = r;
        else code_.push_back(Instr{Kind::Compare, false, 0, r, static_cast<uint32_t>(var_reg[c.var]), 0, 0});
      } else if (c.ground && !c.term.any_attr) {
        code_.push_back(Instr{Kind::Lookup, false, 0, r, ground_index(p, n.children[i]), 0, 0});
      } else {
        todo.emplace_back(n.children[i], r);
      }
    }
  }
}

Program Program::compile(const std::vector<const Pattern*>& roots, uint32_t num_vars) {
  if (roots.empty()) throw std::invalid_argument("a program needs at least one pattern");
  Program prog;
  prog.num_vars_ = num_vars;
  std::vector<int64_t> var_reg(num_vars, -1);
  uint32_t next_reg = 0;
  std::vector<uint32_t> root_reg;
  for (const Pattern* p : roots) {
    root_reg.push_back(next_reg);  // compile_root gives the root the next register
    prog.compile_root(*p, var_reg, next_reg);
  }
  prog.code_.push_back(Instr{Kind::Yield, false, 0, 0, 0, 0, 0});
  prog.num_regs_ = next_reg;
  for (uint32_t v = 0; v < num_vars; ++v) {
    if (var_reg[v] < 0) throw std::invalid_argument("pattern variable not bound by any pattern");
    prog.var_reg_.push_back(static_cast<uint32_t>(var_reg[v]));
  }
  // A multi-pattern's later roots: their classes follow the variables.
  for (size_t j = 1; j < root_reg.size(); ++j) prog.var_reg_.push_back(root_reg[j]);
  prog.num_vars_ = static_cast<uint32_t>(prog.var_reg_.size());
  return prog;
}

// One execution: registers, ground classes, output.
struct Program::Run {
  const Program& prog;
  const EGraph& g;
  Matches& out;
  size_t limit;
  std::vector<Id> regs;
  std::vector<Id> ground;
  Id first_class = kNoId;  // search_class: the only candidate of the first Scan
  Id root_node = kNoId;

  bool full() const { return out.size() >= limit; }

  // Class of a ground pattern subterm, or kNoId when it is not in the e-graph.
  Id ground_class(const Pattern& p, uint32_t node) {
    const PatternNode& n = p.nodes()[node];
    std::vector<Id> kids;
    for (uint32_t c : n.children) {
      const Id k = ground_class(p, c);
      if (k == kNoId) return kNoId;
      kids.push_back(k);
    }
    auto id = g.lookup(n.term.op, n.term.attr, kids);
    return id ? *id : kNoId;
  }

  void step(size_t pc) {
    const Instr& in = prog.code_[pc];
    switch (in.kind) {
      case Kind::Scan: {
        if (pc == 0 && first_class != kNoId) {
          regs[in.a] = first_class;
          step(pc + 1);
          return;
        }
        const std::span<const Id> candidates = in.op == kNoId ? g.class_ids() : g.classes_with_op(in.op);
        for (Id c : candidates) {
          regs[in.a] = c;
          step(pc + 1);
          if (full()) return;
        }
        return;
      }
      case Kind::Bind: {
        const std::span<const Id> nodes = g.class_nodes(regs[in.a]);
        const NodeStore& store = g.nodes();
        // Class nodes are sorted by (op, arity, attr, children): the nodes
        // this instruction wants form one contiguous range.
        const uint32_t oa = NodeStore::op_arity_key(in.op, in.arity);
        const Id eq = in.eq == kNoReg ? 0 : regs[in.eq];
        auto before = [&](Id n) {  // n sorts before the wanted range
          if (store.op_arity(n) != oa) return store.op_arity(n) < oa;
          if (in.any_attr) return false;
          if (store.attr(n) != in.attr) return store.attr(n) < in.attr;
          return in.eq != kNoReg && store.first_child(n) < eq;
        };
        auto inside = [&](Id n) {
          return store.op_arity(n) == oa && (in.any_attr || store.attr(n) == in.attr) &&
                 (in.eq == kNoReg || store.first_child(n) == eq);
        };
        auto it = nodes.begin();
        if (nodes.size() > 8) it = std::partition_point(nodes.begin(), nodes.end(), before);
        else while (it != nodes.end() && before(*it)) ++it;
        for (; it != nodes.end() && inside(*it); ++it) {
          if (in.root) root_node = *it;
          const std::span<const Id> kids = store.children(*it);
          std::copy(kids.begin(), kids.end(), regs.begin() + in.b);
          step(pc + 1);
          if (full()) return;
        }
        return;
      }
      case Kind::Compare:
        if (regs[in.a] == regs[in.b]) step(pc + 1);
        return;
      case Kind::Lookup:
        if (regs[in.a] == ground[in.b]) step(pc + 1);
        return;
      case Kind::Yield: {
        out.classes.push_back(regs[0]);
        out.roots.push_back(root_node);
        Id* dst = out.substs.grow(prog.var_reg_.size());
        for (uint32_t r : prog.var_reg_) *dst++ = regs[r];
        return;
      }
    }
  }

  void go() {
    out.num_vars = prog.num_vars_;
    regs.assign(prog.num_regs_, kNoId);
    for (const Ground& gr : prog.grounds_) {
      ground.push_back(ground_class(*gr.pattern, gr.node));
      if (ground.back() == kNoId) return;  // a ground subterm that does not exist cannot match
    }
    step(0);
  }
};

void Program::search(const EGraph& g, Matches& out, size_t limit) const {
  Run run{*this, g, out, limit, {}, {}, kNoId};
  run.go();
}

void Program::search_class(const EGraph& g, Id eclass, Matches& out, size_t limit) const {
  Run run{*this, g, out, limit, {}, {}, g.find(eclass)};
  run.go();
}

}  // namespace sator::eg

