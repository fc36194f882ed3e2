// What check-rules needs to know about one rewrite rule: how to build random
// instances of its left-hand side. A generator builds into a GraphBuilder,
// drawing structure (ranks, dims, permutations) and sizes from a Draw, and
// returns the node whose class the rule must rewrite.
//
// The same generator serves both checks: with concrete sizes for the
// differential tests, with symbolic sizes (one symbol per size, >= 2 unless a
// literal 1 is asked for) for the Z3 shape and index proofs.
#pragma once

#include <functional>
#include <random>
#include <memory>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "ir/graph_builder.h"
#include "tensor/tensor_egraph.h"

namespace sator::check {

class Draw {
 public:
  Draw(GraphBuilder& builder, std::mt19937_64& rng, bool symbolic, int64_t max_size)
      : b(builder), rng_(rng), symbolic_(symbolic), max_size_(max_size) {}

  GraphBuilder& b;
  // More outputs of the instance after the root: what a rule that rewrites
  // several values at once (attention-training) must keep equal too.
  std::vector<NodeId> extra_outputs;
  bool symbolic() const { return symbolic_; }

  // A size: concrete, one of 1, 2, 3, 4, 5, 7, 11, 13 (up to the rank's
  // budget) at least `min`; symbolic, a new symbol >= max(min, 2).
  SymExpr size(int64_t min = 1);
  // A size that is never 1 (concrete >= 2; symbolic as size()).
  SymExpr big() { return size(2); }
  // Uniform integer in [lo, hi]; a fair coin.
  int64_t integer(int64_t lo, int64_t hi);
  bool coin() { return integer(0, 1) == 1; }
  template <class T>
  const T& pick(const std::vector<T>& options) { return options[static_cast<size_t>(integer(0, static_cast<int64_t>(options.size()) - 1))]; }
  std::vector<int64_t> permutation(size_t n);
  // A number a rule may move around: nonzero, not 1.
  double number();
  // `shape` with each dim randomly written negative (PyTorch wraps them).
  int64_t maybe_negative(int64_t dim, size_t rank) { return coin() ? dim - static_cast<int64_t>(rank) : dim; }
  // `rank` sizes.
  std::vector<SymExpr> shape(size_t rank, int64_t min = 1);
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64& rng_;
  bool symbolic_;
  int64_t max_size_;
};

using Generator = std::function<NodeId(Draw&, size_t rank)>;

}  // namespace sator::check
namespace sator::rulelang {
struct BranchCounts;
}  // namespace sator::rulelang
namespace sator::check {

struct RuleCase {
  std::string name;
  size_t min_rank = 0, max_rank = 6;  // ranks the generator accepts
  // Both sides are index remappings of one input, maybe under one-tensor
  // elementwise ops (the layout rules): their index maps are proved equal too.
  bool index_map = false;
  // Random draws are compared under the coupling that pairs the k-th draw of
  // each side (for rules that hold in distribution, e.g. dropout).
  bool couple_random_draws = false;
  Generator lhs;
  // The differential tests' tolerance where the check's own is too tight: 0
  // keeps it. A left side that sums to zero in exact arithmetic computes
  // float64 rounding (~1e-15 of its terms) that the right side does not.
  double tolerance = 0;
  // Why the two sides may differ at the graph's own dtypes by more than a
  // rounding (kMaxUlpUnexplained): a fused kernel computing in float32 what
  // the decomposed block rounds to 16 bits at every step, a sum reassociated.
  // Empty: the rule must be exact or within that.
  std::string approx{};
  // Draws per check, times this: instances drawn blindly from a rule's own
  // pattern (check/cases_generated.h) meet its conditions less often than a
  // hand-written generator's.
  size_t draw_factor = 1;
  // The instance's first outputs the rule must rewrite: the root, or a
  // multi-pattern's rewritten roots (the generator returns the first and
  // puts the others first in Draw::extra_outputs).
  size_t rewritten_outputs = 1;
  // A rule file's rule: how often each if of its right-hand side took each
  // branch (the trials must take every branch; null for built-in rules).
  std::shared_ptr<const rulelang::BranchCounts> branches{};
};

// Makes the rule set for one e-graph (rules hold references into it).
using RuleFactory = std::function<std::vector<eg::Rewrite>(TensorEGraph&)>;

// Helpers generators share.
// `fine` regrouped: runs of adjacent dims multiplied together, literal 1s
// sprinkled in; the result has the same number of elements.
std::vector<SymExpr> regroup(Draw& d, const std::vector<SymExpr>& fine);
SymExpr product(const std::vector<SymExpr>& dims);

}  // namespace sator::check
