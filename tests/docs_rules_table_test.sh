#!/bin/bash
# docs/rules.md's rule table is the output of `sator check-rules --list --markdown`.
#   docs_rules_table_test.sh SATOR DOCS_RULES_MD
set -u
want=$("$1" check-rules --list --markdown) || { echo "FAIL: sator check-rules --list --markdown"; exit 1; }
have=$(sed -n '/<!-- rules table: begin/,/<!-- rules table: end -->/p' "$2" | sed '1d;$d')
if [ "$want" != "$have" ]; then
  echo "FAIL: docs/rules.md's rule table is out of date; regenerate it with sator check-rules --list --markdown:"
  diff <(echo "$have") <(echo "$want") | head -20
  exit 1
fi
echo "docs/rules.md's table matches the rules ($(echo "$want" | tail -n +3 | wc -l) rules)"
