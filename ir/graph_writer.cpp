#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include "ir/graph_io.h"

namespace sator {

using Json = nlohmann::ordered_json;

namespace {

// The node lines are appended to the output text directly (a graph of a
// million nodes would otherwise build a million JSON documents only to
// print them); the text is what nlohmann's dump() gives for the same
// document, which tests compare.

void append_string(std::string& out, std::string_view s) {
  // Printable ASCII needs no escapes; anything else takes nlohmann's exact
  // escaping (and its refusal of invalid UTF-8).
  for (const char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      out += Json(std::string(s)).dump();
      return;
    }
  out += '"';
  out += s;
  out += '"';
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// {"key":"text"}
void append_tagged(std::string& out, const char* key, std::string_view text) {
  out += "{\"";
  out += key;
  out += "\":";
  append_string(out, text);
  out += '}';
}

void append_size(std::string& out, const SymExpr& e) {
  if (auto c = e.as_constant()) append_int(out, *c);
  else append_string(out, e.to_string());
}

void append_sizes(std::string& out, const std::vector<SymExpr>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_size(out, v[i]);
  }
  out += ']';
}

// Nested lists of the packed numbers, as they were read.
void append_numbers(std::string& out, const PackedNumbers& p) {
  size_t next = 0;
  std::function<void(size_t)> level = [&](size_t d) {
    out += '[';
    for (int64_t k = 0; k < p.dims[d]; ++k) {
      if (k) out += ',';
      if (d + 1 < p.dims.size()) {
        level(d + 1);
        continue;
      }
      switch (p.leaf) {
        case PackedNumbers::Leaf::Int: append_int(out, p.ints[next]); break;
        case PackedNumbers::Leaf::Bool: out += p.ints[next] ? "true" : "false"; break;
        case PackedNumbers::Leaf::Float: out += Json(p.floats[next]).dump(); break;
      }
      ++next;
    }
    out += ']';
  };
  if (p.dims.empty()) return;
  level(0);
}

void append_value(std::string& out, const Graph& g, const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.b ? "true" : "false"; return;
    case Value::Kind::Int: append_int(out, v.i); return;
    case Value::Kind::Float:
      if (std::isnan(v.f)) out += "{\"float\":\"nan\"}";
      else if (std::isinf(v.f)) out += v.f > 0 ? "{\"float\":\"inf\"}" : "{\"float\":\"-inf\"}";
      else out += Json(v.f).dump();
      return;
    case Value::Kind::Str: append_string(out, v.s); return;
    case Value::Kind::Node: append_tagged(out, "node", g.nodes.at(v.node).name); return;
    case Value::Kind::Sym: append_tagged(out, "sym", v.sym.to_string()); return;
    case Value::Kind::List:
      out += '[';
      for (size_t i = 0; i < v.list.size(); ++i) {
        if (i) out += ',';
        append_value(out, g, v.list[i]);
      }
      out += ']';
      return;
    case Value::Kind::DType: append_tagged(out, "dtype", dtype_name(v.dtype)); return;
    case Value::Kind::Device: append_tagged(out, "device", v.s); return;
    case Value::Kind::Enum: append_tagged(out, "enum", v.s); return;
    case Value::Kind::Repr: append_tagged(out, "repr", v.s); return;
    case Value::Kind::Dict: out += "{\"dict\":" + Json::parse(v.s).dump() + "}"; return;
    case Value::Kind::Numbers: append_numbers(out, *v.numbers); return;
  }
  out += "null";
}

// ,"shape":[..],"stride":[..],"dtype":".." (after an object's first member).
void append_tensor_members(std::string& out, const TensorType& t) {
  out += "\"shape\":";
  append_sizes(out, t.shape);
  out += ",\"stride\":";
  append_sizes(out, t.stride);
  out += ",\"dtype\":";
  append_string(out, dtype_name(t.dtype));
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

void append_node(std::string& out, const Graph& g, const Node& n) {
  out += "{\"name\":";
  append_string(out, n.name);
  out += ",\"op\":";
  append_string(out, n.op);
  if (n.role != Role::None) {
    out += ",\"role\":";
    append_string(out, role_name(n.role));
  }
  if (n.target) {
    out += ",\"target\":";
    append_string(out, *n.target);
  }
  if (n.value) {
    out += ",\"value\":";
    append_value(out, g, *n.value);
  }
  if (n.op != "placeholder") {
    out += ",\"args\":[";
    for (size_t i = 0; i < n.args.size(); ++i) {
      if (i) out += ',';
      append_value(out, g, n.args[i]);
    }
    out += ']';
  }
  if (!n.kwargs.empty()) {
    out += ",\"kwargs\":{";
    bool first = true;
    for (const auto& [k, v] : n.kwargs) {
      if (!first) out += ',';
      first = false;
      append_string(out, k);
      out += ':';
      append_value(out, g, v);
    }
    out += '}';
  }
  switch (n.result) {
    case Node::Result::None: break;
    case Node::Result::Tensor:
      out += ',';
      append_tensor_members(out, n.tensor);
      break;
    case Node::Result::SymInt:
      out += ",\"symint\":";
      append_size(out, n.symint);
      break;
    case Node::Result::Tuple: {
      out += ",\"outputs\":[";
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        const OutputSlot& s = n.outputs[i];
        if (i) out += ',';
        if (s.kind == OutputSlot::Kind::Tensor) {
          out += '{';
          append_tensor_members(out, s.tensor);
          out += '}';
        } else if (s.kind == OutputSlot::Kind::Scalar) {
          out += "{\"scalar\":";
          append_value(out, g, s.scalar);
          out += '}';
        } else {
          out += "null";  // a slot with nothing known
        }
      }
      out += ']';
      break;
    }
  }
  if (!n.body.empty()) {
    const Graph& body = n.body.front();
    out += ",\"body\":{\"symbols\":" + symbols_json(body.symbols).dump() + ",\"nodes\":[";
    for (size_t i = 0; i < body.nodes.size(); ++i) {
      if (i) out += ',';
      append_node(out, body, body.nodes[i]);
    }
    out += "]}";
  }
  out += '}';
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
    append_node(out, g, g.nodes[i]);
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
  // The temporary file is created exclusively (mkstemp: O_CREAT | O_EXCL,
  // so a link planted at its name is never followed) under a name nobody
  // can predict, beside the destination so the rename stays in one file
  // system. The pid in its name lets a parent that killed this process
  // remove it (cli/batch_isolate.cpp).
  std::string tmp = final_path + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw GraphError(path, "", std::string("cannot create the output file: ") + std::strerror(errno));
  // mkstemp makes the file 0600; an output gets what a plain create gives.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  size_t done = 0;
  bool ok = true;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) ok = false;
  if (!ok) {
    ::unlink(tmp.c_str());
    throw GraphError(path, "", "cannot write the output file");
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw GraphError(path, "", "cannot move the output file into place");
  }
}

void write_graph_file(const Graph& g, const std::string& path) { write_file_atomic(path, write_graph_text(g)); }

}  // namespace sator
