#include <catch2/catch.hpp>

#include "ir/shape_prover.h"

using namespace sator;

namespace {
std::vector<Symbol> symbols() {
  return {{"s27", 512, 2, std::nullopt}, {"s52", 4, 2, std::nullopt}, {"s8", 3, 2, 64}};
}
SymExpr e(const char* t) { return parse_sym_expr(t); }
}  // namespace

TEST_CASE("canonical comparison settles polynomials without Z3", "[prover]") {
  ShapeProver p(symbols());
  CHECK(p.equal(e("s27*s52"), e("s52*s27")) == Truth::True);
  CHECK(p.equal(e("s27 + 1"), e("s27")) == Truth::False);
  CHECK(p.less_equal(e("s27"), e("s27 + 3")) == Truth::True);
  CHECK(p.divides(e("s27"), e("768*s27*s52")) == Truth::True);
  CHECK(p.divides(e("4"), e("10")) == Truth::False);
  CHECK(p.stats().z3_calls == 0);
  CHECK(p.stats().canonical == 5);
}

TEST_CASE("ranges decide what the canonical form cannot", "[prover]") {
  ShapeProver p(symbols());
  // s27 >= 2, so 2*s27 is never s27 and Max(1, s8) is s8.
  CHECK(p.equal(e("2*s27"), e("s27")) == Truth::False);
  CHECK(p.equal(e("Max(1, s8)"), e("s8")) == Truth::True);
  CHECK(p.equal(e("s27"), e("1")) == Truth::False);
  CHECK(p.less_equal(e("s8"), e("64")) == Truth::True);     // declared max
  CHECK(p.less_equal(e("s27"), e("1000")) == Truth::Unknown);  // unbounded
  CHECK(p.equal(e("s27"), e("s52")) == Truth::Unknown);
  CHECK(p.equal(e("(2*s27 + 1)//2"), e("s27")) == Truth::True);
  CHECK(p.divides(e("3"), e("Max(3*s27, 6)")) == Truth::True);  // s27 >= 2: the Max is 3*s27
  CHECK(p.divides(e("2"), e("2*s27 + 1")) == Truth::False);
  CHECK(p.stats().z3_calls > 0);
}

TEST_CASE("Z3 answers are cached", "[prover]") {
  ShapeProver p(symbols());
  REQUIRE(p.equal(e("Max(1, s8)"), e("s8")) == Truth::True);
  const auto calls = p.stats().z3_calls;
  REQUIRE(p.equal(e("Max(1, s8)"), e("s8")) == Truth::True);
  CHECK(p.stats().z3_calls == calls);
  CHECK(p.stats().cache_hits == 1);
  CHECK(p.stats().queries == 2);
}
