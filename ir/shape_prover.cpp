#include "ir/shape_prover.h"

#include <map>
#include <tuple>

#include <z3++.h>

namespace sator {

const char* truth_name(Truth t) {
  switch (t) {
    case Truth::True: return "true";
    case Truth::False: return "false";
    case Truth::Unknown: return "unknown";
  }
  return "?";
}

struct ShapeProver::Z3State {
  z3::context ctx;
  z3::solver solver{ctx};
  std::map<std::string, z3::expr> vars;
  std::map<std::tuple<int, SymExpr, SymExpr>, Truth> cache;

  z3::expr var(const std::string& name) {
    auto it = vars.find(name);
    if (it != vars.end()) return it->second;
    z3::expr v = ctx.int_const(name.c_str());
    vars.emplace(name, v);
    return v;
  }

  // Floor division and modulo agree with Z3's (Euclidean) div/mod whenever
  // the divisor is positive, which sizes are.
  z3::expr atom(AtomId id) {
    const AtomInfo& a = atom_info(id);
    if (a.kind == AtomKind::Symbol) return var(a.name);
    z3::expr l = translate(a.args[0]), r = translate(a.args[1]);
    switch (a.kind) {
      case AtomKind::FloorDiv: return l / r;
      case AtomKind::Mod: return z3::mod(l, r);
      case AtomKind::Max: return z3::ite(l >= r, l, r);
      case AtomKind::Min: return z3::ite(l <= r, l, r);
      case AtomKind::Symbol: break;
    }
    return l;
  }

  z3::expr translate(const SymExpr& e) {
    z3::expr sum = ctx.int_val(static_cast<int64_t>(e.constant()));
    for (const Term& t : e.terms()) {
      z3::expr prod = ctx.int_val(static_cast<int64_t>(t.coeff));
      for (const Factor& f : t.monomial)
        for (uint32_t p = 0; p < f.power; ++p) prod = prod * atom(f.atom);
      sum = sum + prod;
    }
    return sum;
  }

  // sat / unsat / unknown of the current assertions plus `extra`.
  z3::check_result check(const z3::expr& extra) {
    solver.push();
    solver.add(extra);
    z3::check_result r = solver.check();
    solver.pop();
    return r;
  }
};

ShapeProver::ShapeProver(const std::vector<Symbol>& symbols, unsigned z3_timeout_ms)
    : symbols_(symbols), timeout_ms_(z3_timeout_ms) {}

ShapeProver::Z3State& ShapeProver::z3() {
  if (z3_) return *z3_;
  z3_ = std::make_unique<Z3State>();
  z3::params p(z3_->ctx);
  p.set("timeout", timeout_ms_);
  z3_->solver.set(p);
  for (const Symbol& s : symbols_) {
    z3::expr v = z3_->var(s.name);
    // Sizes are never negative; PyTorch specializes 0 and 1, so a declared
    // minimum (usually 2) is honoured when present.
    z3_->solver.add(v >= z3_->ctx.int_val(static_cast<int64_t>(s.min.value_or(0))));
    if (s.max) z3_->solver.add(v <= z3_->ctx.int_val(static_cast<int64_t>(*s.max)));
  }
  return *z3_;
}

ShapeProver::~ShapeProver() = default;

Truth ShapeProver::ask_z3(Query q, const SymExpr& a, const SymExpr& b) {
  Z3State& z = z3();
  auto key = std::make_tuple(static_cast<int>(q), a, b);
  if (auto it = z.cache.find(key); it != z.cache.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  Truth answer = Truth::Unknown;
  try {
    z3::expr x = z.translate(a), y = z.translate(b);
    z3::expr fact = x == y;
    switch (q) {
      case Query::Equal: fact = x == y; break;
      case Query::LessEqual: fact = x <= y; break;
      case Query::Divides: fact = x != 0 && z3::mod(y, x) == 0; break;
    }
    stats_.z3_calls += 1;
    z3::check_result counter = z.check(!fact);
    if (counter == z3::unsat) {
      answer = Truth::True;
    } else if (counter == z3::sat) {
      stats_.z3_calls += 1;
      if (z.check(fact) == z3::unsat) answer = Truth::False;
    }
  } catch (const z3::exception&) {
    answer = Truth::Unknown;  // the solver gave up: rely on nothing
  }
  z.cache.emplace(std::move(key), answer);
  return answer;
}

Truth ShapeProver::equal(const SymExpr& a, const SymExpr& b) {
  ++stats_.queries;
  SymExpr diff = a - b;
  if (auto c = diff.as_constant()) {
    ++stats_.canonical;
    return *c == 0 ? Truth::True : Truth::False;
  }
  return ask_z3(Query::Equal, a, b);
}

Truth ShapeProver::less_equal(const SymExpr& a, const SymExpr& b) {
  ++stats_.queries;
  SymExpr diff = b - a;
  if (auto c = diff.as_constant()) {
    ++stats_.canonical;
    return *c >= 0 ? Truth::True : Truth::False;
  }
  return ask_z3(Query::LessEqual, a, b);
}

Truth ShapeProver::divides(const SymExpr& d, const SymExpr& n) {
  ++stats_.queries;
  if (d.is_constant() && n.is_constant()) {
    ++stats_.canonical;
    return d.constant() != 0 && floor_mod(n.constant(), d.constant()) == 0 ? Truth::True : Truth::False;
  }
  if (d != SymExpr(0) && n.exact_div(d)) {
    ++stats_.canonical;
    return Truth::True;
  }
  return ask_z3(Query::Divides, d, n);
}

}  // namespace sator
