// A recursive-descent parser for SymPy-printed integer expressions, with
// Python's precedence: `**` binds tighter than unary minus, which binds
// tighter than `*`, `//`, `%` (left-associative), then `+`, `-`.
#include <cctype>

#include "ir/sym_expr.h"

namespace sator {
namespace {

constexpr int kMaxDepth = 64;  // nesting bound: keeps hostile input off the stack

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  SymExpr parse() {
    SymExpr e = expr();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw SymParseError("bad size expression \"" + std::string(text_) + "\": " + what + " at offset " +
                        std::to_string(pos_));
  }

  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }

  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) == token) {
      pos_ += token.size();
      return true;
    }
    return false;
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail("expression nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  SymExpr expr() {
    DepthGuard guard(*this);
    SymExpr e = term();
    for (;;) {
      if (eat("+")) e = e + term();
      else if (eat("-")) e = e - term();
      else return e;
    }
  }

  SymExpr term() {
    SymExpr e = unary();
    for (;;) {
      if (eat("**")) fail("misplaced '**'");
      if (eat("//")) e = checked_div(e, unary(), /*is_mod=*/false);
      else if (eat("*")) e = e * unary();
      else if (eat("%")) e = checked_div(e, unary(), /*is_mod=*/true);
      else return e;
    }
  }

  SymExpr checked_div(const SymExpr& a, const SymExpr& b, bool is_mod) {
    if (b == SymExpr(0)) fail(is_mod ? "modulo by zero" : "division by zero");
    return is_mod ? SymExpr::mod(a, b) : SymExpr::floordiv(a, b);
  }

  SymExpr unary() {
    DepthGuard guard(*this);
    if (eat("-")) return -unary();
    if (eat("+")) return unary();
    return power();
  }

  SymExpr power() {
    SymExpr base = primary();
    if (!eat("**")) return base;
    SymExpr exponent = unary();  // Python: right side of ** may be unary
    auto k = exponent.as_constant();
    if (!k || *k < 0) fail("exponent must be a non-negative integer constant");
    if (*k > 64) fail("exponent too large");
    return base.pow(static_cast<uint32_t>(*k));
  }

  SymExpr primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      SymExpr e = expr();
      if (!eat(")")) fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return integer();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string name = identifier();
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == '(') return call(name);
      return SymExpr::symbol(name);
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  SymExpr integer() {
    int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int64_t digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, digit, &v)) fail("integer too large");
      ++pos_;
    }
    return v;
  }

  std::string identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  SymExpr call(const std::string& name) {
    eat("(");
    SymExpr a = expr();
    if (!eat(",")) fail("expected ',' in " + name + "(...)");
    SymExpr b = expr();
    if (!eat(")")) fail("expected ')' after " + name + "(...)");
    if (name == "Max") return SymExpr::max(a, b);
    if (name == "Min") return SymExpr::min(a, b);
    if (name == "FloorDiv") return checked_div(a, b, false);
    if (name == "Mod") return checked_div(a, b, true);
    fail("unknown function " + name);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

SymExpr parse_sym_expr(std::string_view text) {
  try {
    return Parser(text).parse();
  } catch (const SymOverflow& e) {
    throw SymParseError("bad size expression \"" + std::string(text) + "\": " + e.what());
  }
}

}  // namespace sator
