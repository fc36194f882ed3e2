#include "ir/sym_z3.h"

namespace sator {

z3::expr SymToZ3::var(const std::string& name) {
  auto it = vars_.find(name);
  if (it != vars_.end()) return it->second;
  z3::expr v = ctx_.int_const(name.c_str());
  vars_.emplace(name, v);
  return v;
}

z3::expr SymToZ3::atom(AtomId id) {
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

z3::expr SymToZ3::translate(const SymExpr& e) {
  z3::expr sum = ctx_.int_val(static_cast<int64_t>(e.constant()));
  for (const Term& t : e.terms()) {
    z3::expr prod = ctx_.int_val(static_cast<int64_t>(t.coeff));
    for (const Factor& f : t.monomial)
      for (uint32_t p = 0; p < f.power; ++p) prod = prod * atom(f.atom);
    sum = sum + prod;
  }
  return sum;
}

}  // namespace sator
