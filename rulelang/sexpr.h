// S-expressions as rule files write them: atoms, (lists), [list literals]
// and "strings", each remembering where it starts so that every error can
// name the file, line and column.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sator::rulelang {

// A file name kept for the life of the process (every token names its file:
// a pointer, not a copy).
const std::string& intern_file_name(std::string_view name);
inline const std::string kNoFile;

struct Where {
  const std::string* file = &kNoFile;
  size_t line = 1, column = 1;
  Where() = default;
  Where(std::string_view f, size_t l, size_t c) : file(&intern_file_name(f)), line(l), column(c) {}
  std::string text() const { return *file + ":" + std::to_string(line) + ":" + std::to_string(column); }
};

// A rule file's syntax or type error; what() is "file:line:col: message".
struct RuleError : std::runtime_error {
  RuleError(const Where& at, const std::string& message) : std::runtime_error(at.text() + ": " + message) {}
};

struct SExpr {
  enum class Kind { Atom, String, List, Brackets } kind = Kind::Atom;
  std::string text;            // Atom, String (without the quotes)
  std::vector<SExpr> items;    // List, Brackets
  Where at;

  bool is_atom() const { return kind == Kind::Atom; }
  bool is_atom(std::string_view t) const { return kind == Kind::Atom && text == t; }
  bool is_list() const { return kind == Kind::List; }
  // "(op a b)": the head atom, or "" for an empty or headless list.
  std::string_view head() const {
    return kind == Kind::List && !items.empty() && items[0].is_atom() ? std::string_view(items[0].text) : std::string_view();
  }
  std::string to_string() const;
};

// How deep a rule file's expressions may nest, as written and once helpers
// are expanded: every walk over an expression (typing, compiling, matching)
// recurses, so a deeper one is refused with its place rather than
// overflowing the stack. Real rules nest under 20.
inline constexpr size_t kMaxNesting = 256;
// How many terms one expression may hold once helpers are expanded.
inline constexpr size_t kMaxTerms = 1'000'000;

// The terms an expression holds and how deep it nests (computed without recursion).
struct Extent {
  size_t terms = 0, depth = 0;
};
Extent extent_of(const SExpr& e);

// The top-level expressions of a file. `#` starts a comment to the end of
// the line; an expression nested deeper than kMaxNesting is a RuleError at
// its place.
std::vector<SExpr> parse_sexprs(std::string_view text, const std::string& file);

}  // namespace sator::rulelang
