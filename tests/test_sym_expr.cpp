#include <catch2/catch.hpp>

#include "ir/sym_expr.h"

using sator::SymExpr;
using sator::parse_sym_expr;

TEST_CASE("canonical form makes equal polynomials identical", "[sym]") {
  CHECK(parse_sym_expr("s72*(s55 + s70)") == parse_sym_expr("s70*s72 + s55*s72"));
  CHECK(parse_sym_expr("8*s27**2") == parse_sym_expr("s27*8*s27"));
  CHECK(parse_sym_expr("s27 - s27") == SymExpr(0));
  CHECK(parse_sym_expr("2*(s3 + 1) - 2") == parse_sym_expr("s3*2"));
  CHECK(parse_sym_expr("s27*s52") != parse_sym_expr("s27*s27"));
  CHECK(parse_sym_expr("-s55") == -SymExpr::symbol("s55"));
}

TEST_CASE("Python precedence: ** above unary minus above * // %", "[sym]") {
  CHECK(parse_sym_expr("-2**2") == SymExpr(-4));
  CHECK(parse_sym_expr("2*3**2") == SymExpr(18));
  CHECK(parse_sym_expr("7//2*2") == SymExpr(6));
  CHECK(parse_sym_expr("-7//2") == SymExpr(-4));  // floor, not truncation
  CHECK(parse_sym_expr("-7 % 3") == SymExpr(2));
  CHECK(parse_sym_expr("1 + 2*3 - 4") == SymExpr(3));
}

TEST_CASE("opaque atoms: floor division, modulo, Max, Min", "[sym]") {
  auto s = SymExpr::symbol("s8");
  CHECK(parse_sym_expr("Max(1, s8)") == parse_sym_expr("Max(s8, 1)"));  // commutative
  CHECK(parse_sym_expr("Max(1, s8)") != s);
  CHECK(parse_sym_expr("(4*s8)//4") == s);     // exact division folds
  CHECK(parse_sym_expr("Mod(4*s8, 2)") == SymExpr(0));
  CHECK(parse_sym_expr("(s8 + 1)//2") != parse_sym_expr("(s8 + 2)//2"));
  CHECK(parse_sym_expr("Max(3, 5)") == SymExpr(5));
  CHECK(parse_sym_expr("FloorDiv(s8, 1)") == s);
}

TEST_CASE("printing round-trips through the parser", "[sym]") {
  for (const char* text : {"s27", "768*s27", "s27*s52", "12*s27**2", "s72*(s55 + s70)", "-s55", "s38 + 1",
                           "3*Max(1, s8)", "(s3 + 1)//2", "s3//(2*s1)", "(2*s3)//s1 + 1", "Mod(s3, 4) - 7", "0", "-12"}) {
    SymExpr e = parse_sym_expr(text);
    INFO(text << " printed as " << e.to_string());
    CHECK(parse_sym_expr(e.to_string()) == e);
  }
  CHECK(parse_sym_expr("s52*s27").to_string() == "s27*s52");
  CHECK(parse_sym_expr("1 + 8*s27**2 - s27").to_string() == "8*s27**2 - s27 + 1");
}

TEST_CASE("exact division", "[sym]") {
  auto e = parse_sym_expr("768*s27*s52");
  REQUIRE(e.exact_div(parse_sym_expr("s52")));
  CHECK(*e.exact_div(parse_sym_expr("s52")) == parse_sym_expr("768*s27"));
  CHECK(*e.exact_div(SymExpr(768)) == parse_sym_expr("s27*s52"));
  CHECK_FALSE(e.exact_div(SymExpr(7)));
  CHECK_FALSE(e.exact_div(parse_sym_expr("s3")));
  CHECK(*parse_sym_expr("4*s1 + 4*s2").exact_div(parse_sym_expr("s1 + s2")) == SymExpr(4));
  CHECK_FALSE(parse_sym_expr("s1 + 1").exact_div(SymExpr(0)));
}

TEST_CASE("evaluation under hints", "[sym]") {
  auto hint = [](const std::string& n) -> std::optional<int64_t> {
    if (n == "a") return 5;
    if (n == "b") return 3;
    return std::nullopt;
  };
  CHECK(*parse_sym_expr("a*b + (a//b) + Mod(a, b) + Max(a, b)").evaluate(hint) == 15 + 1 + 2 + 5);
  CHECK_FALSE(parse_sym_expr("c + 1").evaluate(hint));
}

TEST_CASE("malformed expressions are refused with a position", "[sym]") {
  for (const char* bad : {"", "s1 +", "(s1", "s1)", "2**s1", "s1 // 0", "Foo(1, 2)", "Max(1)", "1.5", "s1 $ 2",
                          "99999999999999999999", "s1**-1"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_sym_expr(bad), sator::SymParseError);
  }
  std::string deep(200, '(');
  CHECK_THROWS_AS(parse_sym_expr(deep + "1" + std::string(200, ')')), sator::SymParseError);
}

TEST_CASE("overflow is an error, not a wrap-around", "[sym]") {
  CHECK_THROWS_AS(parse_sym_expr("9223372036854775807 + 1"), sator::SymParseError);
  CHECK_THROWS_AS(parse_sym_expr("4294967296*4294967296*s1"), sator::SymParseError);
  CHECK_THROWS_AS(SymExpr(INT64_MAX) * SymExpr(2), sator::SymOverflow);
}
