#include "rulelang/sexpr.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

namespace sator::rulelang {

const std::string& intern_file_name(std::string_view name) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> names;
  std::lock_guard<std::mutex> lock(mu);
  auto it = names.find(name);
  if (it == names.end()) it = names.emplace(name).first;
  return *it;
}

std::string SExpr::to_string() const {
  switch (kind) {
    case Kind::Atom: return text;
    case Kind::String: return "\"" + text + "\"";
    case Kind::List:
    case Kind::Brackets: {
      std::string s(1, kind == Kind::List ? '(' : '[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) s.push_back(' ');
        s.append(items[i].to_string());
      }
      s.push_back(kind == Kind::List ? ')' : ']');
      return s;
    }
  }
  return text;
}

namespace {

// ASCII white space (std::isspace is a call per character, and locale-bound).
bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

class Reader {
 public:
  Reader(std::string_view text, const std::string& file) : s_(text) { at_.file = &intern_file_name(file); }

  std::vector<SExpr> all() {
    std::vector<SExpr> out;
    for (skip(); pos_ < s_.size(); skip()) out.push_back(one());
    return out;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  Where at_;

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void advance() {
    if (s_[pos_] == '\n') {
      ++at_.line;
      at_.column = 1;
    } else {
      ++at_.column;
    }
    ++pos_;
  }
  void skip() {
    while (pos_ < s_.size()) {
      const char c = peek();
      if (c == '#') {
        while (pos_ < s_.size() && peek() != '\n') advance();
      } else if (is_space(c)) {
        advance();
      } else {
        break;
      }
    }
  }
  static bool delimiter(char c) {
    return c == '(' || c == ')' || c == '[' || c == ']' || c == '"' || c == '#' || is_space(c);
  }

  size_t depth_ = 0;

  SExpr one() {
    SExpr e;
    e.at = at_;
    const char c = peek();
    if ((c == '(' || c == '[') && depth_ >= kMaxNesting)
      throw RuleError(at_, "expression nested deeper than " + std::to_string(kMaxNesting) + " levels (sator's limit)");
    if (c == ')' || c == ']') throw RuleError(at_, std::string("unexpected '") + c + "'");
    if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      e.kind = c == '(' ? SExpr::Kind::List : SExpr::Kind::Brackets;
      advance();
      ++depth_;
      for (skip(); peek() != close; skip()) {
        if (pos_ >= s_.size()) throw RuleError(e.at, std::string("'") + c + "' is never closed");
        if (peek() == ')' || peek() == ']') throw RuleError(at_, std::string("'") + peek() + "' closes '" + c + "'");
        e.items.push_back(one());
      }
      --depth_;
      advance();
      return e;
    }
    if (c == '"') {
      e.kind = SExpr::Kind::String;
      advance();
      while (peek() != '"') {
        if (pos_ >= s_.size() || peek() == '\n') throw RuleError(e.at, "string is never closed");
        if (peek() == '\\') {
          advance();
          if (pos_ >= s_.size()) throw RuleError(e.at, "string is never closed");
        }
        e.text += peek();
        advance();
      }
      advance();
      return e;
    }
    while (pos_ < s_.size() && !delimiter(peek())) {
      const unsigned char ch = static_cast<unsigned char>(peek());
      if (ch < 0x20 || ch == 0x7f) throw RuleError(at_, "control character in a name");
      e.text += peek();
      advance();
    }
    // `?out=(view ?x _)` names the node it matches: read as (as ?out (view ?x _)).
    if (e.text.size() > 2 && e.text[0] == '?' && e.text.back() == '=' && peek() == '(') {
      SExpr as;
      as.kind = SExpr::Kind::List;
      as.at = e.at;
      as.items.push_back(SExpr{SExpr::Kind::Atom, "as", {}, e.at});
      e.text.pop_back();
      as.items.push_back(std::move(e));
      as.items.push_back(one());
      return as;
    }
    // `?b=?x` (a multi-pattern's root rewritten to a variable): (as ?b ?x).
    if (const size_t eq = e.text.find('='); e.text[0] == '?' && eq != std::string::npos && eq > 1 && eq + 1 < e.text.size()) {
      SExpr as;
      as.kind = SExpr::Kind::List;
      as.at = e.at;
      as.items.push_back(SExpr{SExpr::Kind::Atom, "as", {}, e.at});
      as.items.push_back(SExpr{SExpr::Kind::Atom, e.text.substr(0, eq), {}, e.at});
      Where value_at = e.at;
      value_at.column += eq + 1;
      as.items.push_back(SExpr{SExpr::Kind::Atom, e.text.substr(eq + 1), {}, value_at});
      return as;
    }
    return e;
  }
};

}  // namespace

std::vector<SExpr> parse_sexprs(std::string_view text, const std::string& file) { return Reader(text, file).all(); }

Extent extent_of(const SExpr& e) {
  Extent x;
  std::vector<std::pair<const SExpr*, size_t>> stack = {{&e, 1}};
  while (!stack.empty()) {
    const auto [s, d] = stack.back();
    stack.pop_back();
    ++x.terms;
    x.depth = std::max(x.depth, d);
    for (const SExpr& item : s->items) stack.emplace_back(&item, d + 1);
  }
  return x;
}

}  // namespace sator::rulelang
