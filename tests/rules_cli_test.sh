#!/bin/bash
# User rule files on the command line: --rules, --rules-only, --unchecked,
# the proof cache, check-rules --rules, and the errors (exit 2, nothing written).
#   rules_cli_test.sh SATOR EXAMPLES_DIR PLANTED_DIR
set -u
sator=$1
ex=$2
planted=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SATOR_PROOF_CACHE=$tmp/proofs  # never the user's own cache
fail() { echo "FAIL: $*"; exit 1; }

# The example: the file's rules check, then fire (6 nodes -> 4: a * b).
"$sator" check-rules --rules "$ex/negation.rules" --trials 50 >"$tmp/check.txt" || fail "check-rules --rules on the example"
grep -q "2 of 2 rules pass" "$tmp/check.txt" || fail "check-rules did not pass both example rules"
"$sator" optimize "$ex/negated.json" --rules "$ex/negation.rules" -o "$tmp/out.json" >"$tmp/o1.txt" 2>"$tmp/e1.txt" ||
  fail "optimize --rules on the example"
grep -q "6 nodes -> 4" "$tmp/o1.txt" || fail "the example's rules did not fire: $(cat "$tmp/o1.txt")"
grep -q "checking rule 'double-negation'" "$tmp/e1.txt" || fail "the first run did not check the rules"
ls "$tmp/proofs"/*.passed >/dev/null 2>&1 || fail "no proof cache entries written"
# Second run: the cache answers, nothing is checked again.
"$sator" optimize "$ex/negated.json" --rules "$ex/negation.rules" -o "$tmp/out2.json" >/dev/null 2>"$tmp/e2.txt" || fail "second run"
grep -q "checking rule" "$tmp/e2.txt" && fail "the second run checked the rules again"
cmp -s "$tmp/out.json" "$tmp/out2.json" || fail "the second run wrote a different graph"
# --explain names the rule that made each new node (and the report lists it).
"$sator" optimize "$ex/negated.json" --rules "$ex/negation.rules" --explain --report "$tmp/r.json" >"$tmp/x.txt" 2>/dev/null ||
  fail "optimize --explain"
grep -q "made by rules: 1 node" "$tmp/x.txt" && grep -q "sator_0  <- negation-out-of-product" "$tmp/x.txt" ||
  fail "--explain: $(cat "$tmp/x.txt")"
grep -q '"rule": "negation-out-of-product"' "$tmp/r.json" || fail "--report has no made_by"
# ... and the input's nodes it no longer computes, with the rules behind them
# (issue 42: "made by rules: 0 nodes" after two rules took 6 nodes to 3).
grep -q "removed: 3 nodes of the input" "$tmp/x.txt" && grep -q "neg_1  -> sator_0  by double-negation" "$tmp/x.txt" &&
  grep -q "  neg  no longer read" "$tmp/x.txt" || fail "--explain removals: $(cat "$tmp/x.txt")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["removed"]; assert {"node": "neg_1", "replaced_by": "sator_0", "rules": ["double-negation"]} in r, r' \
  "$tmp/r.json" || fail "--report has no removed"
# Without the file the shipped rules leave the graph as it is.
"$sator" optimize "$ex/negated.json" -o "$tmp/plain.json" | grep -q "6 nodes -> 6" || fail "the shipped rules alone changed the example"

# The examples' graphs as text (`sator graph`, issue 43): written from
# negated.sg, the graph the rules fire on, the same as the hand-written one.
"$sator" graph "$ex/negated.sg" -o "$tmp/from_text.json" >/dev/null || fail "sator graph on the example"
"$sator" optimize "$tmp/from_text.json" --rules "$ex/negation.rules" -o "$tmp/text_out.json" | grep -q "6 nodes -> 4" ||
  fail "the example's rules did not fire on the graph written from text"
# Where a rule could fire in that graph, and why not (check-rules --graph):
# a numeric condition that does not hold names its line and column; a
# sub-pattern the graph does not hold names the argument and the op.
printf 'mul-one: (mul.Tensor ?x ?c:number) => ?x\n  if (= ?c 1)\n' >"$tmp/mul_one.rules"
printf 'x = input([4, 8])\na = mul.Tensor(x, 2.0)\nb = mul.Tensor(a, 1)\nc = neg(b)\n' >"$tmp/scaled.sg"
"$sator" graph "$tmp/scaled.sg" -o "$tmp/scaled.json" >/dev/null || fail "sator graph on scaled.sg"
"$sator" check-rules --rules "$tmp/mul_one.rules" --graph "$tmp/scaled.json" >"$tmp/places.txt" || fail "check-rules --graph"
grep -q "rule mul-one (.*mul_one.rules:1:1): 2 place(s) of its root op, fires at 1" "$tmp/places.txt" &&
  grep -q "'a' (aten.mul.Tensor): the condition at .*mul_one.rules:2:6 does not hold" "$tmp/places.txt" &&
  grep -q "'b' (aten.mul.Tensor): fires" "$tmp/places.txt" || fail "check-rules --graph: $(cat "$tmp/places.txt")"
"$sator" check-rules --rules "$ex/negation.rules" --rule double-negation --graph "$tmp/from_text.json" >"$tmp/places2.txt" ||
  fail "check-rules --rule --graph"
grep -q "'neg' (aten.neg.default): its argument 'self' is never aten.neg.default (.*negation.rules:5:23)" "$tmp/places2.txt" ||
  fail "check-rules --graph sub-pattern: $(cat "$tmp/places2.txt")"
grep -q "negation-out-of-product" "$tmp/places2.txt" && fail "--rule did not limit check-rules --graph to one rule"
"$sator" check-rules --rules "$ex/negation.rules" --rule nope --graph "$tmp/from_text.json" >/dev/null 2>&1
[ $? = 2 ] || fail "check-rules --graph with an unknown rule did not exit 2"

# A mistake in the text: exit 2, FILE:LINE:COL, nothing written.
printf 'x = input([4, 8])\ny = neg(z)\n' >"$tmp/bad.sg"
"$sator" graph "$tmp/bad.sg" -o "$tmp/bad_text.json" >/dev/null 2>"$tmp/e0.txt"
[ $? = 2 ] || fail "sator graph on a bad file did not exit 2"
grep -q "bad.sg:2:9: 'z' names no node" "$tmp/e0.txt" || fail "sator graph message: $(cat "$tmp/e0.txt")"
[ -e "$tmp/bad_text.json" ] && fail "sator graph wrote an output for a bad file"

# A multi-pattern (examples/rules/sum_kept.rules): two sums of one tensor
# joined on the tensor and the dims; the second becomes a view of the first.
"$sator" optimize "$ex/two_sums.json" --rules-only "$ex/sum_kept.rules" --explain --verify -o "$tmp/sums.json" >"$tmp/m.txt" 2>/dev/null ||
  fail "optimize with the multi-pattern example: $(cat "$tmp/m.txt")"
grep -q "sator_0  <- sum-from-kept-sum" "$tmp/m.txt" || fail "the multi-pattern did not fire: $(cat "$tmp/m.txt")"
[ "$(grep -c '"op":"aten.sum.dim_IntList"' "$tmp/sums.json")" = 1 ] || fail "the multi-pattern left two sums"
grep -q "verify: passed" "$tmp/m.txt" || fail "the multi-pattern's result did not verify"

# A wrong rule does not run: exit 2, file:line:col, no output.
"$sator" optimize "$ex/negated.json" --rules "$planted/24-sub-commuted.rules" -o "$tmp/bad.json" >/dev/null 2>"$tmp/e3.txt"
[ $? = 2 ] || fail "a rule check-rules rejects ran (exit not 2)"
grep -q "24-sub-commuted.rules:3:1: rule 'bad' does not pass check-rules" "$tmp/e3.txt" || fail "message: $(cat "$tmp/e3.txt")"
[ -e "$tmp/bad.json" ] && fail "an output was written for a refused rule file"
# ... unless the user says --unchecked.
"$sator" optimize "$ex/negated.json" --rules "$planted/24-sub-commuted.rules" --unchecked -o "$tmp/unchecked.json" >/dev/null ||
  fail "--unchecked did not run"

# Files that do not compile, or cannot be read: exit 2 with the position.
printf 'r: (neg ?x) => ?y\n' >"$tmp/unbound.rules"
for cmd in optimize greedy compare; do
  "$sator" $cmd "$ex/negated.json" --rules "$tmp/unbound.rules" >/dev/null 2>"$tmp/e4.txt"
  [ $? = 2 ] || fail "$cmd: a rule file that does not compile (exit not 2)"
  grep -q "unbound.rules:1:16: '?y' is not bound" "$tmp/e4.txt" || fail "$cmd message: $(cat "$tmp/e4.txt")"
done
"$sator" optimize "$ex/negated.json" --rules "$tmp/missing.rules" >/dev/null 2>"$tmp/e5.txt"
[ $? = 2 ] && grep -q "missing.rules:1:1: cannot read the rule file" "$tmp/e5.txt" || fail "a missing rule file"
"$sator" optimize "$ex/negated.json" --rules "$ex/negation.rules" --rules-only "$ex/negation.rules" >/dev/null 2>&1
[ $? = 2 ] || fail "--rules with --rules-only accepted"

# --rules-only: the file's rules alone (greedy and compare too).
"$sator" greedy "$ex/negated.json" --rules-only "$ex/negation.rules" -o "$tmp/g.json" | grep -q "1 rewrites" ||
  fail "greedy --rules-only made no rewrite"
"$sator" compare "$ex/negated.json" --rules "$ex/negation.rules" --repeat 1 >"$tmp/cmp.txt" || fail "compare --rules"
# batch: checked once in the parent, the workers run the rules.
mkdir -p "$tmp/src" && cp "$ex/negated.json" "$tmp/src/"
"$sator" batch "$tmp/src" --out "$tmp/batch" --rules "$ex/negation.rules" --jobs 1 --repeat 1 >/dev/null 2>&1 ||
  fail "batch --rules"
grep -q '"nodes": 4' "$tmp/batch/graphs/negated.json" || fail "batch's saturation did not use the rules"
# The proof cache trusts only what this user alone could have written: an
# entry owned by someone else, writable by others, a link or a FIFO is
# checked again (never followed, never waited on); a folder others can
# write to is not used.
cache=$tmp/trust
run_cached() { SATOR_PROOF_CACHE=$cache timeout 60 "$sator" optimize "$ex/negated.json" --rules "$ex/negation.rules" -o "$tmp/t.json" >/dev/null 2>"$tmp/t.txt"; }
run_cached || fail "proof cache: first run"
run_cached && ! grep -q "checking rule" "$tmp/t.txt" || fail "proof cache: the second run checked again"
entry=$(ls "$cache"/*.passed | head -1)
chown nobody "$entry" 2>/dev/null && { run_cached && grep -q "checking rule" "$tmp/t.txt" || fail "proof cache: an entry owned by another user was trusted"; }
rm -f "$cache"/*.passed; run_cached; entry=$(ls "$cache"/*.passed | head -1)
chmod go+w "$entry"; run_cached && grep -q "checking rule" "$tmp/t.txt" || fail "proof cache: a group-writable entry was trusted"
for e in "$cache"/*.passed; do rm -f "$e"; ln -s /dev/zero "$e"; done
run_cached || fail "proof cache: a link to /dev/zero as an entry (exit $?)"
grep -q "checking rule" "$tmp/t.txt" || fail "proof cache: a link was trusted"
rm -rf "$cache"; run_cached; for e in "$cache"/*.passed; do rm -f "$e"; mkfifo "$e"; done
run_cached || fail "proof cache: a FIFO as an entry (exit $?: blocked?)"
rm -rf "$cache"; run_cached; chmod o+w "$cache"
run_cached && grep -q "checking rule" "$tmp/t.txt" || fail "proof cache: a folder others can write to was used"

# batch --rules: the workers run the text the parent checked, not the path
# again. The file is replaced by an unsound rule (a·b = a) as soon as the
# first graph is done; every graph must still show the checked rules' result.
mkdir -p "$tmp/many"
for i in $(seq 1 40); do cp "$ex/negated.json" "$tmp/many/n$i.json"; done
cp "$ex/negation.rules" "$tmp/swap.rules"
SATOR_PROOF_CACHE=$tmp/swapcache TMPDIR=$tmp "$sator" batch "$tmp/many" --out "$tmp/swapped" --rules "$tmp/swap.rules" \
  --jobs 1 --repeat 1 >/dev/null 2>&1 &
bpid=$!
for _ in $(seq 1 600); do ls "$tmp/swapped/graphs/"*.json >/dev/null 2>&1 && break; sleep 0.05; done
printf 'drop-mul: (aten.mul.Tensor ?a ?b) => ?a\n' > "$tmp/swap.rules"
wait $bpid || fail "batch --rules with the file replaced mid-run exited $?"
bad=$(grep -L '"nodes": 4' "$tmp/swapped/graphs/"n*.json | wc -l)
[ "$bad" -eq 0 ] || fail "batch --rules: $bad of 40 graphs ran the rule file as replaced after the check"
ls -d "$tmp"/sator-rules.* >/dev/null 2>&1 && fail "batch left its checked rules' copies behind"

# Rule files that would exhaust the stack or the memory (issue 39): nesting a
# million deep in a pattern, 5,000 in a right-hand side, 15,000 in a
# condition, and helpers that call each other twice six deep are each one
# error at file:line:col naming the limit, exit 2, in check-rules, optimize
# --unchecked and batch --rules.
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
n = 1000000
open(f"{d}/deep_lhs.rules", "w").write("r: " + "(f " * n + "?x" + ")" * n + " => ?x\n")
open(f"{d}/deep_rhs.rules", "w").write("r: (aten.neg.default ?x) => " + "(aten.neg.default " * 5000 + "?x" + ")" * 5000 + "\n")
open(f"{d}/deep_if.rules", "w").write("r: (aten.neg.default ?x) => ?x if " + "(not " * 15000 + "(= (rank ?x) 2)" + ")" * 15000 + "\n")
h = "(define (h0 ?x) (aten.neg.default ?x))\n"
for i in range(1, 7):
    h += f"(define (h{i} ?x) (aten.add.Tensor (h{i-1} ?x) (h{i-1} ?x)))\n"
open(f"{d}/bomb.rules", "w").write(h + "r: (aten.neg.default ?x) => (h6 (h6 (h6 (h6 ?x))))\n")
PY
for f in deep_lhs deep_rhs deep_if bomb; do
  want="nested deeper than 256 levels"
  [ $f = bomb ] && want="expands to more than 1000000 terms"
  for cmd in "check-rules --rules $tmp/$f.rules" "optimize $ex/negated.json --unchecked --rules $tmp/$f.rules -o $tmp/no.json" \
             "batch $tmp/src --out $tmp/b_$f --rules $tmp/$f.rules"; do
    # shellcheck disable=SC2086
    "$sator" $cmd >"$tmp/o.txt" 2>"$tmp/e.txt"
    rc=$?
    [ $rc -eq 2 ] || fail "sator $cmd exited $rc, not 2: $(head -c 200 "$tmp/e.txt")"
    grep -qE "^sator: $tmp/$f.rules:[0-9]+:[0-9]+: .*$want" "$tmp/e.txt" || fail "sator $cmd: $(head -c 300 "$tmp/e.txt")"
    [ ! -e "$tmp/no.json" ] || fail "sator $cmd left an output"
  done
done
# A condition whose size arithmetic overflows 64 bits on a match does not
# hold there (it was "internal error: integer overflow" with no file, line
# or column, issue 39): check-rules says the rule never fired, optimize
# --unchecked runs to the end without it.
cat >"$tmp/overflow.rules" <<'EOF2'
overflow: (aten.neg.default ?x) => ?x  if (= (* (size ?x 0) 9223372036854775807) 3)
EOF2
"$sator" check-rules --rules "$tmp/overflow.rules" --trials 20 >"$tmp/ov.txt" 2>&1
[ $? -eq 1 ] || fail "check-rules on an overflowing condition: $(tail -3 "$tmp/ov.txt")"
grep -q "internal error" "$tmp/ov.txt" && fail "an overflowing condition is an internal error: $(tail -3 "$tmp/ov.txt")"
grep -q "overflow: never fired: its conditions were unmet in" "$tmp/ov.txt" || fail "check-rules: $(tail -3 "$tmp/ov.txt")"
grep -q "counterexample:" "$tmp/ov.txt" && fail "a rule that never fired shown with a counterexample: $(tail -3 "$tmp/ov.txt")"
"$sator" optimize "$ex/negated.json" --rules "$tmp/overflow.rules" --unchecked -o "$tmp/ov.json" >/dev/null 2>"$tmp/ov.err" ||
  fail "optimize --unchecked with an overflowing condition: $(cat "$tmp/ov.err")"
# Numeric conditions (issue 42): `(= ?c 1)` holds where the matched Python
# number is 1.0 (it compared a float with an int and never held: "only 0 of
# 200 instances rewritten in 32400 attempts"), and the trials draw the
# numbers a condition names (0.37 is in no menu of drawn numbers).
cat >"$tmp/numeric.rules" <<'EOF2'
mul-one: (mul.Tensor ?x ?c:number) => ?x  if (= ?c 1)
odd-scale: (mul.Tensor ?x ?c:number) => (mul.Tensor (mul.Tensor ?x 0.5) 0.74)  if (= ?c 0.37)
EOF2
"$sator" check-rules --rules "$tmp/numeric.rules" --trials 50 >"$tmp/num.txt" 2>&1 ||
  fail "check-rules on numeric conditions: $(tail -4 "$tmp/num.txt")"
grep -q "2 of 2 rules pass" "$tmp/num.txt" || fail "numeric conditions: $(tail -4 "$tmp/num.txt")"
# A right-hand side that holds the left-hand side as an inner term (issue 42:
# rejected as "contains the left-hand side itself" although -x = ---x): the
# right-hand side is read with the inner term computed as written, so the
# true rule passes and the same shape of wrong rule fails with its values
# (tests/planted_rules/39-neg-of-itself.rules).
printf 'triple-neg: (neg ?x) => (neg (neg (neg ?x)))\nsplit-two: (mul.Scalar ?x ?c:number) => (mul.Scalar (mul.Scalar ?x 2) (times ?c 0.5))  if (= ?c 2)\n' \
  >"$tmp/inner.rules"
"$sator" check-rules --rules "$tmp/inner.rules" --trials 50 >"$tmp/inner.txt" 2>&1 ||
  fail "a right-hand side holding the left-hand side: $(tail -6 "$tmp/inner.txt")"
grep -q "2 of 2 rules pass" "$tmp/inner.txt" || fail "inner left-hand side: $(tail -4 "$tmp/inner.txt")"
# A branch of the right-hand side no trial takes is compared by none
# (issue 42: an if on rank 6 passed, the trials drawing ranks 0-5): the rule
# fails, naming the if.
printf 'rank-six: (exp ?x) => (if (= (rank ?x) 6) ?x (exp (mul.Scalar ?x 1.0)))\n' >"$tmp/branch.rules"
"$sator" check-rules --rules "$tmp/branch.rules" --trials 50 >"$tmp/branch.txt" 2>&1
[ $? -eq 1 ] || fail "an untaken branch passed: $(tail -4 "$tmp/branch.txt")"
grep -q "rank-six: the if at $tmp/branch.rules:1:23 never took its then branch in 50 trials" "$tmp/branch.txt" ||
  fail "an untaken branch: $(tail -4 "$tmp/branch.txt")"
# A file's rule is applied only at the ranks check-rules checks it at (0-5):
# -(-x) => x rewrites a rank-5 tensor's and leaves a rank-6 one's alone.
for rank in 5 6; do
  python3 - "$rank" "$tmp/rank$rank.json" <<'PY'
import json, sys
rank = int(sys.argv[1])
shape = [2] * rank
stride = [2 ** (rank - 1 - i) for i in range(rank)]
t = {"shape": shape, "stride": stride, "dtype": "float32"}
nodes = [dict(name="x", op="placeholder", role="input", **t),
         dict(name="n1", op="aten.neg.default", args=[{"node": "x"}], **t),
         dict(name="n2", op="aten.neg.default", args=[{"node": "n1"}], **t),
         {"name": "output", "op": "output", "args": [[{"node": "n2"}]]}]
json.dump({"format": "sator.graph", "version": 1, "name": f"rank{rank}", "nodes": nodes}, open(sys.argv[2], "w"))
PY
  "$sator" optimize "$tmp/rank$rank.json" --rules-only "$ex/negation.rules" -o "$tmp/rank$rank.out.json" >"$tmp/rank$rank.txt" 2>&1 ||
    fail "rank $rank: $(tail -3 "$tmp/rank$rank.txt")"
done
grep -q "4 nodes -> 2" "$tmp/rank5.txt" || fail "rank 5: $(grep nodes "$tmp/rank5.txt")"
grep -q "4 nodes -> 4" "$tmp/rank6.txt" || fail "rank 6 was rewritten: $(grep nodes "$tmp/rank6.txt")"
# Comparing values of different kinds is a type error at the comparison,
# not a rule that never fires.
printf 'bad-compare: (neg ?x) => ?x  if (= ?x 1)\n' >"$tmp/kinds.rules"
"$sator" check-rules --rules "$tmp/kinds.rules" >/dev/null 2>"$tmp/kinds.err"
[ $? -eq 2 ] || fail "a tensor compared with a number: exit $? ($(cat "$tmp/kinds.err"))"
grep -qE "^sator: $tmp/kinds.rules:1:33: '=' compares a value of type tensor with one of type int" "$tmp/kinds.err" ||
  fail "a tensor compared with a number: $(cat "$tmp/kinds.err")"
# Checking a file grows with the file, not with its square (issue 39: every
# rule's instances were run with the whole file's rules built, 300 rules
# took 43 s): 300 rules against 100, interleaved medians of three, under 5x
# (linear is 3x; the quadratic checker measured 9x).
python3 - "$sator" "$tmp" <<'PY' || fail "check-rules grows faster than its rule file"
import statistics, subprocess, sys, time
sator, tmp = sys.argv[1:]
for n in (100, 300):
    with open(f"{tmp}/many{n}.rules", "w") as f:
        for i in range(n):
            f.write(f"neg-neg-{i}: (aten.neg.default (aten.neg.default (aten.mul.Scalar ?x {i + 2}))) => "
                    f"(aten.mul.Scalar ?x {i + 2})\n")
times = {100: [], 300: []}
for _ in range(3):
    for n in (100, 300):
        t = time.perf_counter()
        subprocess.run([sator, "check-rules", "--rules", f"{tmp}/many{n}.rules", "--trials", "20"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[n].append(time.perf_counter() - t)
ratio = statistics.median(times[300]) / statistics.median(times[100])
print(f"check-rules: 300 rules / 100 rules = {ratio:.2f}x")
assert ratio < 5, times
PY
echo "rules on the command line: ok"
