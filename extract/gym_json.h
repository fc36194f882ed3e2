// Reads extraction-gym's serialized e-graphs (egraph-serialize JSON):
// `nodes` maps a node id to {op, children (node ids), eclass, cost};
// `root_eclasses` lists the roots; `class_data` and `comment` are optional
// and ignored.
#pragma once

#include <string>

#include "extract/problem.h"

namespace sator::extract {

// Throws GraphError naming the file and node for anything malformed:
// a missing field, a child or root that names nothing, a cost that is not a
// finite number >= 0.
Problem read_gym_file(const std::string& path);
Problem read_gym_text(const std::string& text, const std::string& file_name);

}  // namespace sator::extract
