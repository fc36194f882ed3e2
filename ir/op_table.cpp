#include "ir/op_table.h"

#include <stdexcept>
#include <unordered_map>

#include "ir/shape_fns.h"

namespace sator {

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::Layout: return "layout";
    case OpClass::Pointwise: return "pointwise";
    case OpClass::Reduction: return "reduction";
    case OpClass::Matmul: return "matmul";
    case OpClass::Attention: return "attention";
    case OpClass::Random: return "random";
    case OpClass::Creation: return "creation";
    case OpClass::Other: return "other";
    case OpClass::Structural: return "structural";
  }
  return "?";
}

namespace {

ParamType parse_type(std::string t, bool& optional) {
  optional = false;
  if (auto paren = t.find('('); paren != std::string::npos) {  // alias annotation: Tensor(a)
    auto close = t.find(')', paren);
    t.erase(paren, close - paren + 1);
  }
  if (!t.empty() && t.back() == '?') {
    optional = true;
    t.pop_back();
  }
  bool list = false;
  if (auto bracket = t.find('['); bracket != std::string::npos) {
    list = true;
    t.erase(bracket);
  }
  if (!t.empty() && t.back() == '?') {  // Tensor?[]: optional elements
    optional = true;
    t.pop_back();
  }
  if (t == "Tensor") return list ? ParamType::TensorList : ParamType::Tensor;
  if (t == "int") return list ? ParamType::IntList : ParamType::Int;
  if (t == "SymInt") return list ? ParamType::SymIntList : ParamType::SymInt;
  if (t == "bool") return list ? ParamType::BoolList : ParamType::Bool;
  if (t == "float") return ParamType::Float;
  if (t == "Scalar") return ParamType::Scalar;
  if (t == "ScalarType") return ParamType::ScalarType;
  if (t == "Layout") return ParamType::Layout;
  if (t == "Device") return ParamType::Device;
  if (t == "MemoryFormat") return ParamType::MemoryFormat;
  if (t == "str") return ParamType::Str;
  if (t == "Any") return ParamType::Any;
  throw std::logic_error("op table: unknown schema type " + t);
}

// "Tensor self, int[1] dim=[], *, ScalarType? dtype=None"
std::vector<ParamSpec> parse_schema(std::string_view schema) {
  std::vector<ParamSpec> params;
  bool kwarg_only = false;
  size_t pos = 0;
  while (pos < schema.size()) {
    size_t comma = schema.find(", ", pos);
    std::string item(schema.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? schema.size() : comma + 2;
    if (item == "*") {
      kwarg_only = true;
      continue;
    }
    ParamSpec p;
    const size_t space = item.rfind(' ');
    std::string type = item.substr(0, space), rest = item.substr(space + 1);
    if (auto eq = rest.find('='); eq != std::string::npos) {
      p.has_default = true;
      p.default_text = rest.substr(eq + 1);
      rest.erase(eq);
    }
    p.name = rest;
    p.type = parse_type(type, p.optional);
    p.kwarg_only = kwarg_only;
    params.push_back(std::move(p));
  }
  return params;
}

struct Row {
  const char* name;
  OpClass cls;
  const char* schema;  // nullptr: arguments not bound (opaque / variadic)
  ShapeFn fn;
};

namespace sf = shape_fns;
using C = OpClass;

// Schemas are ATen's (native_functions.yaml / prims), minus return types.
const Row kRows[] = {
    // layout: pure index remappings or identities by value
    {"aten.view.default", C::Layout, "Tensor(a) self, SymInt[] size", sf::view},
    {"aten._unsafe_view.default", C::Layout, "Tensor self, SymInt[] size", sf::view},
    {"aten.reshape.default", C::Layout, "Tensor(a) self, SymInt[] shape", sf::view},
    {"aten.permute.default", C::Layout, "Tensor(a) self, int[] dims", sf::permute},
    {"aten.transpose.int", C::Layout, "Tensor(a) self, int dim0, int dim1", sf::transpose},
    {"aten.t.default", C::Layout, "Tensor(a) self", sf::t},
    {"aten.expand.default", C::Layout, "Tensor(a) self, SymInt[] size, *, bool implicit=False", sf::expand},
    {"aten.clone.default", C::Layout, "Tensor self, *, MemoryFormat? memory_format=None", sf::identity},
    {"aten.unsqueeze.default", C::Layout, "Tensor(a) self, int dim", sf::unsqueeze},
    {"aten.squeeze.dim", C::Layout, "Tensor(a) self, int dim", sf::squeeze_dim},
    {"aten.alias.default", C::Layout, "Tensor(a) self", sf::identity},
    {"aten.slice.Tensor", C::Layout, "Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1", sf::slice},
    {"aten.select.int", C::Layout, "Tensor(a) self, int dim, SymInt index", sf::select},
    {"aten.split.Tensor", C::Layout, "Tensor(a) self, SymInt split_size, int dim=0", sf::split},
    {"aten.chunk.default", C::Layout, "Tensor(a) self, int chunks, int dim=0", sf::chunk},
    {"aten.lift_fresh_copy.default", C::Layout, "Tensor self", sf::identity},
    {"aten.cat.default", C::Other, "Tensor[] tensors, int dim=0", sf::cat},
    {"aten.constant_pad_nd.default", C::Other, "Tensor self, SymInt[] pad, Scalar value=0", sf::constant_pad_nd},
    {"aten.slice_scatter.default", C::Other, "Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1", sf::scatter_like},
    {"aten.select_scatter.default", C::Other, "Tensor self, Tensor src, int dim, SymInt index", sf::scatter_like},
    {"aten.index_put.default", C::Other, "Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False", sf::scatter_like},
    {"aten.scatter.value", C::Other, "Tensor self, int dim, Tensor index, Scalar value", sf::scatter_like},
    {"aten.gather.default", C::Other, "Tensor self, int dim, Tensor index, *, bool sparse_grad=False", sf::gather},
    {"aten.index.Tensor", C::Other, "Tensor self, Tensor?[] indices", sf::index_tensor},
    {"aten.embedding.default", C::Other, "Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False", sf::embedding},

    // pointwise
    {"aten.add.Tensor", C::Pointwise, "Tensor self, Tensor other, *, Scalar alpha=1", sf::binary_arith},
    {"aten.sub.Tensor", C::Pointwise, "Tensor self, Tensor other, *, Scalar alpha=1", sf::binary_arith},
    {"aten.mul.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::binary_arith},
    {"aten.mul.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::binary_arith},
    {"aten.div.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::true_divide},
    {"aten.div.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::true_divide},
    {"aten.eq.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::comparison},
    {"aten.eq.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    {"aten.ne.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::comparison},
    {"aten.gt.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::comparison},
    {"aten.ge.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::comparison},
    {"aten.le.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::comparison},
    {"aten.le.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    // The rest of the comparison family (not in the corpus; Inductor's output
    // for Mistral has gt.Tensor).
    {"aten.ne.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    {"aten.gt.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    {"aten.ge.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    {"aten.lt.Scalar", C::Pointwise, "Tensor self, Scalar other", sf::comparison},
    {"aten.lt.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    {"aten.bitwise_and.Tensor", C::Pointwise, "Tensor self, Tensor other", sf::bitwise},
    {"aten.logical_and.default", C::Pointwise, "Tensor self, Tensor other", sf::comparison},
    {"aten.exp.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.erf.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.cos.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.sin.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.tanh.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.log.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.rsqrt.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.reciprocal.default", C::Pointwise, "Tensor self", sf::unary_float},
    {"aten.neg.default", C::Pointwise, "Tensor self", sf::unary_same},
    {"aten.relu.default", C::Pointwise, "Tensor self", sf::unary_same},
    {"aten.pow.Tensor_Scalar", C::Pointwise, "Tensor self, Scalar exponent", sf::pow_scalar},
    {"aten.logical_not.default", C::Pointwise, "Tensor self", sf::logical_not},
    {"aten.bitwise_not.default", C::Pointwise, "Tensor self", sf::unary_same},
    {"aten.where.self", C::Pointwise, "Tensor condition, Tensor self, Tensor other", sf::where},
    {"prims.fma.default", C::Pointwise, "Tensor a, Tensor b, Tensor c", sf::fma},
    {"prims.convert_element_type.default", C::Pointwise, "Tensor a, ScalarType dtype", sf::convert_element_type},

    // reductions
    {"aten.amax.default", C::Reduction, "Tensor self, int[1] dim=[], bool keepdim=False", sf::amax},
    {"aten.sum.default", C::Reduction, "Tensor self, *, ScalarType? dtype=None", sf::sum},
    {"aten.sum.dim_IntList", C::Reduction, "Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None", sf::sum_dim},
    {"aten.mean.default", C::Reduction, "Tensor self, *, ScalarType? dtype=None", sf::mean},
    {"aten.mean.dim", C::Reduction, "Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None", sf::mean_dim},
    {"aten.var_mean.correction", C::Reduction, "Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False", sf::var_mean},
    {"aten._softmax.default", C::Reduction, "Tensor self, int dim, bool half_to_float", sf::softmax},
    {"aten._safe_softmax.default", C::Reduction, "Tensor self, int dim, ScalarType? dtype=None", sf::safe_softmax},
    {"aten.any.dim", C::Reduction, "Tensor self, int dim, bool keepdim=False", sf::any_dim},
    {"aten.cumsum.default", C::Reduction, "Tensor self, int dim, *, ScalarType? dtype=None", sf::cumsum},

    // matmul and convolution
    {"aten.mm.default", C::Matmul, "Tensor self, Tensor mat2", sf::mm},
    {"aten.bmm.default", C::Matmul, "Tensor self, Tensor mat2", sf::bmm},
    {"aten.addmm.default", C::Matmul, "Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1", sf::addmm},
    {"aten.baddbmm.default", C::Matmul, "Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1",
     sf::baddbmm},
    {"aten.matmul.default", C::Matmul, "Tensor self, Tensor other", sf::matmul},
    {"aten.linear.default", C::Matmul, "Tensor input, Tensor weight, Tensor? bias=None", sf::linear},
    {"aten.convolution.default", C::Matmul, "Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups", sf::convolution},
    {"aten.convolution_backward.default", C::Matmul, "Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask", sf::convolution_backward},

    // attention
    {"aten.scaled_dot_product_attention.default", C::Attention, "Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False", sf::sdpa},
    {"aten._scaled_dot_product_efficient_attention.default", C::Attention, "Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, *, float? scale=None", sf::sdpa_efficient},
    {"aten._scaled_dot_product_efficient_attention_backward.default", C::Attention, "Tensor grad_out_, Tensor query, Tensor key, Tensor value, Tensor? attn_bias, Tensor out, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, float dropout_p, bool[4] grad_input_mask, bool is_causal=False, *, float? scale=None", sf::sdpa_efficient_backward},
    {"aten._scaled_dot_product_cudnn_attention.default", C::Attention, "Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, *, float? scale=None", sf::sdpa_cudnn},
    {"aten._scaled_dot_product_cudnn_attention_backward.default", C::Attention, "Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, Tensor? attn_bias, Tensor? cum_seq_q, Tensor? cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, *, float? scale=None", sf::sdpa_cudnn_backward},

    // creation and randomness
    {"aten.full.default", C::Creation, "SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None", sf::full},
    {"aten.scalar_tensor.default", C::Creation, "Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None", sf::scalar_tensor},
    {"prims.iota.default", C::Creation, "SymInt length, *, SymInt start, SymInt step, ScalarType dtype, Device device, bool requires_grad", sf::iota},
    {"aten.rand.default", C::Random, "SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None", sf::rand},
    {"prims.inductor_random.default", C::Random, "SymInt[] size, Tensor seed, str mode, *, SymInt? offset=None", sf::inductor_random},
    {"prims.inductor_seeds.default", C::Random, "int count, Device device", sf::inductor_seeds},
    {"prims.inductor_lookup_seed.default", C::Random, "Tensor seeds, int index", sf::inductor_lookup_seed},

    // symbolic integers (Python operators on SymInts) and tuple access
    {"_operator.mul", C::Structural, "Any a, Any b", sf::sym_mul},
    {"_operator.add", C::Structural, "Any a, Any b", sf::sym_add},
    {"_operator.sub", C::Structural, "Any a, Any b", sf::sym_sub},
    {"_operator.neg", C::Structural, "Any a", sf::sym_neg},
    {"_operator.floordiv", C::Structural, "Any a, Any b", sf::sym_floordiv},
    {"aten.sym_size.int", C::Structural, "Tensor self, int dim", sf::sym_size},
    {"getitem", C::Structural, "Any a, int index", sf::getitem},

    // structure without a shape function of its own
    {"placeholder", C::Structural, nullptr, nullptr},
    {"output", C::Structural, nullptr, nullptr},
    {"get_attr", C::Structural, nullptr, nullptr},
    {"hop.invoke_subgraph", C::Other, nullptr, nullptr},
};

struct Table {
  std::vector<OpInfo> ops;
  std::unordered_map<std::string_view, size_t> by_name;

  Table() {
    ops.reserve(std::size(kRows));
    for (const Row& r : kRows) {
      OpInfo info;
      info.name = r.name;
      info.cls = r.cls;
      info.variadic = r.schema == nullptr;
      if (r.schema) info.params = parse_schema(r.schema);
      info.shape_fn = r.fn;
      ops.push_back(std::move(info));
    }
    for (size_t i = 0; i < ops.size(); ++i) by_name.emplace(ops[i].name, i);
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const OpInfo* find_op(std::string_view name) {
  const Table& t = table();
  auto it = t.by_name.find(name);
  return it == t.by_name.end() ? nullptr : &t.ops[it->second];
}

const std::vector<OpInfo>& all_ops() { return table().ops; }

namespace {

// Short name -> op, built once ("view" -> aten.view.default); a short name
// two ops share maps to nullptr (ambiguous).
struct ShortNames {
  std::unordered_map<std::string_view, const OpInfo*> by_name;
  std::unordered_map<std::string_view, std::string> clash;
  ShortNames() {
    for (const OpInfo& op : all_ops()) {
      std::string_view s = op.name;
      for (std::string_view prefix : {"aten.", "prims."})
        if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
      if (s.size() > 8 && s.substr(s.size() - 8) == ".default") s.remove_suffix(8);
      auto [it, fresh] = by_name.emplace(s, &op);
      if (!fresh && it->second) {
        clash[s] = it->second->name + " and " + op.name;
        it->second = nullptr;
      }
    }
  }
};

}  // namespace

const OpInfo* find_op_by_short_name(std::string_view name, std::string* why) {
  if (const OpInfo* op = find_op(name)) return op;
  static const ShortNames names;
  const auto it = names.by_name.find(name);
  if (it != names.by_name.end() && it->second) return it->second;
  if (why) {
    // (Appended piece by piece: g++ 12 warns, wrongly, on "'" + string.)
    std::string text = it != names.by_name.end() ? "'" : "no op '";
    text.append(name);
    if (it != names.by_name.end()) text.append("' is both ").append(names.clash.at(name)).append(": write the full name");
    else text.append("' in the op table");
    *why = std::move(text);
  }
  return nullptr;
}

namespace {

// The fact table: every op with a fact, and its facts.
std::vector<std::pair<std::string_view, uint16_t>> make_facts() {
  using F = OpFact;
  auto f = [](std::initializer_list<F> fs) {
    uint16_t bits = 0;
    for (F x : fs) bits |= static_cast<uint16_t>(x);
    return bits;
  };
  // Layout ops, copies and gathers: they pick elements of their input, so
  // they are linear in it too.
  const uint16_t picks = f({F::PicksElements, F::LinearInFirst});
  const uint16_t view = f({F::Aliases, F::NoKernel}) | picks;  // a layout op PyTorch serves as a view
  const uint16_t linear = f({F::LinearInFirst});
  const uint16_t view_of_shape =
      f({F::CountedLayout, F::NoKernel, F::ViewOrReshape, F::ReshapeByValue, F::ShapeArgument}) | picks;
  return {
      {"aten.view.default", view_of_shape | f({F::Aliases})},
      {"aten._unsafe_view.default", view_of_shape | f({F::Aliases})},
      {"aten.reshape.default", view_of_shape},  // a copy where the input is not contiguous
      {"aten.unsqueeze.default", f({F::CountedLayout, F::Aliases, F::NoKernel, F::ReshapeByValue}) | picks},
      {"aten.squeeze.dim", f({F::CountedLayout, F::Aliases, F::NoKernel, F::ReshapeByValue}) | picks},
      {"aten.permute.default", f({F::CountedLayout, F::Aliases, F::NoKernel}) | picks},
      {"aten.transpose.int", f({F::CountedLayout, F::Aliases, F::NoKernel}) | picks},
      {"aten.t.default", f({F::CountedLayout, F::Aliases, F::NoKernel}) | picks},
      {"aten.expand.default", f({F::CountedLayout, F::Aliases, F::NoKernel, F::ShapeArgument}) | picks},
      {"aten.alias.default", f({F::CountedLayout, F::Aliases, F::NoKernel, F::SameValue}) | picks},
      {"aten.clone.default", f({F::CountedLayout, F::SameValue}) | picks},
      {"aten.lift_fresh_copy.default", f({F::NoKernel, F::SameValue}) | picks},
      {"aten.contiguous.default", f({F::SameValue}) | picks},
      {"aten.slice.Tensor", view},
      {"aten.select.int", view},
      {"aten.detach.default", view},
      {"aten.squeeze.dims", f({F::Aliases}) | picks},
      {"aten.squeeze.default", f({F::Aliases}) | picks},
      {"aten.split.Tensor", f({F::Aliases}) | picks},
      {"aten.split_with_sizes.default", f({F::Aliases}) | picks},
      {"aten.unbind.int", f({F::Aliases}) | picks},
      {"aten.chunk.default", f({F::Aliases}) | picks},
      {"aten.as_strided.default", f({F::Aliases}) | picks},
      {"aten.narrow.default", f({F::Aliases}) | picks},
      {"aten.diagonal.default", f({F::Aliases}) | picks},
      {"aten.unfold.default", f({F::Aliases}) | picks},
      {"aten.index.Tensor", picks},
      {"aten.index_select.default", picks},
      {"aten.gather.default", picks},
      {"aten.sym_size.int", f({F::NoKernel})},
      {"prims.convert_element_type.default", f({F::Valuewise}) | linear},
      {"aten._to_copy.default", linear},
      {"aten.mm.default", f({F::FreshContiguous})},
      {"aten.bmm.default", f({F::FreshContiguous})},
      {"aten.addmm.default", f({F::FreshContiguous})},
      {"aten.baddbmm.default", f({F::FreshContiguous})},
      {"aten.matmul.default", f({F::FreshContiguous})},
      {"aten.linear.default", f({F::FreshContiguous})},
      {"aten.sum.dim_IntList", linear | f({F::FreshContiguous, F::CudaReduction})},
      {"aten.sum.default", linear | f({F::FreshContiguous, F::CudaReduction})},
      {"aten.mean.dim", linear | f({F::FreshContiguous, F::CudaReduction})},
      {"aten.mean.default", f({F::FreshContiguous, F::CudaReduction})},
      {"aten.amax.default", f({F::FreshContiguous, F::CudaReduction})},
      {"aten.amin.default", f({F::FreshContiguous, F::CudaReduction})},
      {"aten.prod.dim_int", f({F::FreshContiguous, F::CudaReduction})},
      {"aten.var_mean.correction", f({F::FreshContiguous, F::CudaReduction, F::WelfordReduction})},
      {"aten.var.correction", f({F::FreshContiguous, F::CudaReduction, F::WelfordReduction})},
      {"aten.max.dim", f({F::FreshContiguous, F::CudaReduction, F::IndexReduction})},
      {"aten.min.dim", f({F::FreshContiguous, F::CudaReduction, F::IndexReduction})},
      {"aten.argmax.default", f({F::FreshContiguous, F::CudaReduction, F::IndexReduction})},
      {"aten.argmin.default", f({F::FreshContiguous, F::CudaReduction, F::IndexReduction})},
      {"aten.mul.Tensor", f({F::Valuewise})},
      {"aten.div.Tensor", f({F::Valuewise}) | linear},
      {"aten.add.Tensor", f({F::Valuewise})},
      {"aten.sub.Tensor", f({F::Valuewise})},
      {"aten.neg.default", f({F::Valuewise}) | linear},
      {"aten.exp.default", f({F::Valuewise})},
      {"aten.tanh.default", f({F::Valuewise})},
      {"aten.relu.default", f({F::Valuewise})},
      {"aten.erf.default", f({F::Valuewise})},
      {"aten.rsqrt.default", f({F::Valuewise})},
      {"aten.pow.Tensor_Scalar", f({F::Valuewise})},
      {"aten.mul.Scalar", f({F::Valuewise})},
      {"aten.div.Scalar", f({F::Valuewise}) | linear},
      {"prims.fma.default", f({F::EagerTemporary})},
      {"aten.scaled_dot_product_attention.default", f({F::OwnLayout})},
      {"aten._scaled_dot_product_efficient_attention.default", f({F::OwnLayout})},
      {"aten._scaled_dot_product_efficient_attention_backward.default", f({F::OwnLayout})},
      {"aten._scaled_dot_product_cudnn_attention.default", f({F::OwnLayout})},
      {"aten._scaled_dot_product_cudnn_attention_backward.default", f({F::OwnLayout})},
      {"getitem", linear},  // one result of a multi-result op (split, unbind, chunk)
  };
}

}  // namespace

const std::vector<std::pair<std::string_view, uint16_t>>& fact_table() {
  static const std::vector<std::pair<std::string_view, uint16_t>> table = make_facts();
  return table;
}

namespace {

uint16_t fact_bits(std::string_view op) {
  static const std::unordered_map<std::string_view, uint16_t> facts(fact_table().begin(), fact_table().end());
  const auto it = facts.find(op);
  return it == facts.end() ? 0 : it->second;
}

}  // namespace

bool op_has(std::string_view op, OpFact fact) { return (fact_bits(op) & static_cast<uint16_t>(fact)) != 0; }

OpFacts::OpFacts(std::string_view op) : bits_(fact_bits(op)) {}

std::vector<std::string_view> ops_with(OpFact fact) {
  std::vector<std::string_view> out;
  for (const auto& [op, bits] : fact_table())
    if (bits & static_cast<uint16_t>(fact)) out.push_back(op);
  return out;
}

}  // namespace sator
