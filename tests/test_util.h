// Helpers for building small graphs in tests.
#pragma once

#include <string>

#include "ir/graph_io.h"

namespace sator::test {

// A sator.graph document around the given node objects (comma-separated JSON).
inline std::string document(const std::string& nodes, const std::string& symbols = "[]") {
  return R"({"format":"sator.graph","version":1,"name":"t","source":{},"symbols":)" + symbols +
         R"(,"nodes":[)" + nodes + "]}";
}

inline std::string corpus_path(const std::string& rel) { return std::string(SATOR_CORPUS_DIR) + "/" + rel; }

}  // namespace sator::test
