// Reading and writing sator.graph v1 documents.
//
// The reader checks everything that can be checked without shape inference:
// JSON syntax, the format tag and version, every field's presence and type,
// unknown fields, unique names, references to earlier nodes only (so cycles
// cannot be expressed), declared symbols, sane sizes, constant values that
// match their shape. Shape/dtype consistency is shape_check.h's job.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace sator {

// An error in an input or output file: names the file and, where there is
// one, the node. what() is the full one-line message.
class GraphError : public std::runtime_error {
 public:
  GraphError(std::string file, std::string node, const std::string& message);
  const std::string& file() const { return file_; }
  const std::string& node() const { return node_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_, node_, message_;
};

// Sizes beyond these are refused as absurd: no real tensor has them.
constexpr int64_t kMaxDimSize = int64_t{1} << 40;
constexpr int64_t kMaxNumel = int64_t{1} << 48;
constexpr int kMaxRank = 64;

Graph read_graph_text(std::string_view text, const std::string& file_label);
Graph read_graph_file(const std::string& path);

std::string write_graph_text(const Graph& g);
// Writes to a temporary file beside `path`, then renames: a reader never sees
// a partial file, and a failure leaves no file behind.
void write_file_atomic(const std::string& path, std::string_view contents);
void write_graph_file(const Graph& g, const std::string& path);

}  // namespace sator
