// A small, fast, read-only JSON document for the graph reader.
//
// Why not nlohmann-json here: its DOM parse alone took ~10 ms on the largest
// corpus graph (448 KB); graphs are loaded on every command and in batch runs
// over model zoos. This parser builds a flat array of values, keeps strings
// without escapes as views into the input, and is strict: RFC 8259 syntax,
// valid UTF-8, no duplicate object keys, integers that fit in int64, finite
// numbers, and a nesting limit so hostile input cannot exhaust the stack.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sator {

struct JsonSyntaxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class JsonDoc;

// A handle to one value of a JsonDoc (which must outlive it).
class JsonRef {
 public:
  enum class Type : uint8_t { Null, Bool, Int, Float, String, Array, Object };

  JsonRef(const JsonDoc* doc, uint32_t id) : doc_(doc), id_(id) {}

  Type type() const;
  bool is_null() const { return type() == Type::Null; }
  bool is_bool() const { return type() == Type::Bool; }
  bool is_int() const { return type() == Type::Int; }
  bool is_number() const { return type() == Type::Int || type() == Type::Float; }
  bool is_string() const { return type() == Type::String; }
  bool is_array() const { return type() == Type::Array; }
  bool is_object() const { return type() == Type::Object; }
  const char* type_name() const;  // "an integer", "a string", ...

  bool as_bool() const;
  int64_t as_int() const;
  bool int_overflow() const;  // an integer literal beyond int64 (as_int() is then meaningless)
  double as_double() const;  // ints convert
  std::string_view as_string() const;

  // Arrays and objects: number of elements / members.
  size_t size() const;
  JsonRef operator[](size_t i) const;         // array element
  std::string_view key(size_t i) const;       // object member i's key
  JsonRef value(size_t i) const;              // object member i's value
  std::optional<JsonRef> find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key).has_value(); }

  // Compact JSON text of this value.
  std::string dump() const;

 private:
  void dump_to(std::string& out) const;
  const JsonDoc* doc_;
  uint32_t id_;
};

class JsonDoc {
 public:
  static constexpr int kMaxDepth = 256;

  // Parses `text` (which must outlive the document); throws JsonSyntaxError
  // with the line, column and what was expected.
  explicit JsonDoc(std::string_view text);
  JsonRef root() const { return JsonRef(this, 0); }

 private:
  friend class JsonRef;
  friend class JsonParser;
  struct Slot {
    JsonRef::Type type;
    bool b = false;
    uint32_t first = 0;  // Array/Object: index into kids_; String: index into strings_
    uint32_t count = 0;  // Array: elements; Object: members (kids_ holds key, value pairs)
    int64_t i = 0;
    double f = 0.0;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> kids_;  // Array: value ids; Object: (string id, value id) pairs
  std::vector<std::string_view> strings_;
  std::deque<std::string> decoded_;  // strings that had escapes
};

}  // namespace sator
