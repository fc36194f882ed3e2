// Symbolic integer expressions in a canonical form.
//
// A SymExpr is an integer polynomial: a constant plus a sorted list of terms,
// each a non-zero coefficient times a monomial (atoms raised to positive
// powers). Atoms are symbols (`s27`) or opaque applications that a polynomial
// cannot express: floor division, modulo, Max and Min. Atoms are interned in a
// process-wide table, so two expressions are equal exactly when their
// canonical forms are equal, which decides most shape equalities without Z3.
//
// All arithmetic is checked: an int64 overflow throws SymOverflow, which the
// loader reports as an absurd size rather than wrapping silently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sator {

struct SymOverflow : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using AtomId = uint32_t;

// One factor of a monomial: an atom and its (positive) exponent.
struct Factor {
  AtomId atom;
  uint32_t power;
  bool operator==(const Factor&) const = default;
  auto operator<=>(const Factor&) const = default;
};
using Monomial = std::vector<Factor>;  // sorted by atom id, no repeats

struct Term {
  Monomial monomial;
  int64_t coeff;
  bool operator==(const Term&) const = default;
};

class SymExpr {
 public:
  SymExpr() = default;
  SymExpr(int64_t constant) : constant_(constant) {}  // NOLINT: implicit on purpose

  static SymExpr symbol(std::string_view name);
  static SymExpr floordiv(const SymExpr& a, const SymExpr& b);  // Python `//`
  static SymExpr mod(const SymExpr& a, const SymExpr& b);       // Python `%`
  static SymExpr max(const SymExpr& a, const SymExpr& b);
  static SymExpr min(const SymExpr& a, const SymExpr& b);

  bool is_constant() const { return terms_.empty(); }
  int64_t constant() const { return constant_; }  // the constant part
  const std::vector<Term>& terms() const { return terms_; }
  std::optional<int64_t> as_constant() const {
    return is_constant() ? std::optional<int64_t>(constant_) : std::nullopt;
  }
  // A single symbol with coefficient 1 and no constant: its name.
  std::optional<std::string> as_symbol() const;

  SymExpr operator+(const SymExpr& o) const;
  SymExpr operator-(const SymExpr& o) const;
  SymExpr operator*(const SymExpr& o) const;
  SymExpr operator-() const;
  SymExpr pow(uint32_t exponent) const;

  // Exact division: the quotient when `divisor` divides every term of this
  // expression syntactically (a constant or a monomial times a constant).
  std::optional<SymExpr> exact_div(const SymExpr& divisor) const;

  // Value under an assignment of symbols (by name); nullopt if a symbol is
  // missing or the value overflows.
  std::optional<int64_t> evaluate(const std::function<std::optional<int64_t>(const std::string&)>& lookup) const;

  // Names of all symbols that occur, including inside opaque atoms.
  void collect_symbols(std::vector<std::string>& out) const;

  // SymPy-style text, e.g. "8*s27**2 + 512*s27 + 1"; parse(to_string()) == *this.
  std::string to_string() const;

  bool operator==(const SymExpr& o) const = default;
  bool operator<(const SymExpr& o) const;  // an arbitrary total order for maps
  size_t hash() const;

 private:
  static SymExpr from_atom(AtomId atom);
  void add_term(Monomial m, int64_t coeff);  // used while building, keeps order
  void normalize();

  int64_t constant_ = 0;
  std::vector<Term> terms_;  // sorted by monomial, coefficients non-zero
};

// Opaque atoms, interned process-wide (thread-safe).
enum class AtomKind : uint8_t { Symbol, FloorDiv, Mod, Max, Min };
struct AtomInfo {
  AtomKind kind;
  std::string name;           // Symbol only
  std::vector<SymExpr> args;  // the others: two operands
};
const AtomInfo& atom_info(AtomId id);

// Parses SymPy-printed integer expressions: integers, symbols, + - * ** // %,
// parentheses, Max(a, b), Min(a, b), FloorDiv(a, b), Mod(a, b). Throws
// SymParseError with the offending position on anything else.
struct SymParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
SymExpr parse_sym_expr(std::string_view text);

// Checked int64 helpers shared by the shape functions.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t floor_div(int64_t a, int64_t b);  // b != 0
int64_t floor_mod(int64_t a, int64_t b);  // b != 0

}  // namespace sator

template <>
struct std::hash<sator::SymExpr> {
  size_t operator()(const sator::SymExpr& e) const { return e.hash(); }
};
