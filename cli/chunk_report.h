// What `sator chunk` and `sator optimize --chunk` share: reading the chunk
// options (refusing bad ones, exit 2) and the plan's report lines and JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "chunk/plan.h"

namespace sator::cli {

// `chunks`: "auto" or a positive count; `budget`: bytes, optionally with a
// unit (KiB, MiB, GiB, KB, MB, GB), "" for none. Throws GraphError naming
// `path` for anything else.
chunk::ChunkOptions read_chunk_options(const std::string& path, const std::string& chunks, const std::string& budget,
                                       const std::string& device);

// A size flag's value: bytes, optionally with a unit (KiB, MiB, GiB, KB, MB,
// GB); GraphError naming `path` and `flag` unless positive and finite.
double parse_bytes(const std::string& path, const std::string& flag, const std::string& text);

// Applies `--hint NAME=VALUE` settings to the graph's symbols (plans for
// other sizes than the capture's); GraphError naming `path` for an unknown
// symbol or a value outside its range.
void apply_hints(const std::string& path, Graph& g, const std::vector<std::string>& hints);

nlohmann::ordered_json chunk_plan_json(const chunk::ChunkPlan& p);
void print_chunk_plan(const chunk::ChunkPlan& p);

}  // namespace sator::cli
