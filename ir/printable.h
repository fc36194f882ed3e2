// Text from input files (names, messages quoting them) made safe to print:
// control characters and escape sequences shown as \xNN instead of reaching
// the terminal (or a .dot file) raw, and long text cut with the count of
// bytes left out, so that a 1 MB name is not echoed whole.
#pragma once

#include <string>
#include <string_view>

namespace sator {

std::string printable(std::string_view text, size_t max_bytes = 1000);

}  // namespace sator
