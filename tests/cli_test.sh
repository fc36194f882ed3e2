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
# An unknown --objective: exit 2, the choices named, no output file.
"$sator" optimize "$corpus/graphs/zoo_views.infer.g0.json" -o "$tmp/objective.json" --objective fastest \
  > /dev/null 2> "$tmp/err.txt"
[ $? -eq 2 ] || fail "optimize --objective fastest should exit 2"
grep -q "memory" "$tmp/err.txt" && grep -q "balanced" "$tmp/err.txt" || fail "--objective error does not name the choices"
[ ! -e "$tmp/objective.json" ] || fail "optimize --objective fastest left an output file"

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
# A skipped verification is not a pass: it says so and exits 3 (issue 42),
# the output written all the same. (Dropout fused into SDPA draws its own
# numbers; a graph too large as a whole is compared region by region, and
# skipped where a region is too large: tests/test_interp_graphs.cpp.)
"$sator" optimize "$corpus/graphs/zoo_hf.train.g0.json" --fuse-dropout --verify -o "$tmp/skip_out.json" >"$tmp/skip.txt" 2>&1
status=$?
[ $status -eq 3 ] || fail "optimize --verify skipped: exit $status, not 3"
grep -q "^verify: SKIPPED, not verified (exit status 3): attention dropout was fused" "$tmp/skip.txt" ||
  fail "optimize --verify of fused dropout does not say it skipped: $(tail -3 "$tmp/skip.txt")"
[ -s "$tmp/skip_out.json" ] || fail "optimize --verify skipped wrote no graph"

# extract: an extraction-gym file; ilp finds the shared child (7) the tree misses (8).
gym=$(dirname "$bad")/data/gym/shared_child.json
"$sator" extract "$gym" --extractor tree | grep -q "dag cost 8," || fail "extract tree: dag cost 8"
"$sator" extract "$gym" --extractor ilp | grep -q "dag cost 7,.*proved optimal" || fail "extract ilp: dag cost 7, optimal"
"$sator" extract "$gym" --extractor ilp --json | python3 -c "import json,sys; j=json.load(sys.stdin); assert j['dag_cost']==7 and j['proved_optimal'], j" ||
  fail "extract --json"
"$sator" extract "$gym" --extractor best > /dev/null 2>&1; [ $? -eq 2 ] || fail "extract --extractor best: not exit 2"
"$sator" extract "$bad/empty.json" > /dev/null 2> "$tmp/err.txt"; [ $? -eq 2 ] || fail "extract of a bad file: not exit 2"

# chunk: GPT-2 small's LM head chunked, the plan reported; sator info accepts the output.
g124=$corpus/graphs/gpt2-124m.train.g0.json
"$sator" chunk "$g124" -o "$tmp/c.json" --report "$tmp/c_r.json" > "$tmp/c.txt" || fail "chunk gpt2-124m"
grep -q "^chunk: amplifier mm (aten.mm.default" "$tmp/c.txt" || fail "chunk: no amplifier line"
"$sator" info "$tmp/c.json" | grep -q " 0 mismatches" || fail "info of the chunked graph"
grep -q '"op":"sator.chunked"' "$tmp/c.json" || fail "chunk: no sator.chunked node written"
python3 - "$tmp/c_r.json" <<'PY' || fail "chunk --report content"
import json, sys
c = json.load(open(sys.argv[1]))["chunk"]
assert c["chunked"] and c["chunks"] >= 2 and c["amplifier_op"] == "aten.mm.default", c
assert c["peak_bytes_before"] - c["peak_bytes_after"] > 2603 * 2**20, c
assert c["eager_us_after"] <= 1.05 * c["eager_us_before"], c
assert [t["chunks"] for t in c["trials"]][:2] == [2, 4], c["trials"]
PY
# optimize --chunk: the extracted graph chunked; the report carries the plan and its time.
"$sator" optimize "$g124" --chunks 8 -o "$tmp/oc.json" --report "$tmp/oc_r.json" > /dev/null || fail "optimize --chunks 8"
python3 - "$tmp/oc_r.json" <<'PY' || fail "optimize --chunk report"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["chunk"]["chunked"] and j["chunk"]["chunks"] == 8, j["chunk"]
assert j["time_ms"]["chunk"] > 0 and j["peak_bytes_out"] < j["peak_bytes_in"], j
PY
"$sator" optimize "$corpus/graphs/zoo_hf.infer.g0.json" --report "$tmp/o0.json" > /dev/null || fail "optimize without --chunk"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['chunk'] is None" "$tmp/o0.json" 2> /dev/null ||
  fail "optimize without --chunk: the report's chunk is not null"
# A graph with nothing to chunk says why and still writes its graph.
"$sator" chunk "$corpus/graphs/zoo_sfdp1.infer.g0.json" -o "$tmp/nc.json" | grep -q "^chunk: not chunked: no amplifier" ||
  fail "chunk of a small graph does not say why it is not chunked"
[ -s "$tmp/nc.json" ] || fail "chunk without a region wrote no graph"
# Bad chunk options: exit 2, one line, no output file.
for args in "--chunks 0" "--chunks x" "--chunks 4 --memory-budget 1GiB" "--memory-budget 12parsecs" "--memory-budget 1MiB" \
            "--hint nosuch=4" "--min-ratio -1"; do
  rm -f "$tmp/bad_c.json"
  # shellcheck disable=SC2086
  "$sator" chunk "$g124" $args -o "$tmp/bad_c.json" > /dev/null 2> "$tmp/err.txt"
  status=$?
  [ "$status" -eq 2 ] || fail "chunk $args exited $status, expected 2"
  [ "$(wc -l < "$tmp/err.txt")" -eq 1 ] || fail "chunk $args printed $(wc -l < "$tmp/err.txt") lines"
  grep -q "gpt2-124m.train.g0.json" "$tmp/err.txt" || fail "chunk $args: the message does not name the file"
  [ ! -e "$tmp/bad_c.json" ] || fail "chunk $args left an output file"
done
grep -q "cannot be met: the least peak is" <("$sator" chunk "$g124" --memory-budget 1MiB 2>&1) ||
  fail "an impossible budget does not give the least peak"
"$sator" optimize "$g124" --memory-budget 8GiB > /dev/null 2>&1; [ $? -eq 2 ] || fail "optimize --memory-budget without --chunk: not exit 2"
"$sator" optimize "$g124" --chunks sometimes > /dev/null 2>&1; [ $? -eq 2 ] || fail "optimize --chunks sometimes: not exit 2"
# One spelling across the subcommands (--chunks); the old one still works, saying so.
"$sator" optimize "$g124" --chunk 8 -o "$tmp/oc_old.json" 2> "$tmp/oc_old.err" > /dev/null || fail "optimize --chunk 8 (old spelling)"
grep -q "sator: --chunk is spelled --chunks now" "$tmp/oc_old.err" || fail "no note on --chunk: $(cat "$tmp/oc_old.err")"
cmp -s "$tmp/oc.json" "$tmp/oc_old.json" || fail "--chunk 8 and --chunks 8 wrote different graphs"
# --version names the version, commit and rule set; help and a misspelled subcommand.
"$sator" --version | grep -qE "^sator [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]+(-dirty)?|unknown, rule set [0-9a-f]{16}, [0-9]+ rules\)" ||
  fail "sator --version: $("$sator" --version)"
"$sator" help | grep -q "SUBCOMMAND" || fail "sator help"
"$sator" help optimize | grep -q -- "--time-limit" || fail "sator help optimize"
"$sator" optimise x > /dev/null 2> "$tmp/typo.err"; [ $? -eq 2 ] || fail "a misspelled subcommand: not exit 2"
grep -q "unknown subcommand 'optimise' (did you mean 'optimize'?)" "$tmp/typo.err" || fail "typo: $(cat "$tmp/typo.err")"
# A dynamic graph planned at another size (--hint): attention chunked along its queries (dim 1).
"$sator" chunk "$corpus/graphs/zoo_hf.infer.dyn.g0.json" --hint s27=4096 | grep -q "^chunk: amplifier bmm .*, dim 1, .* over s27 rows" ||
  fail "chunk --hint s27=4096 does not chunk the attention scores along the queries"

# --preset inductor is what InductorPass runs by default: on a graph whose
# attention is a real bias it declines and writes the input unchanged; on
# one whose cuDNN calls carry the causal mask it changes them.
"$sator" optimize "$corpus/zoo/graphs/bert.amp-sdpa.infer.g0.json" -o "$tmp/p.json" --report "$tmp/p.r.json" --preset inductor \
  > "$tmp/p.txt" || fail "optimize --preset inductor exited $?"
grep -q "^declined: nothing to gain" "$tmp/p.txt" || fail "--preset inductor on bert.amp-sdpa.infer did not say it declined"
python3 - "$tmp/p.r.json" "$tmp/p.json" "$corpus/zoo/graphs/bert.amp-sdpa.infer.g0.json" <<'PY' || fail "--preset inductor's report or output"
import json, sys
r, out, src = (json.load(open(p)) for p in sys.argv[1:4])
assert r["preset"] == "inductor" and r["version"] and r["target"] == "inductor-joint", r
assert r["declined_without_gain"].startswith("nothing to gain"), r["declined_without_gain"]
assert [n["op"] for n in out["nodes"]] == [n["op"] for n in src["nodes"]], "the declined output is not the input"
PY
"$sator" optimize "$corpus/zoo/graphs/llama.amp-sdpa.infer.g0.json" --report "$tmp/l.r.json" --preset inductor > /dev/null ||
  fail "optimize --preset inductor on llama.amp-sdpa.infer"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['attention_changed']==4 and r['declined_without_gain'] is None, r" \
  "$tmp/l.r.json" || fail "--preset inductor on llama.amp-sdpa.infer: 4 attention calls changed, not declined"
"$sator" optimize "$corpus/graphs/gpt2.infer.g0.json" --preset nope > "$tmp/err.txt" 2>&1
[ $? -eq 2 ] && grep -q "unknown --preset nope" "$tmp/err.txt" || fail "an unknown preset is not refused with exit 2"

# Inductor's gpt2-124m.train calls its chunk bodies (hop.invoke_subgraph),
# which the corpus does not hold: no cost or peak is estimated for it, rather
# than the calls priced at zero (it read 28% cheaper than sator's before).
"$sator" compare "$corpus/graphs/gpt2-124m.train.g0.json" --repeat 1 --report "$tmp/cmp.json" > "$tmp/cmp.txt" ||
  fail "compare gpt2-124m.train"
grep -q "inductor: no cost or peak estimate: 8 hop.invoke_subgraph calls" "$tmp/cmp.txt" || fail "compare does not say why Inductor has no cost"
python3 -c "import json,sys; c=json.load(open(sys.argv[1])); assert c['inductor']['cost'] is None and c['inductor']['peak_bytes'] is None and c['sator']['cost'] > 0, c['inductor']" \
  "$tmp/cmp.json" || fail "compare's report prices Inductor's chunk calls"

# A training block with a bias (OPT's padding mask): the efficient kernels
# are weighed by the graph as Inductor fuses it and left out, said in the
# report and the text; --no-weigh-biased-kernels keeps them as extracted;
# --no-training-attention-bias leaves them out unweighed.
g="$corpus/graphs/opt.train.g2.json"
"$sator" optimize "$g" -o "$tmp/w.json" --report "$tmp/w.r.json" > "$tmp/w.txt" || fail "optimize opt.train.g2"
grep -q "attention with a bias (training, efficient kernels at .*): left decomposed" "$tmp/w.txt" ||
  fail "the weighing is not said in the text"
"$sator" optimize "$g" -o "$tmp/k.json" --report "$tmp/k.r.json" --no-weigh-biased-kernels > /dev/null ||
  fail "optimize --no-weigh-biased-kernels"
"$sator" optimize "$g" -o "$tmp/c.json" --report "$tmp/c.r.json" --no-training-attention-bias > /dev/null ||
  fail "optimize --no-training-attention-bias"
python3 - "$tmp" <<'PY' || fail "the weighing's report fields"
import json, sys
t = sys.argv[1]
w, k, c = (json.load(open(f"{t}/{n}.r.json")) for n in "wkc")
ww = w["biased_kernels_weighed"]
assert len(ww) == 1 and ww[0]["kept"] == "decomposed", ww
assert ww[0]["fused_estimate_us_without"] < ww[0]["fused_estimate_us_with_kernels"], ww
assert w["attention_fused"] == 0 and k["attention_fused"] > 0, (w["attention_fused"], k["attention_fused"])
assert "biased_kernels_weighed" not in k and "biased_kernels_weighed" not in c, "weighed where it should not be"
assert c["attention_fused"] == 0, c["attention_fused"]
PY

[ "$failures" -eq 0 ]
