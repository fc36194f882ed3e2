#!/usr/bin/env bash
# `sator optimize GRAPH --verify` must say "verify: passed" (not skipped or failed).
set -euo pipefail
sator=$1 graph=$2
out=$("$sator" optimize "$graph" --verify)
echo "$out"
grep -q '^verify: passed' <<< "$out" || { echo "FAIL: $graph was not verified" >&2; exit 1; }
