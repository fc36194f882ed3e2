#include "ir/json_doc.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace sator {

// ---------------------------------------------------------------------------
// Parsing

class JsonParser {
 public:
  JsonParser(JsonDoc& doc, std::string_view text) : doc_(doc), text_(text) {}

  void parse() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // RFC 8259 lets a parser ignore a byte-order mark
    skip_space();
    doc_.slots_.emplace_back();  // the root is slot 0
    parse_value(0, 0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the document");
  }

 private:
  using Type = JsonRef::Type;

  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw JsonSyntaxError(what + " at line " + std::to_string(line) + ", column " + std::to_string(column));
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }

  bool at_end() const { return pos_ >= text_.size(); }

  static std::string describe_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) return std::string("character '") + c + "'";
    static const char* kHex = "0123456789abcdef";
    return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
  }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void expect_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
  }

  void parse_value(uint32_t slot, int depth) {
    if (depth > JsonDoc::kMaxDepth) fail("nesting deeper than " + std::to_string(JsonDoc::kMaxDepth) + " levels");
    if (at_end()) fail("unexpected end of input");
    switch (peek()) {
      case '{': return parse_object(slot, depth);
      case '[': return parse_array(slot, depth);
      case '"': {
        uint32_t s = parse_string();
        doc_.slots_[slot].type = Type::String;
        doc_.slots_[slot].first = s;
        return;
      }
      case 't': expect_word("true"); set_bool(slot, true); return;
      case 'f': expect_word("false"); set_bool(slot, false); return;
      case 'n': expect_word("null"); doc_.slots_[slot].type = Type::Null; return;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number(slot);
        fail("unexpected " + describe_char(peek()));
    }
  }

  void set_bool(uint32_t slot, bool v) {
    doc_.slots_[slot].type = Type::Bool;
    doc_.slots_[slot].b = v;
  }

  uint32_t new_slot() {
    doc_.slots_.emplace_back();
    return static_cast<uint32_t>(doc_.slots_.size() - 1);
  }

  void parse_array(uint32_t slot, int depth) {
    ++pos_;  // [
    const size_t base = stack_.size();
    skip_space();
    if (peek() == ']') {
      ++pos_;
    } else {
      for (;;) {
        skip_space();
        uint32_t child = new_slot();
        stack_.push_back(child);
        parse_value(child, depth + 1);
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        if (peek() == ']') {
          ++pos_;
          break;
        }
        fail("expected ',' or ']' in an array");
      }
    }
    finish(slot, Type::Array, base, stack_.size() - base);
  }

  void parse_object(uint32_t slot, int depth) {
    ++pos_;  // {
    const size_t base = stack_.size();
    skip_space();
    if (peek() == '}') {
      ++pos_;
    } else {
      for (;;) {
        skip_space();
        if (peek() != '"') fail("expected a string key in an object");
        stack_.push_back(parse_string());
        skip_space();
        if (peek() != ':') fail("expected ':' after an object key");
        ++pos_;
        skip_space();
        uint32_t child = new_slot();
        stack_.push_back(child);
        parse_value(child, depth + 1);
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        if (peek() == '}') {
          ++pos_;
          break;
        }
        fail("expected ',' or '}' in an object");
      }
    }
    const size_t members = (stack_.size() - base) / 2;
    check_unique_keys(base, members);
    finish(slot, Type::Object, base, members);
  }

  void check_unique_keys(size_t base, size_t members) {
    std::vector<std::string_view> keys;
    keys.reserve(members);
    for (size_t m = 0; m < members; ++m) keys.push_back(doc_.strings_[stack_[base + 2 * m]]);
    std::sort(keys.begin(), keys.end());
    auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) fail("duplicate key \"" + std::string(*dup) + "\" in an object");
  }

  // Moves the children collected on the stack into the document's kid list.
  void finish(uint32_t slot, Type type, size_t base, size_t count) {
    JsonDoc::Slot& s = doc_.slots_[slot];
    s.type = type;
    s.first = static_cast<uint32_t>(doc_.kids_.size());
    s.count = static_cast<uint32_t>(count);
    doc_.kids_.insert(doc_.kids_.end(), stack_.begin() + static_cast<long>(base), stack_.end());
    stack_.resize(base);
  }

  void parse_number(uint32_t slot) {
    const size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      fail("invalid number");
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digits expected after '.'");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digits expected in the exponent");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    JsonDoc::Slot& s = doc_.slots_[slot];
    if (integral) {
      auto [ptr, ec] = std::from_chars(first, last, s.i);
      // Out of range is not a syntax error: the reader reports it with the node.
      s.b = ec == std::errc::result_out_of_range;
      if ((ec != std::errc() && !s.b) || ptr != last) fail("invalid number");
      s.type = Type::Int;
    } else {
      auto [ptr, ec] = std::from_chars(first, last, s.f);
      if (ec == std::errc::result_out_of_range) {
        // Underflow to zero is harmless; overflow to infinity is not JSON.
        if (std::fabs(std::strtod(std::string(first, last).c_str(), nullptr)) > 1.0) fail("number out of range");
        s.f = 0.0;
      } else if (ec != std::errc() || ptr != last) {
        fail("invalid number");
      }
      s.type = Type::Float;
    }
  }

  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  uint32_t read_hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      int d = hex_digit(text_[pos_++]);
      if (d < 0) fail("invalid \\u escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Length of the valid UTF-8 sequence at pos_, or fails.
  size_t utf8_length() {
    const auto byte = [&](size_t k) -> unsigned {
      return pos_ + k < text_.size() ? static_cast<unsigned char>(text_[pos_ + k]) : 0u;
    };
    const unsigned c = byte(0);
    auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(k) >= lo && byte(k) <= hi; };
    if (c >= 0xC2 && c <= 0xDF && cont(1)) return 2;
    if (c == 0xE0 && cont(1, 0xA0) && cont(2)) return 3;
    if (((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) && cont(1) && cont(2)) return 3;
    if (c == 0xED && cont(1, 0x80, 0x9F) && cont(2)) return 3;
    if (c == 0xF0 && cont(1, 0x90) && cont(2) && cont(3)) return 4;
    if (c >= 0xF1 && c <= 0xF3 && cont(1) && cont(2) && cont(3)) return 4;
    if (c == 0xF4 && cont(1, 0x80, 0x8F) && cont(2) && cont(3)) return 4;
    fail("invalid UTF-8 in a string");
  }

  uint32_t parse_string() {
    ++pos_;  // opening quote
    const size_t start = pos_;
    std::string decoded;
    bool escaped = false;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') break;
      if (c < 0x20) fail("control character in a string");
      if (c == '\\') {
        if (!escaped) decoded.assign(text_.substr(start, pos_ - start));
        escaped = true;
        ++pos_;
        if (at_end()) fail("unterminated string");
        const char e = text_[pos_++];
        switch (e) {
          case '"': decoded += '"'; break;
          case '\\': decoded += '\\'; break;
          case '/': decoded += '/'; break;
          case 'b': decoded += '\b'; break;
          case 'f': decoded += '\f'; break;
          case 'n': decoded += '\n'; break;
          case 'r': decoded += '\r'; break;
          case 't': decoded += '\t'; break;
          case 'u': {
            uint32_t cp = read_hex4();
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (text_.substr(pos_, 2) != "\\u") fail("unpaired high surrogate in \\u escape");
              pos_ += 2;
              uint32_t low = read_hex4();
              if (low < 0xDC00 || low > 0xDFFF) fail("invalid low surrogate in \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            append_utf8(decoded, cp);
            break;
          }
          default: fail("invalid escape in a string");
        }
        continue;
      }
      const size_t len = c < 0x80 ? 1 : utf8_length();
      if (escaped) decoded.append(text_.substr(pos_, len));
      pos_ += len;
    }
    std::string_view view = text_.substr(start, pos_ - start);
    ++pos_;  // closing quote
    if (escaped) {
      doc_.decoded_.push_back(std::move(decoded));
      view = doc_.decoded_.back();
    }
    doc_.strings_.push_back(view);
    return static_cast<uint32_t>(doc_.strings_.size() - 1);
  }

  JsonDoc& doc_;
  std::string_view text_;
  size_t pos_ = 0;
  std::vector<uint32_t> stack_;  // children of the arrays/objects being parsed
};

JsonDoc::JsonDoc(std::string_view text) {
  slots_.reserve(text.size() / 6 + 16);
  kids_.reserve(text.size() / 6 + 16);
  strings_.reserve(text.size() / 12 + 16);
  JsonParser(*this, text).parse();
}

// ---------------------------------------------------------------------------
// Access

JsonRef::Type JsonRef::type() const { return doc_->slots_[id_].type; }

const char* JsonRef::type_name() const {
  switch (type()) {
    case Type::Null: return "null";
    case Type::Bool: return "a bool";
    case Type::Int: return "an integer";
    case Type::Float: return "a float";
    case Type::String: return "a string";
    case Type::Array: return "an array";
    case Type::Object: return "an object";
  }
  return "?";
}

bool JsonRef::as_bool() const { return doc_->slots_[id_].b; }
bool JsonRef::int_overflow() const { return type() == Type::Int && doc_->slots_[id_].b; }
int64_t JsonRef::as_int() const { return doc_->slots_[id_].i; }
double JsonRef::as_double() const {
  const auto& s = doc_->slots_[id_];
  return s.type == Type::Int ? static_cast<double>(s.i) : s.f;
}
std::string_view JsonRef::as_string() const { return doc_->strings_[doc_->slots_[id_].first]; }

size_t JsonRef::size() const {
  const auto& s = doc_->slots_[id_];
  return s.type == Type::Array || s.type == Type::Object ? s.count : 0;
}

JsonRef JsonRef::operator[](size_t i) const { return JsonRef(doc_, doc_->kids_[doc_->slots_[id_].first + i]); }

std::string_view JsonRef::key(size_t i) const {
  return doc_->strings_[doc_->kids_[doc_->slots_[id_].first + 2 * i]];
}

JsonRef JsonRef::value(size_t i) const { return JsonRef(doc_, doc_->kids_[doc_->slots_[id_].first + 2 * i + 1]); }

std::optional<JsonRef> JsonRef::find(std::string_view k) const {
  if (type() != Type::Object) return std::nullopt;
  for (size_t i = 0; i < size(); ++i)
    if (key(i) == k) return value(i);
  return std::nullopt;
}

namespace {

void dump_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20) {
      static const char* kHex = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

void JsonRef::dump_to(std::string& out) const {
  switch (type()) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += as_bool() ? "true" : "false"; break;
    case Type::Int: out += int_overflow() ? "0" : std::to_string(as_int()); break;
    case Type::Float: {
      char buf[64];
      auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, as_double());  // shortest round-trip form
      std::string_view text(buf, static_cast<size_t>(ptr - buf));
      out += text;
      if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
      break;
    }
    case Type::String: dump_string(out, as_string()); break;
    case Type::Array:
      out += '[';
      for (size_t i = 0; i < size(); ++i) {
        if (i) out += ',';
        (*this)[i].dump_to(out);
      }
      out += ']';
      break;
    case Type::Object:
      out += '{';
      for (size_t i = 0; i < size(); ++i) {
        if (i) out += ',';
        dump_string(out, key(i));
        out += ':';
        value(i).dump_to(out);
      }
      out += '}';
      break;
  }
}

std::string JsonRef::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

}  // namespace sator
