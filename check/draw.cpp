#include "check/rule_case.h"

#include <algorithm>
#include <numeric>

namespace sator::check {

int64_t Draw::integer(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}

SymExpr Draw::size(int64_t min) {
  // Small primes and 1: equal sizes or powers of two could hide swapped dims.
  static const std::vector<int64_t> menu = {1, 2, 3, 4, 5, 7, 11, 13};
  std::vector<int64_t> allowed;
  for (int64_t v : menu)
    if (v >= min && (v <= max_size_ || v == min)) allowed.push_back(v);
  if (allowed.empty()) allowed.push_back(min);
  const int64_t value = pick(allowed);
  if (!symbolic_) return value;
  return b.symbol(std::max<int64_t>(min, 2), std::max<int64_t>(value, 2));
}

std::vector<SymExpr> Draw::shape(size_t rank, int64_t min) {
  std::vector<SymExpr> s;
  for (size_t i = 0; i < rank; ++i) s.push_back(size(min));
  return s;
}

std::vector<int64_t> Draw::permutation(size_t n) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), rng_);
  return p;
}

double Draw::number() {
  static const std::vector<double> menu = {0.125, 0.5, 2.0, 3.0, -1.5, 0.35355339059327373, 8.0};
  return pick(menu);
}

SymExpr product(const std::vector<SymExpr>& dims) {
  SymExpr p = 1;
  for (const SymExpr& e : dims) p = p * e;
  return p;
}

std::vector<SymExpr> regroup(Draw& d, const std::vector<SymExpr>& fine) {
  std::vector<SymExpr> out;
  for (size_t i = 0; i < fine.size();) {
    if (d.integer(0, 4) == 0) out.push_back(1);
    size_t j = i + 1;
    while (j < fine.size() && d.integer(0, 2) == 0) ++j;
    out.push_back(product({fine.begin() + static_cast<std::ptrdiff_t>(i), fine.begin() + static_cast<std::ptrdiff_t>(j)}));
    i = j;
  }
  if (d.integer(0, 4) == 0) out.push_back(1);
  return out;
}

}  // namespace sator::check
