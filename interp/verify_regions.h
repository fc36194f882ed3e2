// `--verify` on a graph the reference cannot run as a whole (its tensors too
// large at the chosen sizes, or an op it has no kernel for): the two graphs
// compared a changed region at a time.
//
// The writer names each node of the output after the input node whose value
// it computes (its e-class's), so a name both graphs hold, with the same
// tensor type, is a claim that the two nodes are equal: an anchor. An anchor
// the output computes as the input does (same op, arguments naming the same
// nodes, through nodes computed alike) needs no check. Every other anchor,
// and every output-list entry that differs, is a region: its output-side
// computation back to the anchors it reads (data-dependent ones become
// shared random inputs; constants such as a mask built from iota are
// computed, so a rewrite that relied on their structure sees it), and the
// input-side computation of the same value back to those anchors. Each pair
// is compared as a whole graph would be (interp/verify.h: float64, then at
// the dtypes). If every region holds, every anchor is equal by induction
// over the order, and so are the outputs.
#pragma once

#include <string>

#include "interp/verify.h"

namespace sator::interp {

// `whole_not`: why the whole graph was not compared (said in a skip).
VerifyResult verify_by_regions(const Graph& input, const Graph& output, const VerifyOptions& options,
                               const std::string& whole_not);

}  // namespace sator::interp
