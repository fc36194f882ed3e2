#!/usr/bin/env bash
# End-to-end checks of the `sator` command: every corpus graph loads, bad
# input exits 2 with one line naming the file, and no partial output is left.
set -u
sator=$1 corpus=$2 bad=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Every corpus graph, both variants: info succeeds, --json is valid JSON with 0 mismatches.
count=0
for f in "$corpus"/graphs/*.json "$corpus"/inductor/*.json; do
  count=$((count + 1))
  "$sator" info "$f" > "$tmp/info.txt" 2>&1 || fail "info $f: $(head -1 "$tmp/info.txt")"
  grep -q " 0 mismatches" "$tmp/info.txt" || fail "info $f does not report 0 mismatches"
done
[ "$count" -ge 92 ] || fail "expected at least 92 corpus files, found $count"
"$sator" info --json "$corpus/graphs/gpt2.infer.dyn.g0.json" > "$tmp/info.json" || fail "info --json"
python3 - "$tmp/info.json" <<'PY' || fail "info --json content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["nodes"] == 244 and j["layout_ops"] == 86, j
assert [s["name"] for s in j["symbols"]] == ["s27", "s52"], j["symbols"]
assert j["shape_check"]["mismatches"] == 0 and j["shape_check"]["inferred"] > 200
assert len(j["inputs"]["input"]) == 33
PY

# dot: writes a picture with layout ops styled apart and shapes on edges.
"$sator" dot "$corpus/graphs/zoo_views.infer.g0.json" -o "$tmp/g.dot" || fail "dot"
grep -q "dashed" "$tmp/g.dot" || fail "dot: layout ops not styled"
grep -q 'label="\[' "$tmp/g.dot" || fail "dot: no shapes on edges"
if command -v dot > /dev/null; then dot -Tsvg "$tmp/g.dot" -o "$tmp/g.svg" || fail "graphviz rejects the .dot"; fi

# Bad input: exit 2, a single line naming the file, no output file.
for f in "$bad"/*.json; do
  "$sator" dot "$f" -o "$tmp/bad.dot" > /dev/null 2> "$tmp/err.txt"
  status=$?
  [ "$status" -eq 2 ] || fail "dot $f exited $status, expected 2"
  [ "$(wc -l < "$tmp/err.txt")" -eq 1 ] || fail "dot $f printed $(wc -l < "$tmp/err.txt") lines"
  grep -q "$(basename "$f")" "$tmp/err.txt" || fail "message for $f does not name the file"
  [ ! -e "$tmp/bad.dot" ] || fail "dot $f left an output file"
  ls "$tmp" | grep -q "bad.dot.tmp" && fail "dot $f left a temporary file"
  "$sator" info "$f" > /dev/null 2>&1
  [ $? -eq 2 ] || fail "info $f should exit 2"
done
grep -q "node 'y'" <("$sator" info "$bad/shape_mismatch.json" 2>&1) || fail "shape mismatch message lacks the node"
"$sator" info /nonexistent.json 2> /dev/null; [ $? -eq 2 ] || fail "missing file should exit 2"
"$sator" info 2> /dev/null; [ $? -eq 2 ] || fail "missing argument should exit 2"
"$sator" frobnicate 2> /dev/null; [ $? -eq 2 ] || fail "unknown subcommand should exit 2"
"$sator" dot "$corpus/graphs/zoo_views.infer.g0.json" -o /nonexistent-dir/x.dot 2> /dev/null
[ $? -eq 2 ] || fail "unwritable output should exit 2"

passed=$(( count + 1 ))
echo "$passed passed, $failures failed"
# check-rules: one rule as JSON; bad usage exits 2.
"$sator" check-rules --rule view-of-view --trials 30 --json > "$tmp/cr.json" || fail "check-rules --rule view-of-view"
python3 - "$tmp/cr.json" <<'PY' || fail "check-rules --json content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] and len(j["rules"]) == 1, j
r = j["rules"][0]
assert r["rule"] == "view-of-view" and r["trials"] == 30 and r["max_rel_error"] < 1e-9, r
assert r["shape_proof"].startswith("proved") and "proved" in r["index_proof"], r
PY
"$sator" check-rules --list | grep -qx "attention" || fail "check-rules --list lacks attention"
"$sator" check-rules --rule no-such-rule > /dev/null 2>&1; [ $? -eq 2 ] || fail "check-rules --rule no-such-rule: not exit 2"
"$sator" check-rules --trials 0 > /dev/null 2>&1; [ $? -eq 2 ] || fail "check-rules --trials 0: not exit 2"

# optimize --verify: the report says passed; a skipped graph says why.
"$sator" optimize "$corpus/graphs/zoo_hf.infer.dyn.g0.json" --verify --report "$tmp/v.json" -o "$tmp/v_out.json" > /dev/null ||
  fail "optimize --verify"
python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['verify']; assert v['status']=='passed' and v['max_rel_error']<1e-9, v" \
  "$tmp/v.json" || fail "optimize --verify report"
[ -s "$tmp/v_out.json" ] || fail "optimize --verify wrote no graph"
"$sator" optimize "$corpus/graphs/gpt2.train.g0.json" --verify | grep -q "^verify: skipped: too large" ||
  fail "optimize --verify on a large static graph does not say it skipped"

# extract: an extraction-gym file; ilp finds the shared child (7) the tree misses (8).
gym=$(dirname "$bad")/data/gym/shared_child.json
"$sator" extract "$gym" --extractor tree | grep -q "dag cost 8," || fail "extract tree: dag cost 8"
"$sator" extract "$gym" --extractor ilp | grep -q "dag cost 7,.*proved optimal" || fail "extract ilp: dag cost 7, optimal"
"$sator" extract "$gym" --extractor ilp --json | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['dag_cost']==7 and j['proved_optimal'], j" ||
  fail "extract --json"
"$sator" extract "$gym" --extractor best > /dev/null 2>&1; [ $? -eq 2 ] || fail "extract --extractor best: not exit 2"
"$sator" extract "$bad/empty.json" > /dev/null 2> "$tmp/err.txt"; [ $? -eq 2 ] || fail "extract of a bad file: not exit 2"

[ "$failures" -eq 0 ]
