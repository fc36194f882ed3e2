// What `sator chunk` and `sator optimize --chunk` share: reading the chunk
// options (refusing bad ones, exit 2) and the plan's report lines and JSON.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "chunk/plan.h"

namespace sator::cli {

// `chunks`: "auto" or a positive count; `budget`: bytes, optionally with a
// unit (KiB, MiB, GiB, KB, MB, GB), "" for none. Throws GraphError naming
// `path` for anything else.
chunk::ChunkOptions read_chunk_options(const std::string& path, const std::string& chunks, const std::string& budget,
                                       const std::string& device);

// Runs the planner; an impossible budget becomes GraphError naming `path`.
chunk::ChunkPlan plan_or_refuse(const std::string& path, const Graph& g, const chunk::ChunkOptions& o);

nlohmann::ordered_json chunk_plan_json(const chunk::ChunkPlan& p);
void print_chunk_plan(const chunk::ChunkPlan& p);

}  // namespace sator::cli
