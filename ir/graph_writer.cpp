#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ir/graph_io.h"

namespace sator {

using Json = nlohmann::ordered_json;

namespace {

Json size_json(const SymExpr& e) {
  if (auto c = e.as_constant()) return *c;
  return e.to_string();
}

Json sizes_json(const std::vector<SymExpr>& v) {
  Json a = Json::array();
  for (const SymExpr& e : v) a.push_back(size_json(e));
  return a;
}

Json value_json(const Graph& g, const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return nullptr;
    case Value::Kind::Bool: return v.b;
    case Value::Kind::Int: return v.i;
    case Value::Kind::Float:
      if (std::isnan(v.f)) return Json{{"float", "nan"}};
      if (std::isinf(v.f)) return Json{{"float", v.f > 0 ? "inf" : "-inf"}};
      return v.f;
    case Value::Kind::Str: return v.s;
    case Value::Kind::Node: return Json{{"node", g.nodes.at(v.node).name}};
    case Value::Kind::Sym: return Json{{"sym", v.sym.to_string()}};
    case Value::Kind::List: {
      Json a = Json::array();
      for (const Value& x : v.list) a.push_back(value_json(g, x));
      return a;
    }
    case Value::Kind::DType: return Json{{"dtype", std::string(dtype_name(v.dtype))}};
    case Value::Kind::Device: return Json{{"device", v.s}};
    case Value::Kind::Enum: return Json{{"enum", v.s}};
    case Value::Kind::Repr: return Json{{"repr", v.s}};
    case Value::Kind::Dict: return Json{{"dict", Json::parse(v.s)}};
  }
  return nullptr;
}

void put_tensor(Json& j, const TensorType& t) {
  j["shape"] = sizes_json(t.shape);
  j["stride"] = sizes_json(t.stride);
  j["dtype"] = std::string(dtype_name(t.dtype));
}

Json symbols_json(const std::vector<Symbol>& symbols) {
  Json out = Json::array();
  for (const Symbol& s : symbols) {
    Json j;
    j["name"] = s.name;
    j["hint"] = s.hint;
    j["min"] = s.min ? Json(*s.min) : Json(nullptr);
    j["max"] = s.max ? Json(*s.max) : Json(nullptr);
    out.push_back(std::move(j));
  }
  return out;
}

Json node_json(const Graph& g, const Node& n) {
  Json j;
  j["name"] = n.name;
  j["op"] = n.op;
  if (n.role != Role::None) j["role"] = std::string(role_name(n.role));
  if (n.target) j["target"] = *n.target;
  if (n.value) j["value"] = value_json(g, *n.value);
  if (n.op != "placeholder") {
    Json args = Json::array();
    for (const Value& v : n.args) args.push_back(value_json(g, v));
    j["args"] = std::move(args);
  }
  if (!n.kwargs.empty()) {
    Json kw = Json::object();
    for (const auto& [k, v] : n.kwargs) kw[k] = value_json(g, v);
    j["kwargs"] = std::move(kw);
  }
  switch (n.result) {
    case Node::Result::None: break;
    case Node::Result::Tensor: put_tensor(j, n.tensor); break;
    case Node::Result::SymInt: j["symint"] = size_json(n.symint); break;
    case Node::Result::Tuple: {
      Json outs = Json::array();
      for (const OutputSlot& s : n.outputs) {
        Json o;
        if (s.kind == OutputSlot::Kind::Tensor) put_tensor(o, s.tensor);
        else if (s.kind == OutputSlot::Kind::Scalar) o["scalar"] = value_json(g, s.scalar);
        outs.push_back(std::move(o));
      }
      j["outputs"] = std::move(outs);
      break;
    }
  }
  if (!n.body.empty()) {
    const Graph& body = n.body.front();
    Json nodes = Json::array();
    for (const Node& b : body.nodes) nodes.push_back(node_json(body, b));
    j["body"] = Json{{"symbols", symbols_json(body.symbols)}, {"nodes", std::move(nodes)}};
  }
  return j;
}

}  // namespace

// One node per line: diffable, still plain JSON.
std::string write_graph_text(const Graph& g) {
  Json head;
  head["format"] = "sator.graph";
  head["version"] = 1;
  head["name"] = g.name;
  head["source"] = Json::parse(g.source_json);
  head["symbols"] = symbols_json(g.symbols);
  std::string out = head.dump();
  out.pop_back();  // reopen the object to append "nodes"
  out += ",\"nodes\":[\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    out += node_json(g, g.nodes[i]).dump();
    out += i + 1 < g.nodes.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) throw GraphError(path, "", "an empty output path");
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw GraphError(path, "", "is a directory; give a file name to write");
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    // A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written into,
    // never replaced by a renamed file; a block device or socket is refused.
    if (fs::is_block_file(st) || fs::is_socket(st))
      throw GraphError(path, "", "is a block device or socket; refusing to write there");
    std::ofstream out(path, std::ios::binary);
    if (!out) throw GraphError(path, "", "cannot open the output for writing");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) throw GraphError(path, "", "cannot write the output (device full or closed?)");
    return;
  }
  // A symbolic link is followed: the file it names is replaced, the link stays.
  fs::path target(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    const fs::path to = fs::read_symlink(target, ec);
    if (ec) break;
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  const std::string final_path = target.string();
  const std::string tmp = final_path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw GraphError(path, "", "cannot create the output file");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw GraphError(path, "", "cannot write the output file");
    }
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw GraphError(path, "", "cannot move the output file into place");
  }
}

void write_graph_file(const Graph& g, const std::string& path) { write_file_atomic(path, write_graph_text(g)); }

}  // namespace sator
