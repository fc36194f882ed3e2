// Option checks shared by the commands.
#pragma once

#include <CLI/CLI.hpp>

namespace sator::cli {

// Counts and limits parse into unsigned integers, which would take "-5" as a
// huge number: a leading minus is refused with a plain message.
inline CLI::Validator non_negative_count() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const size_t first = s.find_first_not_of(" \t");
        return first != std::string::npos && s[first] == '-' ? "must be a whole number of 0 or more, not " + s : "";
      },
      "COUNT");
}

}  // namespace sator::cli
