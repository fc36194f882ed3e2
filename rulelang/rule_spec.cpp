#include "rulelang/rule_spec.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "ir/op_table.h"
#include "rulelang/functions.h"

namespace sator::rulelang {

namespace {

struct Helper {
  std::vector<std::string> params;
  SExpr body;
};
using Helpers = std::map<std::string, Helper>;

bool is_var(const SExpr& e) { return e.is_atom() && e.text.size() > 1 && e.text[0] == '?'; }

bool valid_rule_name(const std::string& n) {
  if (n.empty() || n.size() > 100 || !std::isalpha(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

// An expression as an error message quotes it: at most 60 characters.
std::string brief(const SExpr& e) {
  std::string t = e.to_string();
  return t.size() > 60 ? t.substr(0, 57) + "..." : t;
}

bool is_header(const SExpr& e) {
  return e.is_atom() && e.text.size() > 1 && e.text.back() == ':' && e.text[0] != '?';
}

// Replaces calls of helpers by their bodies (with the arguments put in for
// the parameters), in place; a helper may call helpers defined before it.
void expand(SExpr& e, const Helpers& helpers, int depth = 0) {
  if (depth > 64) throw RuleError(e.at, "helpers nest more than 64 deep");
  if (helpers.empty() || (e.kind != SExpr::Kind::List && e.kind != SExpr::Kind::Brackets)) return;
  for (SExpr& item : e.items) expand(item, helpers, depth);
  const auto it = e.is_list() ? helpers.find(std::string(e.head())) : helpers.end();
  if (it == helpers.end()) return;
  const Helper& h = it->second;
  if (e.items.size() - 1 != h.params.size())
    throw RuleError(e.at, "helper '" + it->first + "' takes " + std::to_string(h.params.size()) + " arguments, not " +
                              std::to_string(e.items.size() - 1));
  std::map<std::string, const SExpr*> bind;
  for (size_t i = 0; i < h.params.size(); ++i) bind[h.params[i]] = &e.items[i + 1];
  // What the body becomes, counted before it is built: a helper that calls
  // another twice, six deep, would otherwise build billions of terms.
  {
    std::map<std::string, size_t> uses;
    std::vector<const SExpr*> stack = {&h.body};
    while (!stack.empty()) {
      const SExpr* s = stack.back();
      stack.pop_back();
      if (s->is_atom() && bind.count(s->text)) ++uses[s->text];
      for (const SExpr& item : s->items) stack.push_back(&item);
    }
    const Extent body = extent_of(h.body);
    double terms = static_cast<double>(body.terms);
    size_t depth = body.depth;
    for (const auto& [name, n] : uses) {
      const Extent arg = extent_of(*bind[name]);
      terms += static_cast<double>(n) * (static_cast<double>(arg.terms) - 1.0);
      depth = std::max(depth, body.depth + arg.depth);
    }
    if (terms > static_cast<double>(kMaxTerms))
      throw RuleError(e.at, "helper '" + it->first + "' expands to more than " + std::to_string(kMaxTerms) +
                                " terms (sator's limit for one expression)");
    if (depth > kMaxNesting)
      throw RuleError(e.at, "helper '" + it->first + "' expands to an expression nested deeper than " +
                                std::to_string(kMaxNesting) + " levels (sator's limit)");
  }
  std::function<SExpr(const SExpr&)> subst = [&](const SExpr& b) -> SExpr {
    if (b.is_atom()) {
      const auto p = bind.find(b.text);
      return p == bind.end() ? b : *p->second;
    }
    SExpr c;
    c.kind = b.kind;
    c.text = b.text;
    c.at = b.at;
    c.items.reserve(b.items.size());
    for (const SExpr& item : b.items) c.items.push_back(subst(item));
    return c;
  };
  SExpr body = subst(h.body);
  expand(body, helpers, depth + 1);
  e = std::move(body);
}

void define(const SExpr& d, Helpers& helpers) {
  if (d.items.size() != 3 || !d.items[1].is_list() || d.items[1].items.empty() || !d.items[1].items[0].is_atom())
    throw RuleError(d.at, "a helper is written (define (NAME ?param ...) EXPR)");
  const SExpr& sig = d.items[1];
  Helper h;
  std::set<std::string> seen;
  for (size_t i = 1; i < sig.items.size(); ++i) {
    if (!is_var(sig.items[i])) throw RuleError(sig.items[i].at, "a helper's parameters are ?names");
    if (!seen.insert(sig.items[i].text).second) throw RuleError(sig.items[i].at, "parameter '" + sig.items[i].text + "' twice");
    h.params.push_back(sig.items[i].text);
  }
  // A helper may not take the name of an op or a built-in function: a call
  // would no longer mean what it reads as.
  if (find_op(sig.items[0].text) || find_function(sig.items[0].text))
    throw RuleError(sig.items[0].at, "helper '" + sig.items[0].text + "' has the name of " +
                                         (find_op(sig.items[0].text) ? "an op" : "a built-in function") + "; name it otherwise");
  h.body = d.items[2];
  expand(h.body, helpers);
  if (!helpers.emplace(sig.items[0].text, std::move(h)).second)
    throw RuleError(sig.items[0].at, "helper '" + sig.items[0].text + "' is defined twice");
}

}  // namespace

std::vector<RuleSpec> parse_rule_file(std::string_view text, const std::string& file) {
  std::vector<SExpr> items = parse_sexprs(text, file);  // moved into the rules as they are read
  std::vector<RuleSpec> rules;
  std::set<std::string> names;
  Helpers helpers;
  size_t i = 0;
  while (i < items.size()) {
    const SExpr& e = items[i];
    if (e.head() == "define") {
      define(e, helpers);
      ++i;
      continue;
    }
    if (!is_header(e)) {
      // Before the first rule the file may be anything (a path typed by
      // mistake, a secret): what it holds is not echoed.
      if (rules.empty() && helpers.empty())
        throw RuleError(e.at, "expected a rule ('NAME: LHS => RHS') or (define ...): this does not start like a rule file");
      throw RuleError(e.at, "expected a rule ('NAME: LHS => RHS') or (define ...), found " + brief(e));
    }
    RuleSpec r;
    r.name = e.text.substr(0, e.text.size() - 1);
    r.at = e.at;
    // ASCII names only: no look-alike, invisible or ill-formed characters
    // (and, before the first rule, nothing of an unknown file is echoed).
    if (!valid_rule_name(r.name))
      throw RuleError(e.at, rules.empty() && helpers.empty()
                                ? "expected a rule name (letters, digits, '-', '_', '.'): this does not start like a rule file"
                                : "a rule name is letters, digits, '-', '_' and '.', starting with a letter");
    if (!names.insert(r.name).second) throw RuleError(e.at, "rule '" + r.name + "' is defined twice");
    ++i;
    auto need = [&](const char* what) -> SExpr& {
      if (i >= items.size() || is_header(items[i]))
        throw RuleError(i < items.size() ? items[i].at : e.at, std::string("rule '") + r.name + "' needs " + what);
      return items[i++];
    };
    const auto is_arrow = [](const SExpr& x) { return x.is_atom("=>") || x.is_atom("<=>"); };
    r.lhs.push_back(std::move(need("a left-hand side")));
    // A multi-pattern's further patterns (named, so the compiler can say so).
    while (i < items.size() && items[i].is_list() && items[i].head() != "define") r.lhs.push_back(std::move(items[i++]));
    const SExpr& arrow = need("'=>' or '<=>'");
    if (!is_arrow(arrow)) throw RuleError(arrow.at, "expected '=>' or '<=>', found " + brief(arrow));
    r.both_ways = arrow.is_atom("<=>");
    r.rhs.push_back(std::move(need("a right-hand side")));
    // A multi-pattern's further sides: ?root=EXPR each.
    while (i < items.size() && items[i].head() == "as") r.rhs.push_back(std::move(items[i++]));
    while (i < items.size() && !is_header(items[i]) && items[i].head() != "define") {
      const SExpr& k = items[i++];
      if (k.is_atom("if")) {
        r.conditions.push_back(std::move(need("a condition after 'if'")));
      } else if (k.is_atom("let")) {
        const SExpr& v = need("a ?name after 'let'");
        if (!is_var(v)) throw RuleError(v.at, "'let' names a ?variable");
        r.lets.emplace_back(v, std::move(need("a value after 'let ?name'")));
      } else if (k.is_atom("doc")) {
        const SExpr& d = need("a \"text\" after 'doc'");
        if (d.kind != SExpr::Kind::String) throw RuleError(d.at, "'doc' takes a \"string\"");
        r.doc = d.text;
      } else if (k.is_atom("approx")) {
        const SExpr& d = need("a \"reason\" after 'approx'");
        if (d.kind != SExpr::Kind::String || d.text.empty())
          throw RuleError(d.at, "'approx' takes a \"reason\": why a difference beyond a rounding is acceptable");
        r.approx = d.text;
      } else {
        throw RuleError(k.at, "expected 'if', 'let', 'doc', 'approx' or the next rule, found " + brief(k));
      }
    }
    for (SExpr& x : r.lhs) expand(x, helpers);
    for (SExpr& x : r.rhs) expand(x, helpers);
    for (auto& [v, x] : r.lets) expand(x, helpers);
    for (SExpr& c : r.conditions) expand(c, helpers);
    // What the rule means, helpers expanded: the proof cache's key.
    const auto side = [](const std::vector<SExpr>& xs) {
      std::string t;
      for (const SExpr& x : xs) {
        if (!t.empty()) t += ' ';
        t += x.to_string();
      }
      return t;
    };
    r.text = r.name + ": " + side(r.lhs) + (r.both_ways ? " <=> " : " => ") + side(r.rhs);
    for (const auto& [v, x] : r.lets) r.text += " let " + v.text + " " + x.to_string();
    for (const SExpr& c : r.conditions) r.text += " if " + c.to_string();
    if (!r.approx.empty()) r.text += " approx \"" + r.approx + "\"";
    rules.push_back(std::move(r));
  }
  return rules;
}

}  // namespace sator::rulelang
