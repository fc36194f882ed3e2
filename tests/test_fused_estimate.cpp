// The whole-graph estimate as Inductor fuses it (cost/fused_estimate.h):
// memory-bound ops over one iteration space are one kernel reading what it
// takes from outside and writing what is read outside; matmuls keep their
// price; a joint graph's forward and backward are kernels apart.
#include <catch2/catch.hpp>

#include "cost/fused_estimate.h"
#include "tensor/graph_text.h"

using namespace sator;
using namespace sator::cost;

namespace {

const Device& h200() { return *find_device("h200"); }

Graph text(const std::string& body) { return read_text_graph(body, "t.sg"); }

// The fused estimate's time of one kernel moving `bytes`.
double kernel_seconds(double bytes) {
  const Device& d = h200();
  return d.kernel_min_memory_s + bytes / d.bandwidth + d.launch_s;
}

}  // namespace

TEST_CASE("fused estimate: a pointwise chain is one kernel, however long", "[cost][fused]") {
  const double n = 4096.0 * 4096.0, bytes = 4 * n;  // float32
  const Graph one = text("x = input([4096, 4096])\ny = exp(x)\noutput(y)\n");
  const Graph five = text(
      "x = input([4096, 4096])\na = exp(x)\nb = mul.Tensor(a, 0.5)\nc = neg(b)\nd = relu(c)\ny = add.Tensor(d, x)\n"
      "output(y)\n");
  const FusedEstimate e1 = fused_estimate(one, h200()), e5 = fused_estimate(five, h200());
  CHECK(e1.groups == 1);
  CHECK(e5.groups == 1);
  // x read once (twice by the chain: once from memory), y written.
  CHECK(e1.group_bytes == Approx(2 * bytes));
  CHECK(e5.group_bytes == Approx(2 * bytes));
  CHECK(e5.seconds == Approx(kernel_seconds(2 * bytes)));
  // The per-node estimate prices the chain as five kernels.
  CHECK(total_seconds(graph_costs(five, h200())) > 4 * e5.seconds);
}

TEST_CASE("fused estimate: a row softmax is one kernel; a matmul between splits the chain", "[cost][fused]") {
  const Graph g = text(
      "q = input([64, 1024, 64])\nk = input([64, 64, 1024])\n"
      "s = bmm(q, k)\nm = amax(s, [-1], true)\nz = sub.Tensor(s, m)\ne = exp(z)\nt = sum.dim_IntList(e, [-1], true)\n"
      "p = div.Tensor(e, t)\nr = relu(q)\no = bmm(p, r)\noutput(o)\n");
  const FusedEstimate e = fused_estimate(g, h200());
  // The softmax (amax, sub, exp, sum, div over [64, 1024, 1024]) and the relu
  // over q (another iteration space).
  CHECK(e.groups == 2);
  const double scores = 64.0 * 1024 * 1024 * 4, qbytes = 64.0 * 1024 * 64 * 4;
  // The softmax reads s and writes p; the relu reads q and writes r.
  CHECK(e.group_bytes == Approx(2 * scores + 2 * qbytes));
  const auto costs = graph_costs(g, h200());
  CHECK(e.extern_seconds == Approx(costs[2].cost.seconds + costs[9].cost.seconds));
  CHECK(e.seconds == Approx(e.extern_seconds + kernel_seconds(2 * scores) + kernel_seconds(2 * qbytes)));
}

TEST_CASE("fused estimate: what the backward reads from the forward is written and read again", "[cost][fused]") {
  Graph g = text(
      "x = input([1024, 1024])\ng = input([1024, 1024])\na = exp(x)\nb = mul.Tensor(a, 2.0)\n"
      "c = mul.Tensor(g, a)\noutput(b, c)\n");
  const double bytes = 1024.0 * 1024 * 4;
  // Without roles: one kernel reading x and g, writing b and c.
  FusedEstimate e = fused_estimate(g, h200());
  CHECK(e.groups == 1);
  CHECK(e.group_bytes == Approx(4 * bytes));
  // g a tangent: the backward's c is its own kernel, reading a (written by
  // the forward for it) and g.
  g.nodes[*g.find_node("g")].role = Role::Tangent;
  e = fused_estimate(g, h200());
  CHECK(e.groups == 2);
  CHECK(e.group_bytes == Approx(3 * bytes + 3 * bytes));
}

TEST_CASE("fused estimate: views are what they view; an expanded operand is read at its own size", "[cost][fused]") {
  const Graph g = text(
      "s = input([8, 12, 512, 512])\nbias = input([12, 512, 512])\nu = unsqueeze(bias, 0)\n"
      "x = expand(u, [8, 12, 512, 512])\ny = add.Tensor(s, x)\nv = view(y, [96, 512, 512])\nw = exp(v)\noutput(w)\n");
  const FusedEstimate e = fused_estimate(g, h200());
  CHECK(e.groups == 1);  // add and exp, through the view
  const double scores = 8.0 * 12 * 512 * 512 * 4, bias = 12.0 * 512 * 512 * 4;
  CHECK(e.group_bytes == Approx(2 * scores + bias));
}

TEST_CASE("fused estimate: a value read inside its kernel and by a matmul is written once", "[cost][fused]") {
  const Graph g = text(
      "a = input([512, 512])\nb = input([512, 512])\nx = exp(a)\ny = mul.Tensor(x, 3.0)\nm = mm(x, b)\n"
      "output(y, m)\n");
  const FusedEstimate e = fused_estimate(g, h200());
  CHECK(e.groups == 1);
  const double bytes = 512.0 * 512 * 4;
  CHECK(e.group_bytes == Approx(3 * bytes));  // reads a; writes x (for the mm) and y
}
