#include "ir/sym_expr.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace sator {

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw SymOverflow("integer overflow in a size expression");
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw SymOverflow("integer overflow in a size expression");
  return r;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) throw SymOverflow("division by zero in a size expression");
  if (a == INT64_MIN && b == -1) throw SymOverflow("integer overflow in a size expression");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) throw SymOverflow("modulo by zero in a size expression");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// ---------------------------------------------------------------------------
// The atom table. Atoms are keyed by their printed form, which is canonical
// because their arguments are canonical.
namespace {

struct AtomTable {
  std::shared_mutex mutex;
  std::deque<AtomInfo> atoms;
  std::unordered_map<std::string, AtomId> by_key;

  AtomId intern(std::string key, AtomInfo info) {
    {
      std::shared_lock lock(mutex);
      auto it = by_key.find(key);
      if (it != by_key.end()) return it->second;
    }
    std::unique_lock lock(mutex);
    auto it = by_key.find(key);
    if (it != by_key.end()) return it->second;
    AtomId id = static_cast<AtomId>(atoms.size());
    atoms.push_back(std::move(info));
    by_key.emplace(std::move(key), id);
    return id;
  }
};

AtomTable& table() {
  static AtomTable t;
  return t;
}

// An operand of // or a function call, parenthesized unless it is a lone
// symbol or a non-negative constant (so `(a + 1)//2` and `a//(2*b)` survive).
std::string operand_text(const SymExpr& e) {
  if (e.as_symbol() || (e.is_constant() && e.constant() >= 0)) return e.to_string();
  std::string s = "(";
  s.append(e.to_string()).append(")");
  return s;
}

std::string atom_text(const AtomInfo& a) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "(" + std::string.
  std::string s;
  const char* sep = ", ";
  switch (a.kind) {
    case AtomKind::Symbol: return a.name;
    case AtomKind::FloorDiv: s = "("; sep = "//"; break;
    case AtomKind::Mod: s = "Mod("; break;
    case AtomKind::Max: s = "Max("; break;
    case AtomKind::Min: s = "Min("; break;
  }
  if (a.kind == AtomKind::FloorDiv) s.append(operand_text(a.args[0])).append(sep).append(operand_text(a.args[1]));
  else s.append(a.args[0].to_string()).append(sep).append(a.args[1].to_string());
  s.append(")");
  return s;
}

AtomId intern_atom(AtomInfo info) {
  std::string key = atom_text(info);
  return table().intern(std::move(key), std::move(info));
}

Monomial multiply(const Monomial& a, const Monomial& b) {
  Monomial out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].atom < b[j].atom)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].atom < a[i].atom) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].atom, a[i].power + b[j].power});
      ++i, ++j;
    }
  }
  return out;
}

// `d` divides `m`: every factor of d occurs in m with at least its power.
std::optional<Monomial> divide(const Monomial& m, const Monomial& d) {
  Monomial out;
  size_t j = 0;
  for (const Factor& f : m) {
    if (j < d.size() && d[j].atom == f.atom) {
      if (d[j].power > f.power) return std::nullopt;
      if (d[j].power < f.power) out.push_back({f.atom, f.power - d[j].power});
      ++j;
    } else {
      out.push_back(f);
    }
  }
  if (j != d.size()) return std::nullopt;
  return out;
}

uint32_t degree(const Monomial& m) {
  uint32_t d = 0;
  for (const Factor& f : m) d += f.power;
  return d;
}

std::string monomial_text(const Monomial& m) {
  std::string s;
  for (const Factor& f : m) {
    if (!s.empty()) s += "*";
    s += atom_text(atom_info(f.atom));
    if (f.power > 1) s += "**" + std::to_string(f.power);
  }
  return s;
}

}  // namespace

const AtomInfo& atom_info(AtomId id) {
  std::shared_lock lock(table().mutex);
  return table().atoms[id];
}

// ---------------------------------------------------------------------------

SymExpr SymExpr::from_atom(AtomId atom) {
  SymExpr e;
  e.terms_.push_back(Term{{Factor{atom, 1}}, 1});
  return e;
}

SymExpr SymExpr::symbol(std::string_view name) {
  return from_atom(intern_atom(AtomInfo{AtomKind::Symbol, std::string(name), {}}));
}

SymExpr SymExpr::floordiv(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return floor_div(a.constant_, b.constant_);
  if (b == SymExpr(1)) return a;
  if (a == SymExpr(0)) return 0;
  if (b.is_constant() && b.constant_ > 0) {
    if (auto q = a.exact_div(b)) return *q;
  }
  if (a == b) return 1;
  return from_atom(intern_atom(AtomInfo{AtomKind::FloorDiv, {}, {a, b}}));
}

SymExpr SymExpr::mod(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return floor_mod(a.constant_, b.constant_);
  if (b == SymExpr(1) || a == b || a == SymExpr(0)) return 0;
  if (b.is_constant() && b.constant_ > 0 && a.exact_div(b)) return 0;
  return from_atom(intern_atom(AtomInfo{AtomKind::Mod, {}, {a, b}}));
}

SymExpr SymExpr::max(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return std::max(a.constant_, b.constant_);
  if (a == b) return a;
  const bool swap = b < a;  // Max is commutative: order the operands
  return from_atom(intern_atom(AtomInfo{AtomKind::Max, {}, {swap ? b : a, swap ? a : b}}));
}

SymExpr SymExpr::min(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return std::min(a.constant_, b.constant_);
  if (a == b) return a;
  const bool swap = b < a;
  return from_atom(intern_atom(AtomInfo{AtomKind::Min, {}, {swap ? b : a, swap ? a : b}}));
}

std::optional<std::string> SymExpr::as_symbol() const {
  if (constant_ != 0 || terms_.size() != 1) return std::nullopt;
  const Term& t = terms_[0];
  if (t.coeff != 1 || t.monomial.size() != 1 || t.monomial[0].power != 1) return std::nullopt;
  const AtomInfo& a = atom_info(t.monomial[0].atom);
  if (a.kind != AtomKind::Symbol) return std::nullopt;
  return a.name;
}

void SymExpr::add_term(Monomial m, int64_t coeff) {
  if (m.empty()) {
    constant_ = checked_add(constant_, coeff);
    return;
  }
  terms_.push_back(Term{std::move(m), coeff});
}

// Sorts terms, merges equal monomials and drops zero coefficients.
void SymExpr::normalize() {
  std::sort(terms_.begin(), terms_.end(),
            [](const Term& a, const Term& b) { return a.monomial < b.monomial; });
  std::vector<Term> merged;
  merged.reserve(terms_.size());
  for (Term& t : terms_) {
    if (!merged.empty() && merged.back().monomial == t.monomial) {
      merged.back().coeff = checked_add(merged.back().coeff, t.coeff);
    } else {
      merged.push_back(std::move(t));
    }
  }
  std::erase_if(merged, [](const Term& t) { return t.coeff == 0; });
  terms_ = std::move(merged);
}

SymExpr SymExpr::operator+(const SymExpr& o) const {
  SymExpr r;
  r.constant_ = checked_add(constant_, o.constant_);
  if (o.terms_.empty()) {
    r.terms_ = terms_;
    return r;
  }
  if (terms_.empty()) {
    r.terms_ = o.terms_;
    return r;
  }
  r.terms_ = terms_;
  r.terms_.insert(r.terms_.end(), o.terms_.begin(), o.terms_.end());
  r.normalize();
  return r;
}

SymExpr SymExpr::operator-() const {
  SymExpr r = *this;
  r.constant_ = checked_mul(constant_, -1);
  for (Term& t : r.terms_) t.coeff = checked_mul(t.coeff, -1);
  return r;
}

SymExpr SymExpr::operator-(const SymExpr& o) const { return *this + (-o); }

SymExpr SymExpr::operator*(const SymExpr& o) const {
  if (o.is_constant()) {
    if (o.constant_ == 0) return 0;
    SymExpr r = *this;
    r.constant_ = checked_mul(constant_, o.constant_);
    for (Term& t : r.terms_) t.coeff = checked_mul(t.coeff, o.constant_);
    return r;
  }
  if (is_constant()) return o * *this;
  SymExpr r;
  r.constant_ = checked_mul(constant_, o.constant_);
  for (const Term& t : terms_) r.add_term(t.monomial, checked_mul(t.coeff, o.constant_));
  for (const Term& t : o.terms_) r.add_term(t.monomial, checked_mul(t.coeff, constant_));
  for (const Term& a : terms_)
    for (const Term& b : o.terms_) r.add_term(multiply(a.monomial, b.monomial), checked_mul(a.coeff, b.coeff));
  r.normalize();
  return r;
}

SymExpr SymExpr::pow(uint32_t exponent) const {
  SymExpr r = 1;
  for (uint32_t i = 0; i < exponent; ++i) r = r * *this;
  return r;
}

std::optional<SymExpr> SymExpr::exact_div(const SymExpr& d) const {
  if (d == SymExpr(0)) return std::nullopt;
  if (d.is_constant()) {
    const int64_t c = d.constant_;
    if (c == -1) return -*this;  // INT64_MIN % -1 is undefined behaviour
    if (constant_ % c != 0) return std::nullopt;
    for (const Term& t : terms_)
      if (t.coeff % c != 0) return std::nullopt;
    SymExpr q = *this;
    q.constant_ /= c;
    for (Term& t : q.terms_) t.coeff /= c;
    return q;
  }
  if (d.constant_ == 0 && d.terms_.size() == 1) {
    // A monomial divisor: every term must be a multiple of it.
    if (constant_ != 0) return std::nullopt;
    const Term& dt = d.terms_[0];
    SymExpr q;
    for (const Term& t : terms_) {
      auto m = divide(t.monomial, dt.monomial);
      if (!m || dt.coeff == -1 || t.coeff % dt.coeff != 0) return std::nullopt;
      q.add_term(std::move(*m), t.coeff / dt.coeff);
    }
    q.normalize();
    return q;
  }
  // A polynomial divisor: only constant multiples of it divide syntactically.
  if (terms_.size() != d.terms_.size() || terms_.empty()) return std::nullopt;
  const Term& lead = terms_[0];
  if (lead.monomial != d.terms_[0].monomial || lead.coeff % d.terms_[0].coeff != 0) return std::nullopt;
  const int64_t k = lead.coeff / d.terms_[0].coeff;
  if (d * SymExpr(k) == *this) return SymExpr(k);
  return std::nullopt;
}

std::optional<int64_t> SymExpr::evaluate(
    const std::function<std::optional<int64_t>(const std::string&)>& lookup) const {
  try {
    int64_t total = constant_;
    for (const Term& t : terms_) {
      int64_t v = t.coeff;
      for (const Factor& f : t.monomial) {
        const AtomInfo& a = atom_info(f.atom);
        std::optional<int64_t> x;
        if (a.kind == AtomKind::Symbol) {
          x = lookup(a.name);
        } else {
          auto l = a.args[0].evaluate(lookup), r = a.args[1].evaluate(lookup);
          if (!l || !r) return std::nullopt;
          switch (a.kind) {
            case AtomKind::FloorDiv: x = floor_div(*l, *r); break;
            case AtomKind::Mod: x = floor_mod(*l, *r); break;
            case AtomKind::Max: x = std::max(*l, *r); break;
            case AtomKind::Min: x = std::min(*l, *r); break;
            case AtomKind::Symbol: break;
          }
        }
        if (!x) return std::nullopt;
        for (uint32_t p = 0; p < f.power; ++p) v = checked_mul(v, *x);
      }
      total = checked_add(total, v);
    }
    return total;
  } catch (const SymOverflow&) {
    return std::nullopt;
  }
}

void SymExpr::collect_symbols(std::vector<std::string>& out) const {
  for (const Term& t : terms_)
    for (const Factor& f : t.monomial) {
      const AtomInfo& a = atom_info(f.atom);
      if (a.kind == AtomKind::Symbol) {
        if (std::find(out.begin(), out.end(), a.name) == out.end()) out.push_back(a.name);
      } else {
        for (const SymExpr& arg : a.args) arg.collect_symbols(out);
      }
    }
}

std::string SymExpr::to_string() const {
  // Display order: higher degree first, then by text, constant last (SymPy's look).
  std::vector<std::pair<std::string, const Term*>> shown;
  for (const Term& t : terms_) shown.emplace_back(monomial_text(t.monomial), &t);
  std::sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) {
    uint32_t da = degree(a.second->monomial), db = degree(b.second->monomial);
    return da != db ? da > db : a.first < b.first;
  });
  std::string s;
  auto emit = [&s](int64_t coeff, const std::string& body) {
    const bool negative = coeff < 0;
    // |INT64_MIN| is not representable; print it through unsigned arithmetic.
    const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(coeff) : static_cast<uint64_t>(coeff);
    if (s.empty()) s += negative ? "-" : "";
    else s += negative ? " - " : " + ";
    if (body.empty()) s += std::to_string(magnitude);
    else if (magnitude == 1) s += body;
    else s += std::to_string(magnitude) + "*" + body;
  };
  for (const auto& [text, term] : shown) emit(term->coeff, text);
  if (constant_ != 0 || s.empty()) emit(constant_, "");
  return s;
}

bool SymExpr::operator<(const SymExpr& o) const {
  if (constant_ != o.constant_) return constant_ < o.constant_;
  if (terms_.size() != o.terms_.size()) return terms_.size() < o.terms_.size();
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (terms_[i].monomial != o.terms_[i].monomial) return terms_[i].monomial < o.terms_[i].monomial;
    if (terms_[i].coeff != o.terms_[i].coeff) return terms_[i].coeff < o.terms_[i].coeff;
  }
  return false;
}

size_t SymExpr::hash() const {
  size_t h = std::hash<int64_t>()(constant_);
  auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const Term& t : terms_) {
    mix(static_cast<uint64_t>(t.coeff));
    for (const Factor& f : t.monomial) mix((uint64_t(f.atom) << 32) | f.power);
  }
  return h;
}

}  // namespace sator
