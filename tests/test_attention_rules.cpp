// The attention forms of the corpus, one by one: what the fused node says.
#include <set>
#include <catch2/catch.hpp>

#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "rules/attention_rules.h"
#include "rules/dropout_draws.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

std::vector<const Node*> sdpa_nodes(const Graph& g) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes)
    if (n.op == "aten.scaled_dot_product_attention.default") out.push_back(&n);
  return out;
}

double scale_of(const Node& n) {
  const Value* s = n.kwarg("scale");
  REQUIRE(s);
  return s->f;
}

// A corpus graph by name ("gpt2.infer.g0"), or by its path under corpus/
// ("zoo/graphs/bert.amp-eager.infer.g0").
Graph optimized(const std::string& name) {
  const std::string path = name.find('/') == std::string::npos ? "graphs/" + name : name;
  return pipeline::optimize(load_graph(test::corpus_path(path + ".json")), {}).output;
}

}  // namespace

TEST_CASE("every recomposition and attention rule has a description", "[rules][attention]") {
  for (const auto* info : {&rules::recompose_rule_info(), &rules::attention_rule_info()})
    for (const auto& r : *info) CHECK(std::string(r.description).size() > 10);
  Graph g = load_graph(test::corpus_path("graphs/zoo_sfdp1.infer.g0.json"));
  TensorEGraph t(g);
  const auto recompose = rules::recompose_rules(t);
  REQUIRE(recompose.size() == rules::recompose_rule_info().size());
  for (size_t i = 0; i < recompose.size(); ++i) CHECK(recompose[i].name() == rules::recompose_rule_info()[i].name);
  // One rewrite per softmax op (_softmax, _safe_softmax) for each rule;
  // attention-dropout is opt-in.
  for (const eg::Rewrite& r : rules::attention_rules(t)) CHECK(r.name() == std::string("attention"));
  CHECK(rules::attention_rules(t).size() == 2);
  std::set<std::string> names;
  for (const eg::Rewrite& r : rules::attention_rules(t, /*fuse_dropout=*/true)) names.insert(r.name());
  std::set<std::string> described;
  for (const auto& r : rules::attention_rule_info()) described.insert(r.name);
  CHECK(names == described);
}

TEST_CASE("attention: scale by division, no mask (zoo_sfdp1)", "[rules][attention]") {
  Graph g = optimized("zoo_sfdp1.infer.g0");
  const auto s = sdpa_nodes(g);
  REQUIRE(s.size() == 1);
  CHECK(scale_of(*s[0]) == 1.0 / 8.0);
  CHECK(s[0]->args[3].is_none());      // no mask
  CHECK(s[0]->args[4].f == 0.0);       // no dropout
  CHECK(s[0]->tensor.shape == std::vector<SymExpr>{4, 8, 256, 64});
}

TEST_CASE("attention: scale by multiplication and a causal mask built from iotas (zoo_hf)", "[rules][attention]") {
  Graph g = optimized("zoo_hf.infer.g0");
  const auto s = sdpa_nodes(g);
  REQUIRE(s.size() == 1);
  CHECK(scale_of(*s[0]) == 0.125);
  CHECK(s[0]->args[3].is_none());  // where(j - i >= 1, -inf, 0) is the causal triangle:
  CHECK(s[0]->args[5].b);          // is_causal
}

TEST_CASE("attention: causal masks become is_causal, other masks stay masks", "[rules][attention]") {
  auto check = [](const char* name, bool causal, bool mask) {
    INFO(name);
    Graph g = optimized(name);
    for (const Node* n : sdpa_nodes(g)) {
      CHECK(n->args[5].b == causal);
      CHECK(n->args[3].is_node() == mask);
    }
  };
  check("gpt2.infer.g0", true, false);      // where(col <= row, 0, finfo.min)
  check("gpt2.infer.dyn.g0", true, false);  // the same with symbolic sizes
  check("llama.infer.g0", true, false);
  // where(row >= 0, 0, finfo.min): every entry kept, so no mask at all.
  check("bert.infer.g0", false, false);
  // The triangle & a padding mask gathered from full(1): the triangle alone.
  check("opt.infer.g0", true, false);
  // A padding mask read from the attention_mask input stays a mask.
  check("zoo/graphs/bert.amp-eager.infer.g0", false, true);
  // The triangle & a sliding window of 4096 over 1024 positions (Mistral).
  check("zoo/graphs/mistral.amp-eager.infer.g0", true, false);
}

namespace {

// Attention on q, k, v [1, 2, 8, 4] with mask = where(col - row >= t, -inf, 0);
// with `dropout`, the probabilities go through dropout(0.1) written out.
Graph small_attention(int t, bool dropout, bool fuse_dropout, bool negated = false) {
  auto tensor = [](const char* name, const char* op, const std::string& args, const char* shape, const char* stride,
                   const char* dtype, const std::string& kwargs = "") {
    return std::string(R"({"name":")") + name + R"(","op":")" + op + R"(","args":)" + args +
           (kwargs.empty() ? "" : R"(,"kwargs":)" + kwargs) + R"(,"shape":)" + shape + R"(,"stride":)" + stride +
           R"(,"dtype":")" + dtype + R"("})";
  };
  const std::string iota_kw = R"({"start":0,"step":1,"dtype":{"dtype":"int64"},"device":{"device":"cuda:0"},"requires_grad":false})";
  std::string n =
      R"({"name":"q","op":"placeholder","role":"input","shape":[1,2,8,4],"stride":[64,32,4,1],"dtype":"float32"},)"
      R"({"name":"k","op":"placeholder","role":"input","shape":[1,2,8,4],"stride":[64,32,4,1],"dtype":"float32"},)"
      R"({"name":"v","op":"placeholder","role":"input","shape":[1,2,8,4],"stride":[64,32,4,1],"dtype":"float32"},)";
  n += tensor("i0", "prims.iota.default", "[8]", "[8]", "[1]", "int64", iota_kw) + ",";
  n += tensor("col", "aten.unsqueeze.default", R"([{"node":"i0"},-2])", "[1,8]", "[8,1]", "int64") + ",";
  n += tensor("i1", "prims.iota.default", "[8]", "[8]", "[1]", "int64", iota_kw) + ",";
  n += tensor("row", "aten.unsqueeze.default", R"([{"node":"i1"},-1])", "[8,1]", "[1,1]", "int64") + ",";
  n += tensor("d", "aten.sub.Tensor", R"([{"node":"col"},{"node":"row"}])", "[8,8]", "[8,1]", "int64") + ",";
  if (negated) {  // not(j - i < t), as masked_fill(~keep, -inf) writes it
    n += tensor("c0", "aten.lt.Scalar", std::string(R"([{"node":"d"},)") + std::to_string(t) + "]", "[8,8]", "[8,1]", "bool") + ",";
    n += tensor("c", "aten.bitwise_not.default", R"([{"node":"c0"}])", "[8,8]", "[8,1]", "bool") + ",";
  } else {
    n += tensor("c", "aten.ge.Scalar", std::string(R"([{"node":"d"},)") + std::to_string(t) + "]", "[8,8]", "[8,1]", "bool") + ",";
  }
  n += tensor("z", "aten.scalar_tensor.default", "[0]", "[]", "[]", "float32",
              R"({"dtype":{"dtype":"float32"},"layout":{"enum":"torch.strided"},"device":{"device":"cuda:0"}})") + ",";
  n += tensor("ninf", "aten.full.default", R"([[8,8],{"float":"-inf"}])", "[8,8]", "[8,1]", "float32",
              R"({"dtype":{"dtype":"float32"},"device":{"device":"cuda:0"},"pin_memory":false})") + ",";
  n += tensor("m", "aten.where.self", R"([{"node":"c"},{"node":"ninf"},{"node":"z"}])", "[8,8]", "[8,1]", "float32") + ",";
  n += tensor("kt", "aten.permute.default", R"([{"node":"k"},[0,1,3,2]])", "[1,2,4,8]", "[64,32,1,4]", "float32") + ",";
  n += tensor("qk", "aten.matmul.default", R"([{"node":"q"},{"node":"kt"}])", "[1,2,8,8]", "[128,64,8,1]", "float32") + ",";
  n += tensor("sc", "aten.mul.Tensor", R"([{"node":"qk"},0.5])", "[1,2,8,8]", "[128,64,8,1]", "float32") + ",";
  n += tensor("s", "aten.add.Tensor", R"([{"node":"sc"},{"node":"m"}])", "[1,2,8,8]", "[128,64,8,1]", "float32") + ",";
  n += tensor("p", "aten._softmax.default", R"([{"node":"s"},-1,false])", "[1,2,8,8]", "[128,64,8,1]", "float32") + ",";
  std::string probs = "p";
  if (dropout) {
    n += tensor("r", "aten.rand.default", "[[1,2,8,8]]", "[1,2,8,8]", "[128,64,8,1]", "float32",
                R"({"dtype":{"dtype":"float32"},"device":{"device":"cuda:0"},"pin_memory":false})") + ",";
    n += tensor("keep", "aten.gt.Scalar", R"([{"node":"r"},0.1])", "[1,2,8,8]", "[128,64,8,1]", "bool") + ",";
    n += tensor("pk", "aten.mul.Tensor", R"([{"node":"keep"},{"node":"p"}])", "[1,2,8,8]", "[128,64,8,1]", "float32") + ",";
    n += tensor("pd", "aten.mul.Tensor", R"([{"node":"pk"},1.1111111111111112])", "[1,2,8,8]", "[128,64,8,1]", "float32") + ",";
    probs = "pd";
  }
  n += tensor("y", "aten.matmul.default", R"([{"node":")" + probs + R"("},{"node":"v"}])", "[1,2,8,4]", "[64,32,4,1]", "float32") + ",";
  n += R"({"name":"output","op":"output","args":[[{"node":"y"}]]})";
  Graph g = read_graph_text(test::document(n), "mask.json");
  ShapeProver prover(g.symbols);
  require_consistent_shapes(g, check_shapes(g, prover), "mask.json");
  pipeline::OptimizeOptions options;
  options.fuse_dropout = fuse_dropout;
  return pipeline::optimize(g, options).output;
}

}  // namespace

TEST_CASE("a mask that also hides the diagonal is not causal", "[rules][attention]") {
  const Graph causal = small_attention(1, false, false), strict = small_attention(0, false, false);
  REQUIRE(sdpa_nodes(causal).size() == 1);
  CHECK(sdpa_nodes(causal)[0]->args[5].b);
  REQUIRE(sdpa_nodes(strict).size() == 1);
  CHECK_FALSE(sdpa_nodes(strict)[0]->args[5].b);
  CHECK(sdpa_nodes(strict)[0]->args[3].is_node());  // kept as a mask
}

TEST_CASE("a causal mask written as the negation of its kept entries is causal", "[rules][attention]") {
  const Graph causal = small_attention(1, false, false, true), strict = small_attention(0, false, false, true);
  REQUIRE(sdpa_nodes(causal).size() == 1);
  CHECK(sdpa_nodes(causal)[0]->args[5].b);
  CHECK(sdpa_nodes(causal)[0]->args[3].is_none());
  REQUIRE(sdpa_nodes(strict).size() == 1);
  CHECK_FALSE(sdpa_nodes(strict)[0]->args[5].b);
}

TEST_CASE("attention written with dropout fuses only when asked", "[rules][attention]") {
  CHECK(sdpa_nodes(small_attention(1, true, false)).empty());  // it would change the random draws
  const Graph fused = small_attention(1, true, true);
  REQUIRE(sdpa_nodes(fused).size() == 1);
  CHECK(sdpa_nodes(fused)[0]->args[4].f == Approx(0.1));  // dropout_p
  CHECK(sdpa_nodes(fused)[0]->args[5].b);                 // and still causal
  for (const Node& n : fused.nodes) CHECK(n.op != "aten.rand.default");
}

TEST_CASE("attention: q scaled before the matmul (zoo_qscale)", "[rules][attention]") {
  Graph g = optimized("zoo_qscale.infer.g0");
  const auto s = sdpa_nodes(g);
  REQUIRE(s.size() == 1);
  CHECK(scale_of(*s[0]) == 0.125);
}

TEST_CASE("attention: a scale computed at run time goes onto q (gpt2 dynamic)", "[rules][attention]") {
  Graph g = optimized("gpt2.infer.dyn.g0");
  const auto s = sdpa_nodes(g);
  REQUIRE(s.size() == 2);
  for (const Node* n : s) {
    CHECK(scale_of(*n) == 1.0);
    CHECK(g.nodes[n->args[0].node].op == "aten.mul.Tensor");
    CHECK(n->tensor.shape.size() == 4);
  }
}

TEST_CASE("attention: flattened heads with a 3-D transpose (zoo_bmm_views)", "[rules][attention]") {
  CHECK(sdpa_nodes(optimized("zoo_bmm_views.infer.g0")).size() == 1);
}

TEST_CASE("attention: the einsum form, through 5-D unit-dimension permutes (zoo_einsum)", "[rules][attention]") {
  Graph g = optimized("zoo_einsum.infer.g0");
  const auto s = sdpa_nodes(g);
  REQUIRE(s.size() == 1);
  CHECK(scale_of(*s[0]) == 0.125);
}

TEST_CASE("training graphs keep their attention decomposed", "[rules][attention]") {
  Graph g = optimized("zoo_hf.train.g0");
  CHECK(sdpa_nodes(g).empty());
  bool has_bmm = false;
  for (const Node& n : g.nodes) has_bmm |= n.op == "aten.bmm.default" || n.op == "aten.matmul.default";
  CHECK(has_bmm);
}

TEST_CASE("nn.Linear recomposes, with and without bias", "[rules][attention]") {
  auto linears = [](const Graph& g, bool with_bias) {
    size_t n = 0;
    for (const Node& node : g.nodes)
      if (node.op == "aten.linear.default") n += node.args.size() == 3 && node.args[2].is_node() == with_bias;
    return n;
  };
  Graph bert = optimized("bert.infer.g0");  // addmm(bias, view(x), permute(W))
  CHECK(linears(bert, true) >= 12);         // 2 layers x (q, k, v, o, 2 feed-forward)
  Graph llama = optimized("llama.infer.g0");  // mm(view(x), permute(W)): no bias
  CHECK(linears(llama, false) >= 14);
  for (const Node& n : llama.nodes) CHECK(n.op != "aten.mm.default");
}

TEST_CASE("softmax of a 16-bit tensor, decomposed with an upcast", "[rules][attention]") {
  auto t = [](const char* name, const char* op, const std::string& args, const char* shape, const std::string& dtype) {
    std::string strides = std::string(shape) == "[2,4,1]" ? "[4,1,1]" : "[32,8,1]";
    return std::string(R"({"name":")") + name + R"(","op":")" + op + R"(","args":)" + args + R"(,"shape":)" + shape +
           R"(,"stride":)" + strides + R"(,"dtype":")" + dtype + "\"}";
  };
  // half_to_float exists for float16 only: PyTorch's CUDA softmax and its
  // decomposition reject it for bfloat16, so a bfloat16 graph must keep its cast.
  const std::string dtype = GENERATE(std::string("float16"), std::string("bfloat16"));
  CAPTURE(dtype);
  const std::string nodes =
      R"({"name":"x","op":"placeholder","role":"input","shape":[2,4,8],"stride":[32,8,1],"dtype":")" + dtype + R"("},)" +
      t("up", "prims.convert_element_type.default", R"([{"node":"x"},{"dtype":"float32"}])", "[2,4,8]", "float32") + "," +
      t("m", "aten.amax.default", R"([{"node":"up"},[-1],true])", "[2,4,1]", "float32") + "," +
      t("d", "aten.sub.Tensor", R"([{"node":"up"},{"node":"m"}])", "[2,4,8]", "float32") + "," +
      t("e", "aten.exp.default", R"([{"node":"d"}])", "[2,4,8]", "float32") + "," +
      t("s", "aten.sum.dim_IntList", R"([{"node":"e"},[-1],true])", "[2,4,1]", "float32") + "," +
      t("p", "aten.div.Tensor", R"([{"node":"e"},{"node":"s"}])", "[2,4,8]", "float32") + "," +
      t("y", "prims.convert_element_type.default", R"([{"node":"p"},{"dtype":")" + dtype + R"("}])", "[2,4,8]", dtype) +
      "," + R"({"name":"output","op":"output","args":[[{"node":"y"},{"node":"p"}]]})";
  Graph g = read_graph_text(test::document(nodes), "softmax16.json");
  ShapeProver prover(g.symbols);
  REQUIRE(check_shapes(g, prover).issues.empty());
  Graph out = pipeline::optimize(g, {}).output;
  // y = the softmax of x in 16 bits.
  const auto& results = out.nodes.back().args[0].list;
  const Node& y = out.nodes[results[0].node];
  const Node& p = out.nodes[results[1].node];
  REQUIRE(y.op == "aten._softmax.default");
  CHECK(out.nodes[y.args[0].node].name == "x");
  CHECK_FALSE(y.args[2].b);
  // p = the float32 softmax: half_to_float for float16, the upcast's softmax for bfloat16.
  REQUIRE(p.op == "aten._softmax.default");
  CHECK(p.tensor.dtype == DType::Float32);
  if (dtype == "float16") {
    CHECK(out.nodes[p.args[0].node].name == "x");
    CHECK(p.args[2].b);
  } else {
    CHECK(out.nodes[p.args[0].node].op == "prims.convert_element_type.default");
    CHECK_FALSE(p.args[2].b);
  }
}

TEST_CASE("dropout fusion is declined when the extraction would mix two sources of draws", "[rules][attention]") {
  // The tree extractor counts the shared mask and scores once per use, so on
  // BERT's training graph it took the fused kernel for some outputs and the
  // decomposed rand-drawing forms for others: the halves would drop different
  // entries. The optimizer redoes such a graph without dropout fusion.
  const Graph input = load_graph(test::corpus_path("graphs/bert.train.g0.json"));
  pipeline::OptimizeOptions tree;
  tree.fuse_dropout = true;
  tree.extractor = "tree";
  const pipeline::OptimizeResult t = pipeline::optimize(input, tree);
  CHECK_FALSE(rules::mixes_dropout_draws(input, t.output));
  REQUIRE(t.declined.size() == 1);
  CHECK(t.declined[0].find("fuse_dropout") != std::string::npos);
  // The dag extractor takes each block whole: nothing declined, every block fused.
  pipeline::OptimizeOptions dag = tree;
  dag.extractor = "dag";
  const pipeline::OptimizeResult d = pipeline::optimize(input, dag);
  CHECK(d.declined.empty());
  CHECK_FALSE(rules::mixes_dropout_draws(input, d.output));
  CHECK(d.sdpa_out > d.sdpa_in);
}
