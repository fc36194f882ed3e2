#!/usr/bin/env python3
"""Wall time of a batch over the corpus and the zoo: `sator batch` directly,
and through scripts/slurm-batch on a local one-node cluster as 1 shard and as
4 shards (submission to the merge job's end, merge and charts included).
Variants interleaved, median of --repeat runs (docs/batch.md).

  python3 scripts/slurm_wall_time.py build/sator [--repeat 3]
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent


def wait_for_merge(env, out):
    jobs = dict(line.split("=", 1) for line in (out / "slurm/jobs.env").read_text().split())
    while True:
        state = subprocess.run(["scontrol", "-o", "show", "job", jobs["MERGE_JOB"]], env=env,
                               capture_output=True, text=True).stdout
        if any(f"JobState={s}" in state for s in ("COMPLETED", "FAILED", "CANCELLED")):
            return "ExitCode=0:0" in state
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sator")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sator = pathlib.Path(a.sator).resolve()
    times = {"sator batch --jobs 2 (no Slurm)": [], "Slurm, 1 shard x 2 threads": [], "Slurm, 4 shards x 1 thread": []}
    with tempfile.TemporaryDirectory(prefix="sator-slurm-time-") as t:
        tmp = pathlib.Path(t)
        manifest = tmp / "graphs.txt"
        paths = sorted((REPO / "corpus/graphs").glob("*.json")) + sorted((REPO / "corpus/zoo/graphs").glob("*.json"))
        manifest.write_text("".join(f"{p}\n" for p in paths))
        cluster = tmp / "cluster"
        subprocess.run([REPO / "scripts/local-slurm", "start", cluster], check=True, stdout=subprocess.DEVNULL)
        env = dict(os.environ, SLURM_CONF=str(cluster / "slurm.conf"))
        try:
            for k in range(a.repeat):
                for name, shards, jobs in (("sator batch --jobs 2 (no Slurm)", 0, 2),
                                           ("Slurm, 1 shard x 2 threads", 1, 2), ("Slurm, 4 shards x 1 thread", 4, 1)):
                    out = tmp / f"run-{k}-{shards}"
                    start = time.monotonic()
                    if shards == 0:
                        subprocess.run([sator, "batch", manifest, "--out", out, "--jobs", str(jobs)], check=True,
                                       stderr=subprocess.DEVNULL)
                    else:
                        subprocess.run([REPO / "scripts/slurm-batch", manifest, "--out", out, "--shards", str(shards),
                                        "--jobs", str(jobs), "--sator", sator], env=env, check=True,
                                       stdout=subprocess.DEVNULL)
                        if not wait_for_merge(env, out):
                            sys.exit(f"the merge job of {out} failed")
                    times[name].append(time.monotonic() - start)
        finally:
            subprocess.run([REPO / "scripts/local-slurm", "stop", cluster])
    print(f"{len(paths)} graphs, {os.cpu_count()} cores, median of {a.repeat} (s):")
    for name, ts in times.items():
        print(f"  {name:34s} {statistics.median(ts):6.1f}   ({', '.join(f'{x:.1f}' for x in ts)})")


if __name__ == "__main__":
    main()
