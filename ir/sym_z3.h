// Symbolic sizes as Z3 integer terms: shared by the ShapeProver and by
// check-rules' index proofs. Include only where Z3 is used (z3++.h is heavy).
#pragma once

#include <map>
#include <string>

#include <z3++.h>

#include "ir/sym_expr.h"

namespace sator {

class SymToZ3 {
 public:
  explicit SymToZ3(z3::context& ctx) : ctx_(ctx) {}

  // The integer constant named after a symbol (one per name).
  z3::expr var(const std::string& name);
  // Floor division and modulo agree with Z3's (Euclidean) div/mod whenever
  // the divisor is positive, which sizes are.
  z3::expr translate(const SymExpr& e);
  const std::map<std::string, z3::expr>& vars() const { return vars_; }

 private:
  z3::expr atom(AtomId id);

  z3::context& ctx_;
  std::map<std::string, z3::expr> vars_;
};

}  // namespace sator
