// Option checks shared by the commands.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace sator::cli {

// Counts and limits parse into unsigned integers, which would take "-5" as a
// huge number: a leading minus is refused with a plain message.
inline CLI::Validator non_negative_count() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const size_t first = s.find_first_not_of(" \t");
        return first != std::string::npos && s[first] == '-' ? "must be a whole number of 0 or more, not " + s : "";
      },
      "COUNT");
}

// An output path: given, it names a file (an empty one would silently
// write nothing).
inline CLI::Validator output_path() {
  return CLI::Validator([](std::string& s) -> std::string { return s.empty() ? "an empty path names no file" : ""; },
                        "PATH");
}

// A number within [lo, hi] (lo excluded where `open_low`): finite, and the
// message names the range. Checked on the text, before CLI11 converts it
// (a count past 2^64 would otherwise wrap or saturate unseen).
inline CLI::Validator in_range(double lo, double hi, bool open_low = false) {
  auto fmt = [](double x) {
    std::string t = std::to_string(x);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t;
  };
  const std::string range = (open_low ? "more than " : "") + fmt(lo) + (open_low ? " and at most " : " to ") + fmt(hi);
  return CLI::Validator(
      [lo, hi, open_low, range](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool parsed = end && end != s.c_str() && *end == '\0';
        if (!parsed || !std::isfinite(v) || v > hi || (open_low ? v <= lo : v < lo))
          return "must be " + range + ", not " + s;
        return "";
      },
      "NUMBER in [" + fmt(lo) + ", " + fmt(hi) + "]");
}

// An option's old spelling, still accepted: its value goes where the new
// spelling's does, with a note on standard error (one spelling for each
// option across the subcommands: `--chunks` in optimize and chunk alike).
// Hidden from --help; given with the new spelling too, the later one holds.
inline void add_old_spelling(CLI::App* cmd, const std::string& old_name, CLI::Option* current, std::string& target) {
  const std::string new_name = current->get_name();
  cmd->add_option(old_name, target)
      ->group("")
      ->each([old_name, new_name](const std::string&) {
        std::fprintf(stderr, "sator: %s is spelled %s now (the old spelling is accepted for now)\n", old_name.c_str(),
                     new_name.c_str());
      });
}

}  // namespace sator::cli
