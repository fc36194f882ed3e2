// Decides facts about symbolic sizes under the symbols' declared ranges.
//
// Canonical comparison first (SymExpr's normal form settles most questions);
// only what that cannot settle goes to Z3, with the ranges as assumptions,
// one solver per prover reused with push/pop. Answers are cached.
//
// "True" means the fact holds for every valid assignment of the symbols,
// "False" that it holds for none, "Unknown" anything else (including a Z3
// timeout): callers treat Unknown as "do not rely on it".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/sym_expr.h"

namespace sator {

enum class Truth : uint8_t { True, False, Unknown };
const char* truth_name(Truth t);

class ShapeProver {
 public:
  struct Stats {
    uint64_t queries = 0;     // all questions asked
    uint64_t canonical = 0;   // settled by the canonical form
    uint64_t cache_hits = 0;  // settled by an earlier Z3 answer
    uint64_t z3_calls = 0;    // solver checks run
  };

  explicit ShapeProver(const std::vector<Symbol>& symbols, unsigned z3_timeout_ms = 500);
  ~ShapeProver();
  ShapeProver(const ShapeProver&) = delete;
  ShapeProver& operator=(const ShapeProver&) = delete;

  Truth equal(const SymExpr& a, const SymExpr& b);
  Truth less_equal(const SymExpr& a, const SymExpr& b);
  Truth divides(const SymExpr& divisor, const SymExpr& n);

  // Convenience: provably equal / provably less-or-equal.
  bool is_equal(const SymExpr& a, const SymExpr& b) { return equal(a, b) == Truth::True; }
  bool is_le(const SymExpr& a, const SymExpr& b) { return less_equal(a, b) == Truth::True; }

  // Symbol values (within the declared ranges) for which a != b, if Z3
  // finds any: what check-rules prints when a shape proof fails.
  std::optional<std::map<std::string, int64_t>> counterexample(const SymExpr& a, const SymExpr& b);

  const Stats& stats() const { return stats_; }

 private:
  struct Z3State;
  enum class Query : uint8_t { Equal, LessEqual, Divides };
  Truth ask_z3(Query q, const SymExpr& a, const SymExpr& b);
  Z3State& z3();  // created on first use: most graphs never need the solver

  std::vector<Symbol> symbols_;
  unsigned timeout_ms_;
  std::unique_ptr<Z3State> z3_;
  Stats stats_;
};

}  // namespace sator
