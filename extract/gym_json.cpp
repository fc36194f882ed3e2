#include "extract/gym_json.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "ir/graph_io.h"

namespace sator::extract {

Problem read_gym_text(const std::string& text, const std::string& file) {
  using Json = nlohmann::json;
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw GraphError(file, "", std::string("not JSON: ") + e.what());
  } catch (const Json::exception& e) {  // a number out of range (1e999), ...
    throw GraphError(file, "", std::string("unreadable JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_object())
    throw GraphError(file, "", "expected an object with a \"nodes\" object (egraph-serialize format)");
  if (!doc.contains("root_eclasses") || !doc["root_eclasses"].is_array())
    throw GraphError(file, "", "expected a \"root_eclasses\" array");
  for (const auto& [key, value] : doc.items())
    if (key != "nodes" && key != "root_eclasses" && key != "class_data" && key != "comment")
      throw GraphError(file, "", "unknown top-level field \"" + key + "\"");

  Problem p;
  std::unordered_map<std::string, ClassIdx> class_index;
  std::unordered_map<std::string, NodeIdx> node_index;
  auto class_of = [&](const std::string& name) {
    auto [it, fresh] = class_index.emplace(name, static_cast<ClassIdx>(class_index.size()));
    return it->second;
  };
  const Json& nodes = doc["nodes"];
  p.nodes.reserve(nodes.size());
  p.node_names.reserve(nodes.size());
  // First pass: ids and classes; second: children (which may come later).
  for (const auto& [id, n] : nodes.items()) {
    if (!n.is_object() || !n.contains("eclass") || !n["eclass"].is_string() || !n.contains("children") ||
        !n["children"].is_array())
      throw GraphError(file, id, "a node needs \"eclass\" (a string) and \"children\" (an array)");
    double cost = 1.0;
    if (n.contains("cost")) {
      if (!n["cost"].is_number()) throw GraphError(file, id, "\"cost\" is not a number");
      cost = n["cost"].get<double>();
    }
    // The ILP solver asserts on objective coefficients of 1e25 and more, and
    // sums of many costs must stay finite: costs are kept to [0, 1e20].
    if (!std::isfinite(cost) || cost < 0 || cost > 1e20)
      throw GraphError(file, id, "cost must be a finite number from 0 to 1e20");
    node_index.emplace(id, static_cast<NodeIdx>(p.nodes.size()));
    p.nodes.push_back({class_of(n["eclass"].get<std::string>()), {}, cost});
    p.node_names.push_back(id);
  }
  size_t i = 0;
  for (const auto& [id, n] : nodes.items()) {
    for (const Json& c : n["children"]) {
      if (!c.is_string()) throw GraphError(file, id, "a child is not a node id string");
      const auto it = node_index.find(c.get<std::string>());
      if (it == node_index.end()) throw GraphError(file, id, "child \"" + c.get<std::string>() + "\" is not a node");
      p.nodes[i].children.push_back(p.nodes[it->second].cls);
    }
    ++i;
  }
  for (const Json& r : doc["root_eclasses"]) {
    if (!r.is_string()) throw GraphError(file, "", "a root e-class is not a string");
    const auto it = class_index.find(r.get<std::string>());
    if (it == class_index.end()) throw GraphError(file, "", "root e-class \"" + r.get<std::string>() + "\" has no nodes");
    p.roots.push_back(it->second);
  }
  p.index_classes(class_index.size());
  return p;
}

Problem read_gym_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GraphError(path, "", "cannot open the file");
  std::ostringstream s;
  s << in.rdbuf();
  return read_gym_text(s.str(), path);
}

}  // namespace sator::extract
