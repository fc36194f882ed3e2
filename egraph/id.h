// Identifiers shared by the e-graph engine.
#pragma once

#include <cstdint>
#include <limits>

namespace sator::eg {

// An e-node id. Every e-node gets one when it is first added, and that same
// number names the e-class it started in, so class ids and node ids share one
// space (as in egg >= 0.10). find() maps any id to its class's canonical id.
using Id = uint32_t;
using OpId = uint32_t;    // an interned operator
using AttrId = uint32_t;  // an interned attribute (anything of a node that is not a child)

constexpr Id kNoId = std::numeric_limits<Id>::max();
constexpr AttrId kNoAttr = 0;  // the empty attribute

}  // namespace sator::eg
