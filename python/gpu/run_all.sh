#!/usr/bin/env bash
# The bridge's GPU runs in one call (docs/results/gpu.md says how they were run):
#   python/gpu/run_all.sh OUT_DIR [smoke|full]
# Needs $SATOR (the sator binary; with its shared libraries on LD_LIBRARY_PATH)
# and python3 with torch, CUDA and transformers. Writes OUT_DIR/gpu_results.json
# (everything), OUT_DIR/validate_corpus.json and OUT_DIR/log.txt.
set -uo pipefail
out=$1 mode=${2:-full}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
tmp=$(mktemp -d)
export PYTHONUNBUFFERED=1
cd "$root"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
  "$SATOR" --help > /dev/null && echo "sator: $SATOR"
  if [ "$mode" = smoke ]; then
    for c in sator satoroff; do
      timeout 400 python3 python/gpu/gpt2_step.py $c "$tmp/step_$c.json" --layers 2 --batch 4 --seq 512 --steps 3 >> "$out/steps.log" 2>&1
      echo "== $c exit $?"; grep -E "^\[sator\]|step .* ms|Error|error:|unchanged" "$out/steps.log" | tail -6
    done
    timeout 300 python3 python/gpu/eager_attention.py "$tmp/eager.json" --layers 2 --batch 2 --seq 256 >> "$out/steps.log" 2>&1
    echo "== eager exit $?"; tail -3 "$out/steps.log"
  else
    timeout 420 python3 python/gpu/validate_corpus.py corpus/graphs "$out" --deadline 330
    for c in plain autochunk8 autochunk64 sator; do
      timeout 500 python3 python/gpu/gpt2_step.py $c "$tmp/step_$c.json" 2>&1 | grep -v "^\s*$" | tail -12
    done
    timeout 400 python3 python/gpu/eager_attention.py "$tmp/eager.json" 2>&1 | tail -12
  fi
} 2>&1 | tee "$out/log.txt"
python3 - "$tmp" "$out/gpu_results.json" "$mode" <<'PY'
import glob, json, os, sys
tmp, path, mode = sys.argv[1:]
res = {"mode": mode, "gpt2_step": {}, "eager_attention": None}
for f in sorted(glob.glob(os.path.join(tmp, "step_*.json"))):
    r = json.load(open(f)); res["gpt2_step"][r["config"]] = r
if os.path.exists(os.path.join(tmp, "eager.json")):
    res["eager_attention"] = json.load(open(os.path.join(tmp, "eager.json")))
json.dump(res, open(path, "w"), indent=1)
print("configs measured:", list(res["gpt2_step"]))
PY
