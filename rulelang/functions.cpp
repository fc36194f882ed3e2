#include "rulelang/functions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace sator::rulelang {

Value sizes_value(const std::vector<SymExpr>& s) {
  std::vector<Value> out;
  for (const SymExpr& d : s) out.push_back(d.is_constant() ? Value::of_int(d.constant()) : Value::of_sym(d));
  return Value::of_list(std::move(out));
}

namespace {

using Args = std::span<const RValue* const>;
using T = Type;

SymExpr to_size(const Value& v) {
  if (v.kind == Value::Kind::Int) return v.i;
  if (v.kind == Value::Kind::Sym) return v.sym;
  throw Decline{};
}
double to_double(const Value& v) {
  if (v.kind == Value::Kind::Int) return static_cast<double>(v.i);
  if (v.kind == Value::Kind::Float) return v.f;
  throw Decline{};
}
// The fill value of a float32 scalar_tensor or full in the class, as
// written (the analysis folds only values the dtype holds exactly, and
// 1/sqrt(96) is not one). As a Python scalar in a product with a float32 or
// 16-bit tensor PyTorch computes with it in float32, rounded as the 0-d
// tensor holds it: the same number either way.
std::optional<double> float32_fill(TensorEGraph& t, eg::Id cls) {
  const TensorData& d = t.analysis.data(t.egraph.find(cls));
  if (d.result != Node::Result::Tensor || d.type.dtype != DType::Float32) return std::nullopt;
  return t.analysis.fill_as_written(t.egraph, cls);
}

int64_t to_int(const Value& v) {
  if (v.kind != Value::Kind::Int) throw Decline{};
  return v.i;
}
int64_t to_int(const RValue& x) { return x.scalar == RValue::Scalar::Int ? x.number : to_int(x.value()); }
std::vector<int64_t> to_ints(const Value& v) {
  if (!v.is_list()) throw Decline{};
  std::vector<int64_t> out;
  for (const Value& x : v.list) out.push_back(to_int(x));
  return out;
}
Value ints_value(const std::vector<int64_t>& xs) {
  std::vector<Value> out;
  for (int64_t x : xs) out.push_back(Value::of_int(x));
  return Value::of_list(std::move(out));
}
RValue of_bool(bool b) { return RValue::of_bool(b); }
RValue of_size(const SymExpr& e) { return e.is_constant() ? RValue::of_int(e.constant()) : RValue::of(Value::of_sym(e)); }

// A dim index wrapped into [0, n) as PyTorch does; declines out of range.
int64_t wrap(int64_t d, int64_t n) {
  if (d < -n || d >= n) throw Decline{};
  return d < 0 ? d + n : d;
}
// A permutation with its negative entries wrapped; declines if it is not one.
std::vector<int64_t> permutation(const Value& v) {
  std::vector<int64_t> p = to_ints(v);
  const auto n = static_cast<int64_t>(p.size());
  std::vector<char> seen(p.size(), 0);
  for (int64_t& d : p) {
    d = wrap(d, n);
    if (seen[static_cast<size_t>(d)]++) throw Decline{};
  }
  return p;
}

const std::vector<SymExpr>& shape_of(TensorEGraph& t, const RValue& x) {
  const auto* s = t.analysis.shape(t.egraph, x.cls);
  if (!s) throw Decline{};
  return *s;
}

Truth size_equality(TensorEGraph& t, const SymExpr& a, const SymExpr& b) {
  const auto ca = a.as_constant(), cb = b.as_constant();
  if (ca && cb) return *ca == *cb ? Truth::True : Truth::False;
  return t.prover.equal(a, b);
}

Truth shape_equality(TensorEGraph& t, const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  if (a.size() != b.size()) return Truth::False;
  Truth all = Truth::True;
  for (size_t i = 0; i < a.size(); ++i) {
    const Truth e = size_equality(t, a[i], b[i]);
    if (e == Truth::False) return Truth::False;
    if (e == Truth::Unknown) all = Truth::Unknown;
  }
  return all;
}

// Whether two values are equal: sizes as the shape prover decides (True or
// False only when proved; constants compared directly), lists entry by
// entry, the rest by value.
Truth value_equality(TensorEGraph& t, const Value& a, const Value& b) {
  const bool sa = a.kind == Value::Kind::Int || a.kind == Value::Kind::Sym;
  const bool sb = b.kind == Value::Kind::Int || b.kind == Value::Kind::Sym;
  if (sa && sb) return size_equality(t, to_size(a), to_size(b));
  if (a.is_list() && b.is_list()) {
    if (a.list.size() != b.list.size()) return Truth::False;
    Truth all = Truth::True;
    for (size_t i = 0; i < a.list.size(); ++i) {
      const Truth e = value_equality(t, a.list[i], b.list[i]);
      if (e == Truth::False) return Truth::False;
      if (e == Truth::Unknown) all = Truth::Unknown;
    }
    return all;
  }
  // A number against an int compares as numbers: `(= ?c 1)` holds where the
  // matched Python number is 1.0 (the value's kind says how it was written,
  // not what it is).
  const bool na = a.kind == Value::Kind::Float || a.kind == Value::Kind::Int;
  const bool nb = b.kind == Value::Kind::Float || b.kind == Value::Kind::Int;
  if (na && nb && a.kind != b.kind) {
    const double x = a.kind == Value::Kind::Float ? a.f : static_cast<double>(a.i);
    const double y = b.kind == Value::Kind::Float ? b.f : static_cast<double>(b.i);
    return x == y ? Truth::True : Truth::False;
  }
  return a == b ? Truth::True : Truth::False;
}

double lowest(DType d) {
  switch (d) {
    case DType::Float16: return -65504.0;
    case DType::BFloat16: return -3.3895313892515355e38;
    case DType::Float32: return -static_cast<double>(std::numeric_limits<float>::max());
    case DType::Float64: return -std::numeric_limits<double>::max();
    case DType::Float8E4M3: return -448.0;
    case DType::Float8E5M2: return -57344.0;
    case DType::Int8: return -128.0;
    case DType::Int16: return -32768.0;
    case DType::Int32: return -2147483648.0;
    case DType::Int64: return -9223372036854775808.0;
    case DType::UInt8:
    case DType::Bool: return 0.0;
    default: throw Decline{};
  }
}

// The shape a tensor of shape `b`, broadcasting into one of shape `from`,
// takes when that one is viewed as `to` (the dims grouped where their
// products agree, proved): a group where b is full keeps to's sizes, a group
// where b is all ones takes ones. Declines anywhere else (b full in part of
// a group that merges or splits dims cannot follow the view).
std::vector<SymExpr> view_of_broadcast(TensorEGraph& t, std::vector<SymExpr> b, const std::vector<SymExpr>& from,
                                       const std::vector<SymExpr>& to) {
  if (b.size() > from.size() || b.empty()) throw Decline{};
  b.insert(b.begin(), from.size() - b.size(), SymExpr(1));
  const auto is = [&](const SymExpr& x, const SymExpr& y) { return size_equality(t, x, y) == Truth::True; };
  const auto prod = [](const std::vector<SymExpr>& v, size_t lo, size_t hi) {
    SymExpr p = 1;
    for (size_t k = lo; k < hi; ++k) p = p * v[k];
    return p;
  };
  std::vector<SymExpr> out;
  size_t i0 = 0, j0 = 0;
  while (i0 < from.size() || j0 < to.size()) {
    // The smallest group from here whose two products are proved equal.
    size_t gi = 0, gj = 0;
    bool found = false;
    for (size_t total = 1; !found && total <= (from.size() - i0) + (to.size() - j0); ++total)
      for (size_t di = 0; di <= total && !found; ++di) {
        const size_t dj = total - di;
        if (i0 + di > from.size() || j0 + dj > to.size()) continue;
        if (is(prod(from, i0, i0 + di), prod(to, j0, j0 + dj))) {
          gi = i0 + di;
          gj = j0 + dj;
          found = true;
        }
      }
    if (!found) throw Decline{};
    bool full = true, ones = true;
    for (size_t k = i0; k < gi; ++k) {
      const bool one_there = is(from[k], 1);
      full = full && (one_there || is(b[k], from[k]));
      ones = ones && is(b[k], 1);
    }
    if (!full && !ones) throw Decline{};
    for (size_t k = j0; k < gj; ++k) out.push_back(full ? to[k] : SymExpr(1));
    i0 = gi;
    j0 = gj;
  }
  return out;
}

std::vector<Function> make_functions() {
  std::vector<Function> f;
  auto add = [&](const char* name, std::vector<Type> params, Type result, const char* doc,
                 RValue (*run)(TensorEGraph&, Args), bool variadic = false) {
    f.push_back({name, std::move(params), result, variadic, doc, run});
  };
  // Readings of a tensor.
  add("shape", {T::Tensor}, T::Sizes, "the tensor's sizes (read in place)", [](TensorEGraph& t, Args a) {
    RValue x;
    x.shape = &shape_of(t, *a[0]);
    return x;
  });
  add("rank", {T::Tensor}, T::Int, "the number of dims",
      [](TensorEGraph& t, Args a) { return RValue::of_int(static_cast<int64_t>(shape_of(t, *a[0]).size())); });
  add("numel", {T::Tensor}, T::Size, "the number of elements", [](TensorEGraph& t, Args a) {
    SymExpr n = 1;
    for (const SymExpr& d : shape_of(t, *a[0])) n = n * d;
    return of_size(n);
  });
  add("size", {T::Tensor, T::Int}, T::Size, "the size of one dim (negative dims count from the end)",
      [](TensorEGraph& t, Args a) {
        const auto& s = shape_of(t, *a[0]);
        return of_size(s[static_cast<size_t>(wrap(to_int(*a[1]), static_cast<int64_t>(s.size())))]);
      });
  add("dtype", {T::Tensor}, T::DType, "the tensor's dtype", [](TensorEGraph& t, Args a) {
    const TensorData& d = t.analysis.data(t.egraph.find(a[0]->cls));
    if (d.result != Node::Result::Tensor) throw Decline{};
    return RValue::of(Value::of_dtype(d.type.dtype));
  });
  // Lists and layout arithmetic.
  add("prod", {T::Sizes}, T::Size, "the product of sizes", [](TensorEGraph&, Args a) {
    SymExpr n = 1;
    if (const auto* s = a[0]->size_list()) {
      for (const SymExpr& d : *s) n = n * d;
      return of_size(n);
    }
    for (const SymExpr& d : to_sizes(a[0]->value())) n = n * d;
    return of_size(n);
  });
  add("len", {T::Sizes}, T::Int, "a list's length", [](TensorEGraph&, Args a) {
    if (const auto* s = a[0]->size_list()) return RValue::of_int(static_cast<int64_t>(s->size()));
    if (!a[0]->value().is_list()) throw Decline{};
    return RValue::of_int(static_cast<int64_t>(a[0]->value().list.size()));
  });
  add("at", {T::Sizes, T::Int}, T::Size, "a list's element (negative indices count from the end)",
      [](TensorEGraph&, Args a) {
        if (const auto* s = a[0]->size_list())
          return of_size((*s)[static_cast<size_t>(wrap(to_int(*a[1]), static_cast<int64_t>(s->size())))]);
        if (!a[0]->value().is_list()) throw Decline{};
        return RValue::of(a[0]->value().list[static_cast<size_t>(wrap(to_int(*a[1]), static_cast<int64_t>(a[0]->value().list.size())))]);
      });
  add("iota", {T::Int}, T::IntList, "[0, 1, ..., n-1]", [](TensorEGraph&, Args a) {
    const int64_t n = to_int(*a[0]);
    if (n < 0 || n > 64) throw Decline{};
    std::vector<int64_t> p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i;
    return RValue::of(ints_value(p));
  });
  add("wrap", {T::Int, T::Int}, T::Int, "dim d of a rank-n tensor in [0, n) (declines out of range)",
      [](TensorEGraph&, Args a) { return RValue::of_int(wrap(to_int(*a[0]), to_int(*a[1]))); });
  add("swap", {T::Sizes, T::Int, T::Int}, T::Sizes, "the list with two entries exchanged (negative indices wrap)",
      [](TensorEGraph&, Args a) {
        if (!a[0]->value().is_list()) throw Decline{};
        Value l = a[0]->value();
        const auto n = static_cast<int64_t>(l.list.size());
        std::swap(l.list[static_cast<size_t>(wrap(to_int(*a[1]), n))], l.list[static_cast<size_t>(wrap(to_int(*a[2]), n))]);
        return RValue::of(std::move(l));
      });
  add("insert", {T::Sizes, T::Int, T::Size}, T::Sizes, "the list with v inserted before index i (0..len)",
      [](TensorEGraph&, Args a) {
        if (!a[0]->value().is_list()) throw Decline{};
        Value l = a[0]->value();
        const int64_t i = wrap(to_int(*a[1]), static_cast<int64_t>(l.list.size()) + 1);
        l.list.insert(l.list.begin() + i, a[2]->value());
        return RValue::of(std::move(l));
      });
  add("remove", {T::Sizes, T::Int}, T::Sizes, "the list without index i", [](TensorEGraph&, Args a) {
    if (const auto* s = a[0]->size_list()) {
      std::vector<SymExpr> out = *s;
      out.erase(out.begin() + wrap(to_int(*a[1]), static_cast<int64_t>(out.size())));
      return RValue::of_sizes(std::move(out));
    }
    if (!a[0]->value().is_list()) throw Decline{};
    Value l = a[0]->value();
    l.list.erase(l.list.begin() + wrap(to_int(*a[1]), static_cast<int64_t>(l.list.size())));
    return RValue::of(std::move(l));
  });
  add("compose", {T::IntList, T::IntList}, T::IntList,
      "permute(permute(x, p), q) = permute(x, (compose p q)): entry i is p[q[i]]", [](TensorEGraph&, Args a) {
        const std::vector<int64_t> p = permutation(a[0]->value()), q = permutation(a[1]->value());
        if (p.size() != q.size()) throw Decline{};
        std::vector<int64_t> r(p.size());
        for (size_t i = 0; i < r.size(); ++i) r[i] = p[static_cast<size_t>(q[i])];
        return RValue::of(ints_value(r));
      });
  add("normalize", {T::IntList}, T::IntList, "the permutation p with its negative entries wrapped (declines if p is none)",
      [](TensorEGraph&, Args a) { return RValue::of(ints_value(permutation(a[0]->value()))); });
  add("inverse", {T::IntList}, T::IntList, "the permutation that undoes p", [](TensorEGraph&, Args a) {
    const std::vector<int64_t> p = permutation(a[0]->value());
    std::vector<int64_t> r(p.size());
    for (size_t i = 0; i < p.size(); ++i) r[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    return RValue::of(ints_value(r));
  });
  add("identity?", {T::IntList}, T::Bool, "p is a permutation that moves nothing", [](TensorEGraph&, Args a) {
    const std::vector<int64_t> p = permutation(a[0]->value());
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] != static_cast<int64_t>(i)) return of_bool(false);
    return of_bool(true);
  });
  add("widens?", {T::DType, T::DType}, T::Bool, "(widens? n w): every value of dtype n is a value of dtype w",
      [](TensorEGraph&, Args a) {
        const Value &n = a[0]->value(), &w = a[1]->value();
        return of_bool(n.kind == Value::Kind::DType && w.kind == Value::Kind::DType && represents_exactly(n.dtype, w.dtype));
      });
  add("half?", {T::DType}, T::Bool, "float16 or bfloat16", [](TensorEGraph&, Args a) {
    const Value& v = a[0]->value();
    return of_bool(v.kind == Value::Kind::DType && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16));
  });
  add("lowest", {T::DType}, T::Number, "the dtype's most negative finite value (0 for unsigned)",
      [](TensorEGraph&, Args a) {
        if (a[0]->value().kind != Value::Kind::DType) throw Decline{};
        return RValue::of(Value::of_float(lowest(a[0]->value().dtype)));
      });
  // Size arithmetic.
  add("+", {T::Size, T::Size}, T::Size, "sum", [](TensorEGraph&, Args a) { return of_size(to_size(a[0]->value()) + to_size(a[1]->value())); });
  add("-", {T::Size, T::Size}, T::Size, "difference", [](TensorEGraph&, Args a) { return of_size(to_size(a[0]->value()) - to_size(a[1]->value())); });
  add("*", {T::Size, T::Size}, T::Size, "product", [](TensorEGraph&, Args a) { return of_size(to_size(a[0]->value()) * to_size(a[1]->value())); });
  // Number arithmetic (Python scalars: a scale, a fill value), in double.
  // Two integers multiply as integers, as Python's do: x * (a * b) then
  // keeps an integer tensor's dtype where (x * a) * b kept it (a float
  // product made iota * 1 * 1 a float32 class merged with an int64 one).
  add("times", {T::Number, T::Number}, T::Number, "(times a b): the product of two numbers (a scale of a scale); of two integers, an integer",
      [](TensorEGraph&, Args a) {
        const Value &x = a[0]->value(), &y = a[1]->value();
        if (x.kind == Value::Kind::Int && y.kind == Value::Kind::Int) {
          int64_t product = 0;
          if (__builtin_mul_overflow(x.i, y.i, &product)) throw Decline{};
          return RValue::of(Value::of_int(product));
        }
        return RValue::of(Value::of_float(to_double(x) * to_double(y)));
      });
  add("one-over", {T::Number}, T::Number, "(one-over c): 1 / c, for a nonzero number (declines at 0)", [](TensorEGraph&, Args a) {
    const double c = to_double(a[0]->value());
    if (c == 0.0) throw Decline{};
    return RValue::of(Value::of_float(1.0 / c));
  });
  add("constant", {T::Tensor}, T::Number,
      "(constant t): the one value every element of t holds (a 0-d constant, a filled tensor; a float32 one's fill "
      "value as written); declines where it is not known",
      [](TensorEGraph& t, Args a) {
        if (const auto v = t.analysis.constant(t.egraph, a[0]->cls)) return RValue::of(Value::of_float(*v));
        if (const auto v = float32_fill(t, a[0]->cls)) return RValue::of(Value::of_float(*v));
        throw Decline{};
      });
  // Comparisons: sizes are decided by the shape prover (Z3); a question it
  // cannot settle is false both ways.
  add("=", {T::Any, T::Any}, T::Bool, "equal (sizes and size lists: proved equal)",
      [](TensorEGraph& t, Args a) { return of_bool(equality(t, *a[0], *a[1]) == Truth::True); });
  add("!=", {T::Any, T::Any}, T::Bool, "different (sizes: proved different)",
      [](TensorEGraph& t, Args a) { return of_bool(equality(t, *a[0], *a[1]) == Truth::False); });
  add("<=", {T::Size, T::Size}, T::Bool, "proved at most", [](TensorEGraph& t, Args a) { return of_bool(t.prover.is_le(to_size(a[0]->value()), to_size(a[1]->value()))); });
  add("<", {T::Size, T::Size}, T::Bool, "proved less", [](TensorEGraph& t, Args a) {
    if (a[0]->value().kind == Value::Kind::Int && a[1]->value().kind == Value::Kind::Int) return of_bool(a[0]->value().i < a[1]->value().i);
    return of_bool(t.prover.is_le(to_size(a[0]->value()) + 1, to_size(a[1]->value())));
  });
  add(">=", {T::Size, T::Size}, T::Bool, "proved at least", [](TensorEGraph& t, Args a) { return of_bool(t.prover.is_le(to_size(a[1]->value()), to_size(a[0]->value()))); });
  add(">", {T::Size, T::Size}, T::Bool, "proved greater", [](TensorEGraph& t, Args a) { return of_bool(t.prover.is_le(to_size(a[1]->value()) + 1, to_size(a[0]->value()))); });
  add("broadcastable?", {T::Sizes, T::Sizes}, T::Bool,
      "two shapes broadcast together: aligned from the right, each pair proved equal or one of them 1",
      [](TensorEGraph& t, Args a) {
        const std::vector<SymExpr> x = to_sizes(a[0]->value()), y = to_sizes(a[1]->value());
        for (size_t i = 1; i <= std::min(x.size(), y.size()); ++i) {
          const SymExpr &p = x[x.size() - i], &q = y[y.size() - i];
          if (!t.prover.is_equal(p, q) && !t.prover.is_equal(p, 1) && !t.prover.is_equal(q, 1)) return of_bool(false);
        }
        return of_bool(true);
      });
  add("view-of-broadcast", {T::Sizes, T::Sizes, T::Sizes}, T::Sizes,
      "(view-of-broadcast b from to): the shape a tensor of shape b that broadcasts into `from` takes when `from` is "
      "viewed as `to` (declines where it cannot follow the view)",
      [](TensorEGraph& t, Args a) {
        return RValue::of_sizes(view_of_broadcast(t, to_sizes(a[0]->value()), to_sizes(a[1]->value()), to_sizes(a[2]->value())));
      });
  add("divides", {T::Size, T::Size}, T::Bool, "(divides d n): d proved to divide n", [](TensorEGraph& t, Args a) {
    return of_bool(t.prover.divides(to_size(a[0]->value()), to_size(a[1]->value())) == Truth::True);
  });
  add("not", {T::Bool}, T::Bool, "negation", [](TensorEGraph&, Args a) { return of_bool(!a[0]->truth()); });
  // The interpreter evaluates these itself: they stop at the first argument
  // that settles them (rule_run.cpp), so they have no code here.
  add("and", {T::Bool}, T::Bool, "all hold", nullptr, true);
  add("or", {T::Bool}, T::Bool, "one holds", nullptr, true);
  add("list", {T::Size}, T::Sizes, "a list of the values given (what [a b c] writes)", [](TensorEGraph&, Args a) {
    // Sizes stay sizes (the size functions and comparisons read them directly).
    std::vector<SymExpr> sizes;
    for (const RValue* x : a) {
      if (x->scalar == RValue::Scalar::Int) {
        sizes.emplace_back(x->number);
        continue;
      }
      const Value& v = x->value();
      if (v.kind == Value::Kind::Int) sizes.emplace_back(v.i);
      else if (v.kind == Value::Kind::Sym) sizes.push_back(v.sym);
      else break;
    }
    if (sizes.size() == a.size()) return RValue::of_sizes(std::move(sizes));
    std::vector<Value> out;
    for (const RValue* x : a) out.push_back(x->value());
    return RValue::of(Value::of_list(std::move(out)));
  }, true);
  return f;
}

}  // namespace

const Value& RValue::value() const {
  static const Value none;
  if (own) return *own;
  if (ref) return *ref;
  if (const std::vector<SymExpr>* s = size_list()) return own.emplace(sizes_value(*s));
  if (scalar == Scalar::Int) return own.emplace(Value::of_int(number));
  if (scalar == Scalar::Bool) return own.emplace(Value::of_bool(number != 0));
  return none;
}

RValue materialize(RValue x) {
  if (x.shape && !x.sizes && !x.own && !x.ref) x.sizes = *x.shape;
  x.shape = nullptr;
  return x;
}

Truth equality(TensorEGraph& t, const RValue& a, const RValue& b) {
  if (a.scalar != RValue::Scalar::None && a.scalar == b.scalar) return a.number == b.number ? Truth::True : Truth::False;
  if (a.cls != eg::kNoId || b.cls != eg::kNoId)
    return a.cls != eg::kNoId && b.cls != eg::kNoId && t.egraph.find(a.cls) == t.egraph.find(b.cls) ? Truth::True : Truth::False;
  if (a.size_list() && b.size_list()) return shape_equality(t, *a.size_list(), *b.size_list());
  return value_equality(t, a.value(), b.value());  // (value() makes a size list a list Value)
}

std::vector<SymExpr> to_sizes(const Value& v) {
  if (!v.is_list()) throw Decline{};
  std::vector<SymExpr> out;
  for (const Value& x : v.list) out.push_back(to_size(x));
  return out;
}

const std::vector<Function>& all_functions() {
  static const std::vector<Function> f = make_functions();
  return f;
}

const Function* find_function(std::string_view name) {
  for (const Function& f : all_functions())
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace sator::rulelang
