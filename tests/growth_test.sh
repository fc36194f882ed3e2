#!/usr/bin/env bash
# Growth (issue 22): 8 disjoint copies of a training graph against one.
# Saturation takes the same number of iterations and saturates; optimize,
# greedy and chunk planning each take less than 24x the one-copy time
# (linear is 8x; the quadratic greedy of before took 58x, chunk planning 18x
# at 4 copies). A ratio, so that a slow or sanitized build passes as well.
#   tests/growth_test.sh SATOR GRAPH.json PYTHON REPLICATE.py
set -u
sator=$1 graph=$2 python=$3 replicate=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$python" "$replicate" "$graph" 1 "$tmp/g1.json" && "$python" "$replicate" "$graph" 8 "$tmp/g8.json" || exit 1
# seconds CMD...: runs CMD (which must succeed) and prints its wall time.
seconds() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null 2> "$tmp/err.txt" || { fail "$* exited $?: $(head -c 300 "$tmp/err.txt")"; echo 0; return; }
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 ))"
}
for what in optimize greedy chunk; do
  case $what in
    optimize) args=(optimize) ;;
    greedy) args=(greedy) ;;
    chunk) args=(optimize --chunk auto) ;;
  esac
  one=$(seconds "$sator" "${args[@]}" "$tmp/g1.json" -o "$tmp/o1.json" --report "$tmp/r1.json")
  eight=$(seconds "$sator" "${args[@]}" "$tmp/g8.json" -o "$tmp/o8.json" --report "$tmp/r8.json")
  echo "$what: 1 copy ${one} ms, 8 copies ${eight} ms"
  [ "$one" -gt 0 ] && [ "$eight" -lt $((24 * one)) ] || fail "$what on 8 copies took ${eight} ms, 24x or more of one copy's ${one} ms"
  if [ "$what" = optimize ]; then
    "$python" - "$tmp/r1.json" "$tmp/r8.json" <<'PY' || fail "saturation on 8 copies differs from one copy"
import json, sys
a, b = (json.load(open(p))["egraph"] for p in sys.argv[1:3])
print(f"iterations: 1 copy {a['iterations']} ({a['stop_reason']}), 8 copies {b['iterations']} ({b['stop_reason']})")
assert a["stop_reason"] == b["stop_reason"] == "saturated" and a["iterations"] == b["iterations"]
PY
  fi
done
# An inline constant of 2M float32 elements (38 MB of text) costs its packed
# 8 bytes an element plus the text it came from, not a Value per element:
# 187 MB, where the Values took 869 MB. Bound: 8x the text. Not under a
# sanitizer, whose shadow memory and quarantine are no property of sator.
"$python" "$(dirname "$replicate")/constant_graph.py" 2000000 "$tmp/c.json" || exit 1
if ldd "$sator" 2> /dev/null | grep -q -e libasan -e libubsan; then
  echo "SKIP constant memory check: a sanitized build"
elif [ -x /usr/bin/time ]; then
  /usr/bin/time -f "%M" -o "$tmp/rss.txt" "$sator" optimize "$tmp/c.json" -o "$tmp/c.out.json" > /dev/null ||
    fail "optimize on a 2M-element constant exited $?"
  rss=$(tail -n 1 "$tmp/rss.txt")
  echo "2M-element constant: optimize peak RSS ${rss} KB"
  limit=$(( $(stat -c %s "$tmp/c.json") * 8 / 1024 ))
  [ "$rss" -lt "$limit" ] || fail "optimize on a 2M-element constant took ${rss} KB, 8x its text (${limit} KB) or more"
  cmp -s <("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][1]["value"][:5])' "$tmp/c.json") \
         <("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][1]["value"][:5])' "$tmp/c.out.json") ||
    fail "the constant was not written back as read"
else
  echo "SKIP constant memory check: /usr/bin/time missing (Debian package time, which scripts/deps installs)"
fi
echo "$failures failed"
[ "$failures" -eq 0 ]
