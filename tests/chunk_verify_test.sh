#!/usr/bin/env bash
# `sator chunk GRAPH --verify [ARGS...]` must chunk the graph and say "verify: passed".
set -euo pipefail
sator=$1 graph=$2
shift 2
out=$("$sator" chunk "$graph" --verify "$@")
echo "$out"
grep -q '^chunk: amplifier' <<< "$out" || { echo "FAIL: $graph was not chunked" >&2; exit 1; }
grep -q '^verify: passed' <<< "$out" || { echo "FAIL: the chunked $graph was not verified" >&2; exit 1; }
