#!/usr/bin/env bash
# `sator batch` isolates graphs (issue 22): a crash, a graph past the
# per-graph time limit and one past the memory limit are each that graph's
# failure and the batch finishes with its summary; SIGINT (ten times, at
# random moments) stops the pool with exit 130, leaves no worker running and
# no broken result, and --resume then finishes the rest.
#   tests/batch_isolation_test.sh SATOR CORPUS_DIR PYTHON [sanitized]
# ("sanitized": an AddressSanitizer build, which reserves terabytes of
# address space, so the memory-limit check cannot run there.)
set -u
sator=$1 corpus=$2 python=$3 sanitized=${4:-}
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mkdir -p "$tmp/src"
cp "$corpus"/graphs/zoo_*.json "$tmp/src/"
small=$(ls "$tmp/src" | wc -l)
# A graph that hangs: a copy of a small one, which the worker is told to
# hang on (SATOR_TEST_HANG_ON; optimizing real graphs got too fast to hang).
cp "$tmp/src/zoo_hf.infer.g0.json" "$tmp/src/slow.json"
export SATOR_TEST_HANG_ON=slow
# A graph too large for 64 MiB: a 200,000-long chain of views.
mkdir -p "$tmp/big"
cp "$tmp/src/zoo_hf.infer.g0.json" "$tmp/big/"
"$python" - "$tmp/big/big.json" <<'PY'
import json, sys
nodes = [{"name": "x", "op": "placeholder", "role": "input", "shape": [4, 4], "stride": [4, 1], "dtype": "float32"}]
for i in range(200000):
    shape, stride = ([16], [1]) if i % 2 == 0 else ([4, 4], [4, 1])
    nodes.append({"name": f"n{i}", "op": "aten.view.default", "args": [{"node": nodes[-1]["name"]}, shape],
                  "shape": shape, "stride": stride, "dtype": "float32"})
nodes.append({"name": "output", "op": "output", "args": [[{"node": nodes[-1]["name"]}]]})
json.dump({"format": "sator.graph", "version": 1, "name": "big", "symbols": [], "nodes": nodes}, open(sys.argv[1], "w"))
PY
status_of() { "$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['status'])" "$1" 2> /dev/null; }
error_of() { "$python" -c "import json,sys; print(json.load(open(sys.argv[1])).get('error',''))" "$1" 2> /dev/null; }

# A crash, a hang and the rest: the batch finishes, exit 1, every graph has a result.
SATOR_TEST_CRASH_ON=zoo_sfdp1.infer.g0 "$sator" batch "$tmp/src" --out "$tmp/o1" --jobs 2 --graph-timeout 2 \
  > /dev/null 2> "$tmp/err1.txt"
rc=$?
[ "$rc" -eq 1 ] || fail "a batch with failures exited $rc, not 1"
[ -f "$tmp/o1/summary.md" ] || fail "no summary after a crash and a hang"
[ "$(ls "$tmp/o1/graphs" | wc -l)" -eq $((small + 1)) ] || fail "not every graph has a result after a crash"
error_of "$tmp/o1/graphs/zoo_sfdp1.infer.g0.json" | grep -q "died of signal" || fail "the crash is not recorded as one"
error_of "$tmp/o1/graphs/slow.json" | grep -q "time limit" || fail "the hang is not recorded as the time limit"
[ "$(status_of "$tmp/o1/graphs/zoo_hf.infer.g0.json")" = ok ] || fail "a good graph failed beside a crash"
# --resume runs the failed ones again; the crash is recorded again, not repeated forever.
SATOR_TEST_CRASH_ON=zoo_sfdp1.infer.g0 "$sator" batch "$tmp/src" --out "$tmp/o1" --jobs 2 --graph-timeout 2 --resume \
  > /dev/null 2>&1
[ $? -eq 1 ] || fail "--resume after a crash did not finish with exit 1"

# The memory limit: the long chain's e-graph does not fit in 64 MiB.
if [ "$sanitized" = sanitized ]; then
  echo "note: sanitizer build: the --graph-memory check is skipped (ASan needs far more address space)"
else
  "$sator" batch "$tmp/big" --out "$tmp/o2" --jobs 2 --graph-memory 64MiB --graph-timeout 30 > /dev/null 2>&1
  error_of "$tmp/o2/graphs/big.json" | grep -qE "memory|without a result|signal" ||
    fail "the memory limit is not a failure of that graph"
  [ "$(status_of "$tmp/o2/graphs/zoo_hf.infer.g0.json")" = ok ] || fail "a good graph failed under the memory limit"
fi

# SIGINT ten times at random moments: exit 130, no worker left, results valid, then --resume finishes.
for i in $(seq 1 10); do
  "$sator" batch "$tmp/src" --out "$tmp/o3" --jobs 2 --resume --graph-timeout 60 > /dev/null 2> "$tmp/err3.txt" &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  kill -INT "$pid" 2> /dev/null
  wait "$pid"
  rc=$?
  [ "$rc" -eq 130 ] || [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "SIGINT $i: exit $rc (a crash?): $(tail -2 "$tmp/err3.txt")"
  sleep 0.1
  pgrep -f "batch-one.*$tmp" > /dev/null && fail "SIGINT $i left a worker running"
  for f in "$tmp"/o3/graphs/*.json; do
    [ -e "$f" ] || continue
    [ -n "$(status_of "$f")" ] || fail "SIGINT $i left a broken result $f"
  done
done
"$sator" batch "$tmp/src" --out "$tmp/o3" --jobs 2 --resume --graph-timeout 2 > /dev/null 2>&1
[ "$(ls "$tmp/o3/graphs" | wc -l)" -eq $((small + 1)) ] || fail "--resume after the interrupts did not finish every graph"
[ "$(grep -c '"status": "ok"' "$tmp"/o3/graphs/*.json | awk -F: '{s += $2} END {print s}')" -eq "$small" ] ||
  fail "--resume after the interrupts: not every good graph is ok"

echo "$failures failed"
[ "$failures" -eq 0 ]
