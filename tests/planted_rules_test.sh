#!/bin/bash
# The planted-bug suite: every file in tests/planted_rules/ holds one wrong
# rule; `sator check-rules --rules FILE` must reject it (exit 1), print the
# kind of failure the file's `# expect:` line names and the instance it
# failed on. Prints each rejection (the counterexample) as it goes.
#   planted_rules_test.sh SATOR DIR
set -u
sator=$1
dir=$2
fail=0
n=0
for f in "$dir"/*.rules; do
  n=$((n + 1))
  expect=$(grep -m1 '^# expect: ' "$f" | sed 's/^# expect: //')
  out=$("$sator" check-rules --rules "$f" --trials 40 2>/dev/null)
  rc=$?
  if [ "$rc" != 1 ]; then
    echo "FAIL $(basename "$f"): exit $rc, expected 1 (a rule check-rules passes)"
    fail=1
    continue
  fi
  if ! grep -q -- "$expect" <<<"$out" || ! grep -q "instance:" <<<"$out"; then
    echo "FAIL $(basename "$f"): rejected, but not for '$expect' with its instance:"
    echo "$out" | tail -12
    fail=1
    continue
  fi
  echo "rejected $(basename "$f") ($expect):"
  grep -m1 -A6 "^bad: " <<<"$out" | sed 's/^/    /'
done
if [ "$n" -lt 25 ]; then
  echo "FAIL: only $n planted rules (at least 25)"
  fail=1
fi
[ $fail = 0 ] && echo "all $n planted rules rejected"
exit $fail
