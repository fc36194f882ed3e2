#include "ir/shape_prover.h"

#include <map>
#include <tuple>

#include <z3++.h>

#include "ir/sym_z3.h"

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
  SymToZ3 terms{ctx};
  std::map<std::tuple<int, SymExpr, SymExpr>, Truth> cache;

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
  // Z3 would catch SIGINT during a check and turn it into an "unknown"
  // answer (and, installed and restored around each check from several
  // threads, race with itself): Ctrl-C belongs to the process.
  p.set("ctrl_c", false);
  z3_->solver.set(p);
  for (const Symbol& s : symbols_) {
    z3::expr v = z3_->terms.var(s.name);
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
    z3::expr x = z.terms.translate(a), y = z.terms.translate(b);
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

std::optional<std::map<std::string, int64_t>> ShapeProver::counterexample(const SymExpr& a, const SymExpr& b) {
  Z3State& z = z3();
  try {
    z.solver.push();
    z.solver.add(z.terms.translate(a) != z.terms.translate(b));
    std::optional<std::map<std::string, int64_t>> found;
    if (z.solver.check() == z3::sat) {
      const z3::model m = z.solver.get_model();
      found.emplace();
      for (const auto& [name, v] : z.terms.vars()) (*found)[name] = m.eval(v, true).get_numeral_int64();
    }
    z.solver.pop();
    return found;
  } catch (const z3::exception&) {
    z.solver.pop();
    return std::nullopt;
  }
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
