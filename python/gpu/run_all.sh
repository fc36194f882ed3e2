#!/usr/bin/env bash
# The bridge's GPU runs in one call (docs/results/gpu.md says how they were run):
#   python/gpu/run_all.sh OUT_DIR steps      (GPT-2 training step configurations, eager-attention inference)
#   python/gpu/run_all.sh OUT_DIR validate   (every corpus graph and its optimization)
#   python/gpu/run_all.sh OUT_DIR bias       (fused attention with a bias; the step's memory by configuration)
#   python/gpu/run_all.sh OUT_DIR final      (the step configurations, eager attention, a fresh capture, bias)
#   python/gpu/run_all.sh OUT_DIR checks     (capture variants, the bridge test, the corpus at inputs N(0, 0.3²) and N(0, 1))
#   python/gpu/run_all.sh OUT_DIR unseen     (Qwen2 and Mistral captured, inference and training, validated; the corpus again)
#   python/gpu/run_all.sh OUT_DIR zoo        (issue 21: Inductor's op list regenerated, the pass's never-break test, then
#                                             the zoo rows not yet in docs/results/zoo/zoo.jsonl, for $ZOO_SECONDS (480);
#                                             more zoo.py arguments in $ZOO_ARGS, e.g. "--size tiny" or "--archs gpt2")
#   python/gpu/run_all.sh OUT_DIR memory     (issue 25: reductions' staging buffers, node-by-node traces of the graphs
#                                             the estimate misses or the loader fails, the fused dropout statistics)
#   python/gpu/run_all.sh OUT_DIR peaks      (issue 25: the peak estimate against the measured CUDA peak of every corpus
#                                             and zoo graph and sator's output of it, eager and compiled: peak_estimates.json)
# Needs $SATOR (the sator binary; with its shared libraries on LD_LIBRARY_PATH)
# and python3 with torch, CUDA and transformers. Writes OUT_DIR/gpu_results.json
# (everything), OUT_DIR/validate_corpus.json and OUT_DIR/log.txt.
set -uo pipefail
out=$1 mode=${2:-steps}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
tmp=$(mktemp -d)
export PYTHONUNBUFFERED=1
cd "$root"
merge() {  # everything measured so far into OUT_DIR/gpu_results.json (a killed run keeps it)
python3 - "$tmp" "$out/gpu_results.json" "$mode" <<'PY'
import glob, json, os, sys
tmp, path, mode = sys.argv[1:]
res = {"mode": mode, "gpt2_step": {}, "eager_attention": None}
for f in sorted(glob.glob(os.path.join(tmp, "step_*.json"))):
    r = json.load(open(f)); res["gpt2_step"]["sator_2_layers" if f.endswith("step_small.json") else r["config"]] = r
if os.path.exists(os.path.join(tmp, "eager.json")):
    res["eager_attention"] = json.load(open(os.path.join(tmp, "eager.json")))
json.dump(res, open(path, "w"), indent=1)
print("configs measured:", list(res["gpt2_step"]), "eager attention:", res["eager_attention"] is not None)
PY
}
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
  "$SATOR" --help > /dev/null && echo "sator: $SATOR"
  step() {  # CONFIG TIMEOUT [ARGS...]: one gpt2_step configuration, its whole output in steps.log
    local c=$1 t=$2; shift 2
    timeout "$t" python3 python/gpu/gpt2_step.py "$c" "$tmp/step_$c.json" "$@" >> "$out/steps.log" 2>&1
    echo "== $c exit $?"; grep -E "^\[sator\]|step .* ms|Error:|unchanged" "$out/steps.log" | tail -4
    merge
  }
  case "$mode" in
    steps)  # the GPT-2 training step (sator first at 2 layers, as a check), then eager attention
      step sator 120 --layers 2 --batch 4 --seq 512 --steps 3
      mv "$tmp/step_sator.json" "$tmp/step_small.json" 2> /dev/null
      for c in sator plain autochunk8 autochunk64; do step $c 150; done
      timeout 150 python3 python/gpu/eager_attention.py "$tmp/eager.json" >> "$out/steps.log" 2>&1
      echo "== eager attention exit $?"; tail -2 "$out/steps.log"; merge ;;
    validate)
      timeout 560 python3 python/gpu/validate_corpus.py corpus/graphs "$out" --deadline 480 ;;
    all)  # everything in one call of at most ~9.5 minutes: the steps first, then as many graphs as time allows
      t0=$SECONDS
      for c in sator plain autochunk8 autochunk64; do step $c 140; done
      timeout 150 python3 python/gpu/eager_attention.py "$tmp/eager.json" >> "$out/steps.log" 2>&1
      echo "== eager attention exit $?"; tail -2 "$out/steps.log"; merge
      left=$((540 - (SECONDS - t0)))
      [ "$left" -gt 40 ] && timeout "$left" python3 python/gpu/validate_corpus.py corpus/graphs "$out" --deadline $((left - 40)) \
        --first gpt2-124m.train.g0 bert.train.g0 bert.train.dyn.g0 zoo_hf.train.dyn.g0 gptneox.train.g0 gpt2.infer.g0 zoo_sfdp1.infer.g0 ;;
    again)  # the sator configurations and the graphs a previous run failed on, after fixes
      step sator 110
      timeout 80 python3 python/gpu/eager_attention.py "$tmp/eager.json" >> "$out/steps.log" 2>&1
      echo "== eager attention exit $?"; tail -2 "$out/steps.log"; merge
      timeout 50 python3 python/gpu/validate_corpus.py corpus/graphs "$out" --deadline 30 \
        --only bert.train.dyn.g0 opt.train.g2 opt.train.g3 vit.train.g0 ;;
    bias)  # training attention with a bias (issue 10), then the step's memory split by configuration
      timeout 150 python3 python/gpu/bias_attention.py "$out/bias_attention.json"
      step sator 100 --layers 2 --batch 4 --seq 512 --steps 3
      mv "$tmp/step_sator.json" "$tmp/step_small.json" 2> /dev/null
      SATOR_KEEP_DIR="$tmp/keep" step sator 110
      (cd "$tmp" && tar czf "$out/sator_graphs.tgz" keep) 2> /dev/null
      for c in sator8 satoroff plain autochunk8; do step $c 100; done ;;
    final)  # this session's measurements: the step configurations, eager attention, a fresh capture, bias attention
      for c in sator sator8 plain autochunk8 autochunk64; do step $c 100; done
      timeout 100 python3 python/gpu/eager_attention.py "$tmp/eager.json" >> "$out/steps.log" 2>&1
      echo "== eager attention exit $?"; tail -2 "$out/steps.log"; merge
      timeout 120 python3 python/gpu/capture_check.py "$tmp/capture" && (cd "$tmp" && tar czf "$out/capture.tgz" capture)
      timeout 100 python3 python/gpu/bias_attention.py "$out/bias_attention.json" ;;
    checks)  # the fourth session's: harness variants of the fresh capture, the bridge test, the corpus at two input scales
      timeout 300 python3 python/gpu/capture_check.py "$tmp/capture" && (cd "$tmp" && tar czf "$out/capture.tgz" capture)
      cp "$tmp/capture/capture_check.json" "$out/" 2> /dev/null
      timeout 120 python3 python/tests/test_bridge.py corpus "$SATOR"; echo "== test_bridge exit $?"
      timeout 150 python3 python/gpu/validate_corpus.py corpus/graphs "$out/scale0.3" --input-scale 0.3 --deadline 120
      timeout 150 python3 python/gpu/validate_corpus.py corpus/graphs "$out/scale1" --deadline 120 ;;
    unseen)  # models outside the corpus (Qwen2, Mistral: inference and training) captured, optimized and compared; then the corpus at both scales
      timeout 200 python3 python/sator_torch/export.py "$tmp/unseen" 2>&1 | grep -v "^note: "
      (cd "$tmp" && tar czf "$out/unseen_graphs.tgz" unseen)
      for s in 1 0.3; do
        timeout 60 python3 python/gpu/validate_corpus.py "$tmp/unseen" "$out/unseen_scale$s" --input-scale $s
      done
      for s in 0.3 1; do
        timeout 110 python3 python/gpu/validate_corpus.py corpus/graphs "$out/scale$s" --input-scale $s --deadline 90
      done ;;
    zoo)
      python3 python/gpu/inductor_ops.py "$SATOR" "$out/inductor_joint_ops.json" corpus/graphs
      cmp -s "$out/inductor_joint_ops.json" ir/targets/inductor_joint_ops.json && echo "op list: as committed" \
        || echo "op list: differs from the committed one (this torch: see $out/inductor_joint_ops.json)"
      timeout 240 python3 python/tests/test_inductor_pass.py "$SATOR"; echo "== test_inductor_pass exit $?"
      t=${ZOO_SECONDS:-480}
      # shellcheck disable=SC2086
      timeout "$t" python3 python/gpu/zoo.py "$out/zoo" --resume docs/results/zoo/zoo.jsonl --parallel 3 \
        --deadline $((t - 30)) $ZOO_ARGS
      # At most 8 files come back from the GPU machine: the results, the log and two archives.
      (cd "$out/zoo" && cp zoo.jsonl zoo.json .. 2> /dev/null
       tar czf ../zoo_graphs.tgz zoo_graphs/graphs zoo_graphs/inductor 2> /dev/null
       tar czf ../zoo_rows.tgz rows zoo.log zoo_graphs/sator 2> /dev/null)
      rm -rf "$out/zoo" ;;
    peaks)  # issue 25 item 3: the peak estimate against the measured CUDA peak, eager and compiled, corpus and zoo
      timeout "${PEAK_SECONDS:-540}" python3 python/gpu/peak_estimates.py "$out" corpus/graphs corpus/zoo/graphs \
        --deadline $(( ${PEAK_SECONDS:-540} - 40 )) ;;
    memory)  # issue 25: reductions' staging buffers; where the estimate misses or the loader fails, node by node
             # (graphs and sator's outputs of them); the dropout statistics of the fused block; $MEMORY_ZOO_ROWS again
      timeout 120 python3 python/gpu/reduction_workspace.py "$out/reduction_workspace.json"
      mkdir -p "$tmp/traces"
      for g in ${TRACE_GRAPHS:-opt.amp-sdpa.train.g1 opt.bf16-sdpa.train.g1 gptj.amp-eager.infer.g0 gptj.amp-eager.train.g0 vit.amp-sdpa.train.g0 opt.bf16-eager.train.g2}; do
        f=corpus/zoo/graphs/$g.json; [ -f "$f" ] || f=corpus/graphs/$g.json
        "$SATOR" optimize "$f" -o "$tmp/traces/$g.sator.json" > /dev/null
        timeout 120 python3 python/gpu/peak_trace.py "$f" --json "$tmp/traces/$g.json"
        timeout 120 python3 python/gpu/peak_trace.py "$tmp/traces/$g.sator.json" --json "$tmp/traces/$g.sator.trace.json"
      done
      python3 -c "import glob, json, sys; json.dump({f.rsplit('/', 1)[1]: json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + '/*.json')) if f.endswith('.trace.json') or not f.endswith('.sator.json')}, open(sys.argv[2], 'w'), indent=1)" "$tmp/traces" "$out/traces.json"
      timeout 200 python3 python/gpu/dropout_stats.py "$out/dropout_stats_amp.json" --seeds 256
      timeout 200 python3 python/gpu/dropout_stats.py "$out/dropout_stats_fp32.json" --seeds 256 --fp32
      if [ -n "${MEMORY_ZOO_ROWS:-}" ]; then
        timeout 480 python3 python/gpu/zoo.py "$out/zoo" --parallel 2 --rows $MEMORY_ZOO_ROWS  # (a --deadline under a row's own timeout starts none)
        cp "$out/zoo/zoo.jsonl" "$out/zoo.jsonl"; rm -rf "$out/zoo"
      fi ;;
    *) echo "mode: steps, validate, all, again, bias, final, checks, unseen, zoo, peaks or memory" ;;
  esac
} 2>&1 | tee "$out/log.txt"
