#include "cli/output_paths.h"

#include <filesystem>

#include "ir/graph_io.h"

namespace sator::cli {

namespace {

// Whether two paths name one file: the same inode when both exist, else the
// same normalised absolute path.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool eq = fs::equivalent(a, b, ec);
    if (!ec) return eq;
  }
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

bool is_device(const std::string& p) {
  std::error_code ec;
  const auto st = std::filesystem::status(p, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
         !std::filesystem::is_directory(st);
}

}  // namespace

void require_distinct_outputs(const std::string& input, const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [opt, path] = outputs[i];
    if (path.empty() || is_device(path)) continue;  // /dev/null may take several outputs
    if (!input.empty() && same_file(path, input))
      throw GraphError(input, "", opt + " " + path + " is the input graph; refusing to overwrite it");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].second.empty() && same_file(path, outputs[j].second))
        throw GraphError(input, "", opt + " and " + outputs[j].first + " name the same file (" + path + ")");
  }
}

}  // namespace sator::cli
