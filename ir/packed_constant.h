// Packing a get_attr constant's nested lists (graph-format.md: `value`) into
// PackedNumbers, 8 bytes an element.
#pragma once

#include <memory>

#include "ir/json_doc.h"
#include "ir/value.h"

namespace sator {

// The constant packed, or null where its leaves are not all of one kind
// (ints, floats or bools, as torch's tolist() writes a tensor) or it holds
// an empty list: the reader then keeps the general form. The nesting must
// already be checked to be regular.
std::shared_ptr<const PackedNumbers> pack_constant(const JsonRef& value);

}  // namespace sator
