// Reading a file a user names as input (a graph, a rule file, a manifest):
// regular files only, never more than a stated size, and never blocking on
// a FIFO. What a refused file holds is never echoed.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sator {

// Why a file cannot be read as input; what() is the reason without the path.
struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Graph files: the largest corpus graph replicated 60 times is 170 MB.
inline constexpr size_t kMaxGraphFileBytes = size_t{2} << 30;
// Rule files and manifests: the shipped rule files are under 20 kB.
inline constexpr size_t kMaxRuleFileBytes = size_t{16} << 20;

// The contents of the regular file at `path` (links followed), at most
// `max_bytes`; throws InputFileError otherwise (a folder, a FIFO, a device,
// too large, unreadable).
std::string read_input_file(const std::string& path, size_t max_bytes);

}  // namespace sator
