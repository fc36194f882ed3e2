// Outputs never overwrite inputs or each other: `-o`, `--report`, `--csv`
// naming the input graph (or one file twice) is refused before any work,
// with exit status 2, instead of silently replacing the file.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sator::cli {

// Each pair is (option, path); empty paths are ignored. Throws GraphError
// naming `input` when an output is the input or two outputs are one file.
void require_distinct_outputs(const std::string& input, const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace sator::cli
