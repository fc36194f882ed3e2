// Rule files: the shipped ones (rules/*.rules, compiled into the binary) and
// a user's, read, compiled and made into e-graph rewrites.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"
#include "rulelang/compiled_rule.h"
#include "rulelang/rule_spec.h"

namespace sator::rulelang {

struct RuleFile {
  std::string path;  // as named in messages: "rules/layout.rules" for a shipped one
  std::vector<RuleSpec> rules;
};

// A shipped file by its name ("layout"); throws std::logic_error if there is
// none (a build without it is broken).
const RuleFile& shipped_rule_file(const std::string& name);
// A shipped file's text, as compiled in.
const char* shipped_rule_source(const std::string& name);
// The names of the shipped files ("layout", "pointwise", ...).
std::vector<std::string> shipped_rule_file_names();
// Reads and parses a file; throws RuleError naming it (unreadable files too).
RuleFile read_rule_file(const std::string& path);
RuleFile parse_rule_text(const std::string& text, const std::string& path);
// A rule file's text (a regular file of at most kMaxRuleFileBytes), or a
// RuleError at its first line.
std::string read_rule_text(const std::string& path);

// Every rule of the files compiled against the tensor language (each
// direction of a `<=>` rule); throws RuleError for one that does not.
std::vector<std::shared_ptr<CompiledRule>> compile_rules(const std::vector<RuleFile>& files, TensorLanguage& lang);
// The rewrites that run them on `t`.
std::vector<eg::Rewrite> make_rewrites(const std::vector<RuleFile>& files, TensorEGraph& t);

}  // namespace sator::rulelang
