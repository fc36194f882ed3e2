// E-matching compiled to a small machine (egg's design, ematching paper
// "Efficient E-matching for SMT solvers"): one or more patterns become a flat
// program of Scan / Bind / Compare / Lookup instructions over registers that
// hold class ids, run by backtracking over the class node lists (which
// rebuild keeps sorted by operator, so Bind finds its nodes by binary search).
// Ground subterms are looked up in the hashcons once per search instead of
// being matched node by node.
#pragma once

#include <span>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/id_buffer.h"
#include "egraph/pattern.h"

namespace sator::eg {

// Matches, flat: match i has root class classes[i] and variable values
// substs[i * num_vars ...].
struct Matches {
  uint32_t num_vars = 0;
  IdBuffer classes;
  IdBuffer roots;  // the e-node the first pattern's root matched (kNoId for a variable root)
  IdBuffer substs;

  size_t size() const { return classes.size(); }
  bool empty() const { return classes.empty(); }
  const Id* subst(size_t i) const { return substs.data() + i * num_vars; }
  void clear() {
    classes.clear();
    roots.clear();
    substs.clear();
  }
};

class Program {
 public:
  // A program matching all `roots` at once (a multi-pattern when more than
  // one), sharing variables by index; the first root's class is the match's.
  // Each match's substitution holds the `num_vars` variables, then the class
  // of each later root (a multi-pattern rewrites those classes too).
  static Program compile(const std::vector<const Pattern*>& roots, uint32_t num_vars);

  // All matches in the e-graph (which must be rebuilt), at most `limit`.
  void search(const EGraph& g, Matches& out, size_t limit = SIZE_MAX) const;
  // Matches whose first root is class `eclass`.
  void search_class(const EGraph& g, Id eclass, Matches& out, size_t limit = SIZE_MAX) const;
  size_t num_instructions() const { return code_.size(); }

 private:
  enum class Kind : uint8_t { Scan, Bind, Compare, Lookup, Yield };
  struct Instr {
    Kind kind;
    bool any_attr = false;
    uint16_t arity = 0;
    uint32_t a = 0;    // Scan/Bind/Lookup: the register read or written; Compare: first register
    uint32_t b = 0;    // Bind: first output register; Compare: second register; Lookup: ground term index
    OpId op = 0;       // Scan (kNoId: every class) / Bind
    AttrId attr = 0;
    uint32_t eq = kNoReg;  // Bind: the first child must equal this register
    bool root = false;     // Bind of the first pattern's root: records the node
  };
  static constexpr uint32_t kNoReg = ~0u;
  struct Ground {
    const Pattern* pattern;
    uint32_t node;
  };
  struct Run;

  void compile_root(const Pattern& p, std::vector<int64_t>& var_reg, uint32_t& next_reg);
  uint32_t ground_index(const Pattern& p, uint32_t node);

  std::vector<Instr> code_;
  std::vector<Ground> grounds_;
  std::vector<uint32_t> var_reg_;  // register holding each variable
  uint32_t num_regs_ = 0;
  uint32_t num_vars_ = 0;
};

}  // namespace sator::eg
