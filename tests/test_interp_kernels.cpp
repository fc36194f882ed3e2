// The reference interpreter's kernels against PyTorch's documented semantics:
// index maps checked element by element on arange inputs, arithmetic on small
// hand-computed cases, attention against its textbook composition.
#include <catch2/catch.hpp>

// GCC 12 at -O1 with AddressSanitizer (SATOR_SANITIZE) reports assigning a
// Tensor64 into SdpaOptions' std::optional mask as "maybe uninitialized":
// a false positive inside std::optional's copy assignment (the Release build
// and ASan's run see nothing). Silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cmath>
#include <limits>
#include <random>

#include "interp/attention_kernels.h"
#include "interp/conv_kernels.h"
#include "interp/layout_kernels.h"
#include "interp/matmul_kernels.h"
#include "interp/math_kernels.h"

using namespace sator;
using namespace sator::interp;

namespace {
Tensor64 random_tensor(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Tensor64 t = Tensor64::filled(std::move(shape), 0.0);
  for (double& x : t.data) x = normal(rng);
  return t;
}
}  // namespace

TEST_CASE("for_each_index visits every index once, row-major", "[interp]") {
  std::vector<Shape> seen;
  for_each_index({2, 3}, [&](const Shape& i) { seen.push_back(i); });
  REQUIRE(seen.size() == 6);
  CHECK(seen[0] == Shape{0, 0});
  CHECK(seen[2] == Shape{0, 2});
  CHECK(seen[3] == Shape{1, 0});
  CHECK(seen[5] == Shape{1, 2});
  int scalar_visits = 0, empty_visits = 0;
  for_each_index({}, [&](const Shape&) { ++scalar_visits; });
  for_each_index({3, 0, 2}, [&](const Shape&) { ++empty_visits; });
  CHECK(scalar_visits == 1);
  CHECK(empty_visits == 0);
}

TEST_CASE("reshape keeps row-major order and infers -1", "[interp]") {
  const Tensor64 t = Tensor64::arange({2, 6});
  const Tensor64 r = reshape(t, {3, -1});
  CHECK(r.shape == Shape{3, 4});
  CHECK(r.at({2, 1}) == 9.0);
  CHECK_THROWS_AS(reshape(t, {5, 2}), InterpError);
  CHECK_THROWS_AS(reshape(t, {-1, -1}), InterpError);
}

TEST_CASE("permute: output dim i is input dim dims[i]", "[interp]") {
  const Tensor64 t = Tensor64::arange({2, 3, 4});
  const Tensor64 p = permute(t, {2, 0, 1});
  REQUIRE(p.shape == Shape{4, 2, 3});
  for_each_index(p.shape, [&](const Shape& i) { CHECK(p.at(i) == t.at({i[1], i[2], i[0]})); });
  // Composition: permute(permute(t, a), b) == permute(t, a[b[i]]).
  const std::vector<int64_t> a{2, 0, 1}, b{1, 2, 0};
  std::vector<int64_t> ab(3);
  for (size_t i = 0; i < 3; ++i) ab[i] = a[static_cast<size_t>(b[i])];
  CHECK(permute(p, b).data == permute(t, ab).data);
  CHECK_THROWS_AS(permute(t, {0, 0, 1}), InterpError);
  CHECK(transpose(t, 0, -1).data == permute(t, {2, 1, 0}).data);
}

TEST_CASE("expand repeats size-1 dims and adds leading ones", "[interp]") {
  const Tensor64 t = Tensor64::arange({3, 1});
  const Tensor64 e = expand(t, {2, -1, 4});
  REQUIRE(e.shape == Shape{2, 3, 4});
  for_each_index(e.shape, [&](const Shape& i) { CHECK(e.at(i) == static_cast<double>(i[1])); });
  CHECK_THROWS_AS(expand(t, {2, 4}), InterpError);  // 3 cannot become 2
}

TEST_CASE("unsqueeze, squeeze, slice, select, cat", "[interp]") {
  const Tensor64 t = Tensor64::arange({4, 5});
  CHECK(unsqueeze(t, -1).shape == Shape{4, 5, 1});
  CHECK(squeeze_dim(unsqueeze(t, 1), 1).shape == Shape{4, 5});
  CHECK(squeeze_dim(t, 0).shape == Shape{4, 5});  // size 4: no-op
  // slice(dim=1, start=-4, end=huge, step=2) keeps columns 1 and 3.
  const Tensor64 s = slice(t, 1, -4, std::numeric_limits<int64_t>::max(), 2);
  REQUIRE(s.shape == Shape{4, 2});
  CHECK(s.at({2, 0}) == 11.0);
  CHECK(s.at({2, 1}) == 13.0);
  CHECK(slice(t, 0, 3, 1, 1).shape == Shape{0, 5});  // end before start: empty
  const Tensor64 row = select(t, 0, -1);
  CHECK(row.shape == Shape{5});
  CHECK(row.at({0}) == 15.0);
  const Tensor64 c = cat({t, slice(t, 0, 0, 2, 1)}, 0);
  REQUIRE(c.shape == Shape{6, 5});
  CHECK(c.at({5, 4}) == 9.0);
  CHECK_THROWS_AS(cat({t, Tensor64::arange({4, 4})}, 0), InterpError);
}

TEST_CASE("pointwise ops broadcast like torch", "[interp]") {
  const Tensor64 a = Tensor64::arange({3, 1});
  const Tensor64 b = Tensor64::arange({4});
  const Tensor64 s = zip(a, b, [](double x, double y) { return 10 * x + y; }, DType::Float64);
  REQUIRE(s.shape == Shape{3, 4});
  CHECK(s.at({2, 3}) == 23.0);
  CHECK_THROWS_AS(zip(Tensor64::arange({3}), b, [](double x, double) { return x; }, DType::Float64),
                  InterpError);
  const Tensor64 cond = map(Tensor64::arange({4}), [](double x) { return x > 1 ? 1.0 : 0.0; }, DType::Bool);
  const Tensor64 w = where(cond, Tensor64::scalar(7.0), a, DType::Float64);
  REQUIRE(w.shape == Shape{3, 4});
  CHECK(w.at({2, 0}) == 2.0);
  CHECK(w.at({2, 3}) == 7.0);
}

TEST_CASE("reductions over chosen dims, with and without keepdim", "[interp]") {
  const Tensor64 t = Tensor64::arange({2, 3, 4});
  const Tensor64 s = sum(t, {0, 2}, false);
  REQUIRE(s.shape == Shape{3});
  // dim 1 = j: sum over i, k of 12 i + 4 j + k = 8 * 4 j + (2 * 6 * 12 / 2 ...) computed directly:
  for (int64_t j = 0; j < 3; ++j) {
    double expect = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) expect += static_cast<double>(12 * i + 4 * j + k);
    CHECK(s.at({j}) == expect);
  }
  CHECK(sum(t, {-1}, true).shape == Shape{2, 3, 1});
  CHECK(sum(t, {}, false).shape == Shape{});
  CHECK(sum(t, {}, false).data[0] == 23.0 * 24.0 / 2.0);
  CHECK(amax(t, {1}, false).at({1, 2}) == 22.0);
  CHECK(mean(t, {2}, false).at({0, 0}) == 1.5);
  CHECK_THROWS_AS(sum(t, {3}, false), InterpError);
}

TEST_CASE("softmax: known values, rows sum to one, shift invariance", "[interp]") {
  Tensor64 t = Tensor64::filled({1, 2}, 0.0);
  t.data[1] = std::log(3.0);
  const Tensor64 p = softmax(t, -1);
  CHECK(p.data[0] == Approx(0.25).epsilon(1e-15));
  CHECK(p.data[1] == Approx(0.75).epsilon(1e-15));
  const Tensor64 x = random_tensor({3, 5, 7}, 1);
  const Tensor64 y = softmax(x, 1);
  const Tensor64 totals = sum(y, {1}, false);
  for (double v : totals.data) CHECK(v == Approx(1.0).epsilon(1e-14));
  const Tensor64 shifted = map(x, [](double v) { return v + 1000.0; }, DType::Float64);
  CHECK(max_relative_error(softmax(shifted, 1), y) < 1e-9);
}

TEST_CASE("safe_softmax: a row of -inf gives 0, other rows softmax's; sdpa agrees", "[interp]") {
  Tensor64 x = random_tensor({2, 3, 4}, 7);
  for (int64_t j = 0; j < 4; ++j) x.at({1, 2, j}) = -std::numeric_limits<double>::infinity();
  x.at({0, 1, 3}) = -std::numeric_limits<double>::infinity();  // one entry: not a whole row
  const Tensor64 plain = softmax(x, -1), safe = safe_softmax(x, -1);
  for (int64_t j = 0; j < 4; ++j) {
    CHECK(std::isnan(plain.at({1, 2, j})));
    CHECK(safe.at({1, 2, j}) == 0.0);
    CHECK(safe.at({0, 1, j}) == plain.at({0, 1, j}));
  }
  CHECK(safe.at({0, 1, 3}) == 0.0);
  CHECK(safe.at({0, 1, 0}) > 0.0);
  // PyTorch's SDPA computes _safe_softmax (since 2.5): a query row masked
  // whole attends to nothing and gives 0.
  const Tensor64 q = random_tensor({1, 1, 3, 4}, 8), k = random_tensor({1, 1, 5, 4}, 9), v = random_tensor({1, 1, 5, 2}, 10);
  Tensor64 bias = Tensor64::filled({3, 5}, 0.0);
  for (int64_t j = 0; j < 5; ++j) bias.at({1, j}) = -std::numeric_limits<double>::infinity();
  SdpaOptions masked;
  masked.attn_mask.emplace(bias);
  const Tensor64 o = sdpa(q, k, v, masked);
  CHECK(o.at({0, 0, 1, 0}) == 0.0);
  CHECK(o.at({0, 0, 1, 1}) == 0.0);
  CHECK(max_relative_error(select(o, 2, 0), select(sdpa(q, k, v, {}), 2, 0)) < 1e-12);
}

TEST_CASE("mm, bmm and matmul's broadcasting", "[interp]") {
  const Tensor64 a = Tensor64::arange({2, 3});  // [[0 1 2] [3 4 5]]
  const Tensor64 b = Tensor64::arange({3, 2});  // [[0 1] [2 3] [4 5]]
  const Tensor64 c = mm(a, b);
  CHECK(c.data == std::vector<double>{10, 13, 28, 40});
  CHECK_THROWS_AS(mm(a, a), InterpError);
  const Tensor64 x = random_tensor({2, 1, 2, 3}, 2), y = random_tensor({4, 3, 5}, 3);
  const Tensor64 z = matmul(x, y);
  REQUIRE(z.shape == Shape{2, 4, 2, 5});
  // Each batch is an mm of the broadcast operands.
  const Tensor64 x1 = select(select(x, 0, 1), 0, 0), y3 = select(y, 0, 3);
  CHECK(max_relative_error(select(select(z, 0, 1), 0, 3), mm(x1, y3)) < 1e-15);
  CHECK(matmul(Tensor64::arange({3}), b).shape == Shape{2});
  CHECK(matmul(a, Tensor64::arange({3})).data == std::vector<double>{5, 14});
  CHECK(bmm(unsqueeze(a, 0), unsqueeze(b, 0)).data == c.data);
}

TEST_CASE("the tiled products sum in index order: bit-identical to the plain loop", "[interp]") {
  // Sizes past a tile (256) and not a multiple of the four rows done at once.
  const int64_t n = 7, k = 300, m = 261;
  const Tensor64 a = random_tensor({2, n, k}, 7), b = random_tensor({2, k, m}, 8);
  const Tensor64 c = bmm(a, b);
  std::vector<double> plain(static_cast<size_t>(2 * n * m), 0.0);
  for (int64_t bi = 0; bi < 2; ++bi)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) acc += a.data[(bi * n + i) * k + p] * b.data[(bi * k + p) * m + j];
        plain[(bi * n + i) * m + j] = acc;
      }
  CHECK(c.data == plain);
  // linear: x [.., in] and w [out, in], each output a dot product in index order.
  const Tensor64 x = random_tensor({n, k}, 9), w = random_tensor({m, k}, 10);
  const Tensor64 y = linear_product(x, w);
  REQUIRE(y.shape == Shape{n, m});
  bool equal = true;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < m; ++o) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += x.data[i * k + p] * w.data[o * k + p];
      equal &= y.data[i * m + o] == acc;
    }
  CHECK(equal);
}

TEST_CASE("sdpa equals its textbook composition, and causal, mask and GQA forms agree", "[interp]") {
  const Tensor64 q = random_tensor({2, 4, 5, 8}, 4), k = random_tensor({2, 4, 6, 8}, 5),
                 v = random_tensor({2, 4, 6, 3}, 6);
  // softmax(q kᵀ / sqrt(8)) v, composed from the other kernels.
  Tensor64 scores = matmul(q, transpose(k, -2, -1));
  scores = map(scores, [](double s) { return s / std::sqrt(8.0); }, DType::Float64);
  const Tensor64 expect = matmul(softmax(scores, -1), v);
  const Tensor64 out = sdpa(q, k, v, {});
  REQUIRE(out.shape == Shape{2, 4, 5, 3});
  CHECK(max_relative_error(out, expect) < 1e-12);

  // is_causal == a boolean lower-triangular mask == an additive -inf mask.
  Tensor64 keep = Tensor64::filled({5, 6}, 0.0, DType::Bool), bias = Tensor64::filled({5, 6}, 0.0);
  for_each_index(keep.shape, [&](const Shape& i) {
    keep.at(i) = i[1] <= i[0] ? 1.0 : 0.0;
    bias.at(i) = i[1] <= i[0] ? 0.0 : -std::numeric_limits<double>::infinity();
  });
  SdpaOptions causal, masked, additive;
  causal.is_causal = true;
  masked.attn_mask.emplace(keep);
  additive.attn_mask.emplace(bias);
  const Tensor64 c = sdpa(q, k, v, causal);
  CHECK(max_relative_error(sdpa(q, k, v, masked), c) < 1e-12);
  CHECK(max_relative_error(sdpa(q, k, v, additive), c) < 1e-12);
  CHECK(max_relative_error(c, out) > 1e-3);  // the mask matters
  // Row 0 attends to key 0 only: its output is v's row 0.
  CHECK(max_relative_error(select(c, 2, 0), select(v, 2, 0)) < 1e-12);

  // Grouped-query attention: 4 query heads over 2 kv heads == kv heads repeated.
  const Tensor64 k2 = slice(k, 1, 0, 2, 1), v2 = slice(v, 1, 0, 2, 1);
  SdpaOptions gqa;
  gqa.enable_gqa = true;
  const Tensor64 repeated_k = cat({slice(k2, 1, 0, 1, 1), slice(k2, 1, 0, 1, 1), slice(k2, 1, 1, 2, 1),
                                   slice(k2, 1, 1, 2, 1)}, 1);
  const Tensor64 repeated_v = cat({slice(v2, 1, 0, 1, 1), slice(v2, 1, 0, 1, 1), slice(v2, 1, 1, 2, 1),
                                   slice(v2, 1, 1, 2, 1)}, 1);
  CHECK(max_relative_error(sdpa(q, k2, v2, gqa), sdpa(q, repeated_k, repeated_v, {})) < 1e-12);
}

TEST_CASE("max_relative_error: NaN and infinities must match", "[interp]") {
  Tensor64 a = Tensor64::filled({2}, 1.0), b = a;
  CHECK(max_relative_error(a, b) == 0.0);
  b.data[1] = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isinf(max_relative_error(a, b)));
  a.data[1] = b.data[1];
  CHECK(max_relative_error(a, b) == 0.0);
  CHECK(std::isinf(max_relative_error(a, Tensor64::filled({3}, 1.0))));
}

// <dout, sdpa(...)> as a function of one input element: its derivative by
// central differences is what the analytic gradient must give.
TEST_CASE("sdpa_backward equals finite differences of sdpa", "[interp]") {
  const Tensor64 q = random_tensor({2, 3, 4}, 11), k = random_tensor({2, 5, 4}, 12), v = random_tensor({2, 5, 3}, 13);
  const Tensor64 dout = random_tensor({2, 3, 3}, 14), mask = random_tensor({3, 5}, 15);
  for (const bool causal : {false, true}) {
    SdpaOptions o;
    o.scale = 0.4;
    o.is_causal = causal;
    if (!causal) o.attn_mask = mask;
    const SdpaGrads g = sdpa_backward(dout, q, k, v, o);
    auto loss = [&](const Tensor64& qq, const Tensor64& kk, const Tensor64& vv, const SdpaOptions& oo) {
      const Tensor64 out = sdpa(qq, kk, vv, oo);
      double l = 0;
      for (size_t i = 0; i < out.data.size(); ++i) l += out.data[i] * dout.data[i];
      return l;
    };
    const double h = 1e-6;
    auto check = [&](const Tensor64& grad, int which) {
      for (size_t i = 0; i < grad.data.size(); i += 3) {
        Tensor64 in[3] = {q, k, v};
        in[which].data[i] += h;
        const double up = loss(in[0], in[1], in[2], o);
        in[which].data[i] -= 2 * h;
        const double down = loss(in[0], in[1], in[2], o);
        CHECK(grad.data[i] == Approx((up - down) / (2 * h)).margin(1e-7));
      }
    };
    check(g.dq, 0);
    check(g.dk, 1);
    check(g.dv, 2);
    if (!causal) {  // the mask's gradient, summed over the batch it was broadcast along
      const Tensor64 dmask = sum_to_shape(g.dscores, mask.shape);
      for (size_t i = 0; i < mask.data.size(); i += 2) {
        SdpaOptions up = o, down = o;
        up.attn_mask->data[i] += h;
        down.attn_mask->data[i] -= h;
        CHECK(dmask.data[i] == Approx((loss(q, k, v, up) - loss(q, k, v, down)) / (2 * h)).margin(1e-7));
      }
    }
  }
}

TEST_CASE("convolution by hand, and its backward equals finite differences", "[interp]") {
  // 1-D: x = 1..5, w = [1, -1], stride 2, padding 1: windows (0,1), (2,3), (4,5).
  Tensor64 x = Tensor64::arange({1, 1, 5});
  for (double& v : x.data) v += 1;
  Tensor64 w = Tensor64::filled({1, 1, 2}, 1.0);
  w.data[1] = -1.0;
  const Tensor64 y = convolution(x, w, std::nullopt, {{2}, {1}, {1}, 1});
  REQUIRE(y.shape == Shape{1, 1, 3});
  CHECK(y.data == std::vector<double>{-1.0, -1.0, -1.0});
  // Dilation 2 and a bias: x[i] - x[i+2] + 10 = 8 everywhere.
  const Tensor64 d = convolution(x, w, Tensor64::filled({1}, 10.0), {{1}, {0}, {2}, 1});
  CHECK(d.data == std::vector<double>{8.0, 8.0, 8.0});

  // 2-D, two groups, stride 2, padding 1, dilation 2: <dout, conv> differentiated.
  const Tensor64 in = random_tensor({2, 4, 6, 5}, 21), wt = random_tensor({6, 2, 2, 3}, 22), bias = random_tensor({6}, 23);
  const ConvParams p{{2, 1}, {1, 1}, {2, 1}, 2};
  const Tensor64 out = convolution(in, wt, bias, p);
  const Tensor64 dout = random_tensor(out.shape, 24);
  const ConvGrads g = convolution_backward(dout, in, wt, p);
  auto loss = [&](const Tensor64& a, const Tensor64& b, const Tensor64& c) {
    const Tensor64 o = convolution(a, b, c, p);
    double l = 0;
    for (size_t i = 0; i < o.data.size(); ++i) l += o.data[i] * dout.data[i];
    return l;
  };
  const double h = 1e-6;
  auto check = [&](const Tensor64& grad, int which) {
    for (size_t i = 0; i < grad.data.size(); i += 7) {
      Tensor64 args[3] = {in, wt, bias};
      args[which].data[i] += h;
      const double up = loss(args[0], args[1], args[2]);
      args[which].data[i] -= 2 * h;
      CHECK(grad.data[i] == Approx((up - loss(args[0], args[1], args[2])) / (2 * h)).margin(1e-6));
    }
  };
  check(g.input, 0);
  check(g.weight, 1);
  check(g.bias, 2);
}
