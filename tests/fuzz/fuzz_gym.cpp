// libFuzzer target: the extraction-gym reader and the extractors. Bytes the
// reader refuses are a GraphError (exit 2); a problem it accepts is
// extracted by tree, dag and (when small) ilp, and every extraction must be
// a choice per reachable class whose DAG cost matches what the extractor
// reported. Anything else traps (an internal error, a crash, a sanitizer
// report). Build: see fuzz_loader.cpp; run
//   build-fuzz/fuzz_gym DIR tests/fuzz/gym_seeds -max_total_time=600
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "extract/extractors.h"
#include "extract/gym_json.h"
#include "ir/graph_io.h"

namespace {

void check(const sator::extract::Problem& p, const sator::extract::Solution& s) {
  using namespace sator::extract;
  if (s.choice.size() != p.num_classes()) __builtin_trap();
  for (ClassIdx c = 0; c < p.num_classes(); ++c)
    if (s.choice[c] != kNoNode && (s.choice[c] >= p.nodes.size() || p.nodes[s.choice[c]].cls != c)) __builtin_trap();
  if (s.dag_cost < kInfinite) {
    const double again = dag_cost(p, s.choice);
    if (!(std::abs(again - s.dag_cost) <= 1e-6 * std::max(1.0, std::abs(again)))) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sator::extract::Problem p;
  try {
    p = sator::extract::read_gym_text(text, "fuzz.json");
  } catch (const sator::GraphError&) {
    return 0;
  }
  check(p, sator::extract::extract_tree(p));
  sator::extract::DagOptions d;
  d.improve_seconds = 0.05;
  check(p, sator::extract::extract_dag(p, d));
  if (p.nodes.size() <= 64) {
    sator::extract::IlpOptions i;
    i.time_limit_s = 0.2;
    check(p, sator::extract::extract_ilp(p, i));
  }
  return 0;
}
