#include "egraph/pattern.h"

#include <algorithm>
#include <cctype>

namespace sator::eg {

namespace {

class SexpParser {
 public:
  SexpParser(std::string_view text, Language& lang, std::vector<std::string>& vars, std::vector<PatternNode>& out)
      : text_(text), lang_(lang), vars_(vars), out_(out) {}

  uint32_t parse() {
    const uint32_t root = node(0);
    skip();
    if (pos_ != text_.size()) fail("unexpected text after the pattern");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PatternError("pattern \"" + std::string(text_) + "\": " + what + " at offset " + std::to_string(pos_));
  }
  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string_view token() {
    skip();
    const size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) && text_[pos_] != '(' &&
           text_[pos_] != ')')
      ++pos_;
    if (pos_ == start) fail("expected a token");
    return text_.substr(start, pos_ - start);
  }

  uint32_t emit(PatternNode n) {
    out_.push_back(std::move(n));
    return static_cast<uint32_t>(out_.size() - 1);
  }

  uint32_t leaf(std::string_view tok) {
    PatternNode n;
    if (tok[0] == '?') {
      if (tok.size() == 1) fail("a variable needs a name");
      auto it = std::find(vars_.begin(), vars_.end(), tok);
      n.is_var = true;
      n.var = static_cast<uint32_t>(it - vars_.begin());
      if (it == vars_.end()) vars_.emplace_back(tok);
      return emit(std::move(n));
    }
    auto term = lang_.parse_token(tok, 0);
    if (!term) fail("unknown token \"" + std::string(tok) + "\"");
    n.term = *term;
    n.ground = true;
    return emit(std::move(n));
  }

  uint32_t node(int depth) {
    if (depth > 500) fail("nested too deeply");
    skip();
    if (pos_ >= text_.size()) fail("unexpected end");
    if (text_[pos_] == ')') fail("unexpected ')'");
    if (text_[pos_] != '(') return leaf(token());
    ++pos_;
    const std::string_view head = token();
    if (head[0] == '?') fail("a variable cannot be applied");
    std::vector<uint32_t> kids;
    for (;;) {
      skip();
      if (pos_ >= text_.size()) fail("missing ')'");
      if (text_[pos_] == ')') {
        ++pos_;
        break;
      }
      kids.push_back(node(depth + 1));
    }
    auto term = lang_.parse_token(head, kids.size());
    if (!term) fail("unknown operator \"" + std::string(head) + "\"");
    PatternNode n;
    n.term = *term;
    n.ground = true;
    for (uint32_t k : kids) n.ground &= out_[k].ground;
    n.children = std::move(kids);
    return emit(std::move(n));
  }

  std::string_view text_;
  Language& lang_;
  std::vector<std::string>& vars_;
  std::vector<PatternNode>& out_;
  size_t pos_ = 0;
};

}  // namespace

Pattern Pattern::parse(std::string_view text, Language& lang, std::vector<std::string>& vars) {
  Pattern p;
  SexpParser(text, lang, vars, p.nodes_).parse();
  return p;
}

std::vector<uint32_t> Pattern::variables() const {
  std::vector<uint32_t> vs;
  for (const PatternNode& n : nodes_)
    if (n.is_var && std::find(vs.begin(), vs.end(), n.var) == vs.end()) vs.push_back(n.var);
  return vs;
}

std::string Pattern::to_string(const Language& lang, const std::vector<std::string>& vars) const {
  std::vector<std::string> text(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const PatternNode& n = nodes_[i];
    if (n.is_var) {
      text[i] = vars[n.var];
      continue;
    }
    std::string head = n.term.any_attr ? lang.op_name(n.term.op) + "@_" : lang.format_node(n.term.op, n.term.attr);
    if (n.children.empty()) {
      text[i] = head;
      continue;
    }
    text[i] = "(" + head;
    for (uint32_t c : n.children) text[i] += " " + text[c];
    text[i] += ")";
  }
  return text.back();
}

}  // namespace sator::eg
