// A user's rules run only once check-rules has passed them. The passes are
// remembered in a cache keyed by each rule's meaning (its text with helpers
// expanded, and the checker's version), so a second run of the same file
// checks nothing: $SATOR_PROOF_CACHE, else $XDG_CACHE_HOME/sator/proofs,
// else ~/.cache/sator/proofs; SATOR_PROOF_CACHE=off keeps no cache.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "rulelang/rule_set.h"

namespace sator::check {

// The cache folder, or "" where there is none.
std::string proof_cache_dir();

// Throws RuleError at the first rule of `files` that does not pass
// check-rules (its file, line and column, what failed, and how to see the
// counterexample). Progress lines go to `progress` when not null.
void require_proved(const std::vector<rulelang::RuleFile>& files, std::ostream* progress);

}  // namespace sator::check
