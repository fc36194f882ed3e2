"""The zoo: sator_torch.InductorPass on transformers models, against plain torch.compile.

    python3 python/gpu/zoo.py OUT_DIR [--rows KEY ...] [--archs A ...] [--setups S ...]
        [--phases infer train] [--size full|tiny] [--iters 50] [--parallel 3]
        [--deadline SECONDS] [--resume RESULTS.jsonl ...] [--retry] [--cache-check-first] [--profile]

Rows (architecture/setup/phase, zoo_models.plan's order) run each in its own
process (zoo_row.py) under a timeout; every finished row is appended to
OUT_DIR/zoo.jsonl at once, so a killed run keeps what it measured.
--resume reads earlier results (a previous call's zoo.jsonl) and skips the
rows they hold; --retry runs their failed and timed-out rows again.
--parallel N runs N rows at a time: they compile side by side (CPU work)
but take turns on the GPU for the reference, timing and memory phases (a
lock file), so timings never share the GPU. Each of the N slots is pinned
to its own share of the CPUs (and Inductor's compile workers sized to it):
a row being timed is launch-bound at these sizes, and the compiles of the
other rows on its cores slowed it (plain GPT-2 inference measured 7.5 ms
beside unpinned compiles, 5.2 ms pinned). --deadline stops starting rows
when too little time is left for one. Graphs go to OUT_DIR/zoo_graphs/
(corpus/zoo's layout); OUT_DIR/zoo.json collects all results.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from zoo_models import ARCHS, PHASES, SETUPS, SIZES, pending, plan, split_key  # noqa: E402

# Seconds a row may take at full size (compile of both variants dominates);
# tiny rows are quick.
ROW_TIMEOUT = {"infer": 300, "train": 420}


def read_results(paths):
    out = []
    for p in paths:
        if not os.path.exists(p):
            continue
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass  # a line cut by a kill
    return out


def latest(results):
    """The last result of each row."""
    by = {}
    for r in results:
        by[r["row"]] = r
    return by


def cpu_slots(n):
    """The CPUs this process may use, split into n disjoint groups (None when
    there are fewer CPUs than slots)."""
    cpus = sorted(os.sched_getaffinity(0))
    if n <= 1 or len(cpus) < n:
        return None
    size = len(cpus) // n
    return [cpus[i * size:(i + 1) * size] for i in range(n)]


def run_row(key, a, out_dir, lock, log, cpus=None):
    arch, setup, phase = split_key(key)
    path = os.path.join(out_dir, "rows", key.replace("/", ".") + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cmd = [sys.executable, os.path.join(HERE, "zoo_row.py"), arch, setup, phase, path, "--size", a.size,
           "--iters", str(a.iters), "--graphs", os.path.join(out_dir, "zoo_graphs")]
    if a.profile:
        cmd += ["--profile", os.path.join(out_dir, "profiles")]
    if a.cache_check_first and key == a.first_row:
        cmd.append("--cache-check")
    env = dict(os.environ, ZOO_GPU_LOCK=lock, PYTHONUNBUFFERED="1")
    pin = None
    if cpus:
        env["TORCHINDUCTOR_COMPILE_THREADS"] = str(len(cpus))
        pin = lambda: os.sched_setaffinity(0, cpus)  # noqa: E731
    limit = ROW_TIMEOUT[phase] if a.size == "full" else 240
    t0 = time.time()
    with open(log, "a") as lf:
        lf.write(f"\n===== {key}\n")
        lf.flush()
        try:
            p = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=env, timeout=limit, preexec_fn=pin)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    if rc == 0 and os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    result = {"row": key, "arch": arch, "setup": setup, "phase": phase, "size": a.size,
              "status": "timeout" if rc == "timeout" else "failed", "wall_s": round(time.time() - t0, 1)}
    result["reason"] = (f"no result within {limit} s" if rc == "timeout" else
                        f"zoo_row.py exited {rc} (crash or out of memory; log: zoo.log)")
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", nargs="*", help="explicit rows ARCH/SETUP/PHASE")
    ap.add_argument("--archs", nargs="*", choices=sorted(ARCHS))
    ap.add_argument("--setups", nargs="*", choices=sorted(SETUPS))
    ap.add_argument("--phases", nargs="*", choices=PHASES, default=list(PHASES))
    ap.add_argument("--size", default="full", choices=sorted(SIZES))
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=None, help="start no row after this many seconds")
    ap.add_argument("--resume", nargs="*", default=[], help="earlier zoo.jsonl files: their rows are not run again")
    ap.add_argument("--retry", action="store_true", help="run the resumed failed/timed-out rows again")
    ap.add_argument("--cache-check-first", action="store_true", help="the first row also checks the FX graph cache")
    ap.add_argument("--profile", action="store_true", help="each row also writes its variants' kernel tables "
                    "(OUT_DIR/profiles/ROW.VARIANT.txt; a summary in the row's result)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jsonl = os.path.join(a.out, "zoo.jsonl")
    rows = [k for k in a.rows if split_key(k)] if a.rows else plan(a.archs, a.setups, a.phases)
    earlier = read_results(a.resume + [jsonl])
    done = [r for r in earlier if r.get("size", "full") == a.size]
    if a.retry:
        done = [r for r in done if r.get("status") in ("ok", "raised", "missing")]
    todo = pending(rows, done)
    a.first_row = todo[0] if todo else None
    print(f"zoo: {len(rows)} rows planned, {len(rows) - len(todo)} already done, {len(todo)} to run "
          f"({a.size}, {a.parallel} at a time)", flush=True)
    lock = os.path.join(a.out, "gpu.lock")
    log = os.path.join(a.out, "zoo.log")
    start = time.time()
    results = []
    write_lock = threading.Lock()
    slots = cpu_slots(a.parallel)
    free_slots = list(range(len(slots))) if slots else []

    def one(key):
        arch, setup, phase = split_key(key)
        need = ROW_TIMEOUT[phase] * 0.5 if a.size == "full" else 20
        if a.deadline is not None and time.time() - start + need > a.deadline:
            return None
        with write_lock:
            slot = free_slots.pop() if free_slots else None
        try:
            r = run_row(key, a, a.out, lock, log, slots[slot] if slot is not None else None)
        finally:
            if slot is not None:
                with write_lock:
                    free_slots.append(slot)
        with write_lock, open(jsonl, "a") as f:
            f.write(json.dumps(r, default=str) + "\n")
        brief = {k: r.get(k) for k in ("status", "speedup", "memory_ratio", "pass_s", "wall_s")}
        print(f"[{time.time() - start:6.0f} s] {key}: {json.dumps(brief, default=str)}", flush=True)
        return r

    with ThreadPoolExecutor(max_workers=max(1, a.parallel)) as pool:
        for r in pool.map(one, todo):
            if r is not None:
                results.append(r)
    everything = latest(read_results(a.resume + [jsonl]))
    with open(os.path.join(a.out, "zoo.json"), "w") as f:
        json.dump(list(everything.values()), f, indent=1, default=str)
    left = len(pending(rows, list(everything.values())))
    print(f"zoo: ran {len(results)} rows in {time.time() - start:.0f} s; {left} of {len(rows)} planned rows left",
          flush=True)


if __name__ == "__main__":
    main()
