// The tensor language's op table: every op that occurs in the corpus, with
// its ATen schema (so its arguments bind to typed, named parameters), its
// class, and its shape-and-dtype function where PyTorch defines one. An op
// without a shape function is opaque: its recorded type is kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace sator {

enum class OpClass : uint8_t { Layout, Pointwise, Reduction, Matmul, Attention, Random, Creation, Other, Structural };
std::string_view op_class_name(OpClass c);

// Parameter types of ATen schemas, as far as binding needs to tell them apart.
enum class ParamType : uint8_t {
  Tensor, TensorList, Int, IntList, SymInt, SymIntList, Float, Bool, BoolList,
  Scalar, ScalarType, Layout, Device, MemoryFormat, Str, Any,
};

struct ParamSpec {
  std::string name;
  ParamType type;
  bool optional = false;     // `T?`, or list elements `Tensor?[]`
  bool kwarg_only = false;   // after `*`
  bool has_default = false;
  std::string default_text;  // as written in the schema, e.g. "False", "[]", "1"
};

class InferContext;
struct Inferred;
using ShapeFn = Inferred (*)(InferContext&);

struct OpInfo {
  std::string name;  // "aten.view.default"
  OpClass cls;
  std::vector<ParamSpec> params;
  bool variadic = false;  // schema unknown or `...`: arguments are not bound
  ShapeFn shape_fn = nullptr;
};

// nullptr for an op the table does not know (it is opaque).
const OpInfo* find_op(std::string_view name);
// The op a name stands for in a rule file or a text graph: the full name
// ("aten.view.default") or the short one without "aten."/"prims." and
// ".default" ("view", "slice.Tensor"); nullptr if none or ambiguous (`why`
// says which).
const OpInfo* find_op_by_short_name(std::string_view name, std::string* why = nullptr);
const std::vector<OpInfo>& all_ops();

// Facts about ops that rules, the cost model, the chunker, the writer and
// the checker read. Each is stated once, in op_table.cpp's fact table
// (which also covers ops the schema table does not know).
enum class OpFact : uint16_t {
  CountedLayout = 1 << 0,  // one of the 11 layout ops corpus/manifest.json counts (design.md)
  Aliases = 1 << 1,        // the result is a view of the first argument's storage: no new memory
  NoKernel = 1 << 2,       // launches no kernel: served as a view of its input, or metadata
  ViewOrReshape = 1 << 3,  // written `view` where the input is contiguous, `reshape` where not
  ReshapeByValue = 1 << 4, // the input's elements in row-major order under a new shape
  SameValue = 1 << 5,      // its value is its input's (a copy, an alias)
  Valuewise = 1 << 6,      // elementwise on one tensor, out[i] = f(in[i]): layout ops move through it
  // Every output element is an element of the first argument (layout ops,
  // copies, gathers): a tensor of one value keeps it, a mask of zeros and
  // masking values stays one.
  PicksElements = 1 << 7,
  // Linear in the first argument when the others are held fixed:
  // f(a x, ...) = a f(x, ...) (layout ops, copies, casts, sums, division).
  LinearInFirst = 1 << 8,
  // Its second argument is the result's shape, size for size (view,
  // reshape, expand): a rewrite that changes the result's shape edits it.
  ShapeArgument = 1 << 9,
  // Run eagerly, it allocates a temporary the size of its result while it
  // runs (prims.fma is a * b, then + c): measured on the H100, the miss of
  // OPT's training graphs' peak estimates (docs/results/memory.md).
  EagerTemporary = 1 << 10,
  // Its results' layout is the kernel's choice, not implied by its inputs'
  // (the fused attention kernels write their output in BSHD order): the
  // writer does not know their strides, and views of them become reshapes.
  OwnLayout = 1 << 11,
  // Run eagerly on the GPU it is ATen's reduction kernel, which may stage
  // partial results in a global buffer while it runs (memory/reduction_staging.h);
  // its accumulator is the input's float type, or (with the facts below) a
  // Welford state or a value with its index.
  CudaReduction = 1 << 12,
  WelfordReduction = 1 << 13,
  IndexReduction = 1 << 14,
  // Writes a fresh contiguous result whatever its inputs' layout (cuBLAS's
  // products, the reductions); unlike a convolution, whose result follows
  // its input's memory format.
  FreshContiguous = 1 << 15,
};
bool op_has(std::string_view op, OpFact fact);
// All of an op's facts at once, for a loop that asks several of one node
// (each op_has is a hash of the name).
class OpFacts {
 public:
  explicit OpFacts(std::string_view op);
  bool has(OpFact fact) const { return (bits_ & static_cast<uint16_t>(fact)) != 0; }

 private:
  uint16_t bits_ = 0;
};
// Every op with the fact, in the fact table's order.
std::vector<std::string_view> ops_with(OpFact fact);

// The 11 layout ops counted by corpus/manifest.json (design.md).
inline bool is_counted_layout_op(std::string_view op) { return op_has(op, OpFact::CountedLayout); }

}  // namespace sator
