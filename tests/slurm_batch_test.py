#!/usr/bin/env python3
"""scripts/slurm-batch against a real one-node Slurm cluster that this test
starts (scripts/local-slurm) and stops.

1. The corpus and the zoo as 4 shards; one shard's task is cancelled midway
   (scancel of that array task only), then requeued: it resumes where it
   stopped, and the merged summary equals an unsharded `sator batch` of the
   same graphs, byte for byte and so row for row; the merge job exits 0 and
   draws the charts.
2. A shard that fails for good (cancelled before it ran, never requeued):
   the merge keeps what finished, lists the shard's graphs as not run (in the
   summaries and its log) and exits 1.
Nothing outside the test's folder is written (checked on the places Slurm
and munge would use system-wide).

Exit 77 (ctest: skipped) where Slurm cannot start here, with the reason.
usage: slurm_batch_test.py SATOR REPO
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

SATOR, REPO = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
# Under AddressSanitizer (argument "sanitized") sator runs several times
# slower: the shards' jobs take that much longer to end.
SLOW = 4 if sys.argv[3:] == ["sanitized"] else 1
SYSTEM_PLACES = ["/etc/slurm", "/etc/munge", "/run/munge", "/run/slurm", "/var/run/munge", "/var/spool/slurmd",
                 "/var/spool/slurmctld", "/var/lib/slurm", "/var/lib/munge", "/var/log/slurm", "/var/log/munge"]
failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def running(daemon):
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and open(f"/proc/{pid}/comm").read().strip() == daemon:
                return True
        except OSError:
            pass
    return False


def snapshot(places):  # every file (and its mtime, size) in the places a system-wide install would write
    seen = {}
    for place in places:
        for dirpath, _, files in os.walk(place):
            for f in [""] + files:
                p = os.path.join(dirpath, f)
                try:
                    st = os.stat(p)
                    seen[p] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    pass
    return seen


def sh(args, env, timeout=60, ok=(0,)):
    r = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode not in ok:
        raise RuntimeError(f"{' '.join(map(str, args))} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def job_field(env, job, field):  # a field of `scontrol show job` (its first task for an array)
    out = sh(["scontrol", "-o", "show", "job", job], env, ok=(0, 1))
    for word in out.split():
        if word.startswith(field + "="):
            return word.split("=", 1)[1]
    return ""


def wait_until(what, predicate, seconds):
    seconds *= SLOW
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise RuntimeError(f"timed out after {seconds} s waiting for {what}")


def wait_ended(env, job, seconds=180):
    return wait_until(f"job {job} to end",
                      lambda: job_field(env, job, "JobState") in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"), seconds)


def shard_graphs(manifest, i, n):
    out = sh([SATOR, "batch", manifest, "--out", "/nonexistent/x", "--shard", f"{i}/{n}", "--list"], os.environ)
    return [line.split("\t")[0] for line in out.splitlines() if line]


def results_in(folder, ok_only=False):
    g = pathlib.Path(folder) / "graphs"
    files = sorted(g.glob("*.json")) if g.is_dir() else []
    if ok_only:  # the ones --resume skips
        files = [f for f in files if json.loads(f.read_text()).get("status") == "ok"]
    return len(files)


def submit(env, manifest, out, shards, jobs, *sbatch):
    args = [REPO / "scripts/slurm-batch", manifest, "--out", out, "--shards", shards, "--jobs", jobs, "--sator", SATOR]
    print(sh(args + (["--", *sbatch] if sbatch else []), env), end="", flush=True)
    ids = dict(line.split("=", 1) for line in (pathlib.Path(out) / "slurm/jobs.env").read_text().split())
    return ids["ARRAY_JOB"], ids["MERGE_JOB"]


def cancel_midway_and_requeue(env, tmp, manifest, single):
    out = tmp / "sharded"
    started = time.monotonic()
    array, merge = submit(env, manifest, out, 4, 1)
    # A running shard that has finished some of its graphs and not all.
    sizes = {i: len(shard_graphs(manifest, i, 4)) for i in range(1, 5)}

    def running_midway():
        running = sh(["squeue", "-h", "-j", array, "-t", "R", "-o", "%K"], env).split()
        for t in running:
            n = results_in(out / f"shards/shard-{t}")
            if 2 <= n < sizes[int(t)] - 2:
                return int(t)
        return None
    task = wait_until("a shard midway", running_midway, 120)
    status = sh([REPO / "scripts/slurm-batch", "--status", out], env)
    check(f"shard {task}/4: [" in status, f"--status shows shard {task}'s progress line while it runs")
    sh(["scancel", f"{array}_{task}"], env)
    wait_until(f"task {array}_{task} to stop", lambda: job_field(env, f"{array}_{task}", "JobState") == "CANCELLED", 30)
    done_before = results_in(out / f"shards/shard-{task}", ok_only=True)
    check(done_before < sizes[task], f"shard {task} cancelled midway ({done_before} of {sizes[task]} graphs done)")
    check(results_in(out / f"shards/shard-{task}") == done_before,
          "the cancellation left no graph recorded as failed (an interrupt is not the graph's failure)")
    sh(["scontrol", "requeue", f"{array}_{task}"], env)
    # A requeued job waits a fixed delay before it may start again; a user
    # would wait, the test asks Slurm to start it now.
    sh(["scontrol", "update", f"JobId={array}_{task}", "StartTime=now"], env)
    wait_ended(env, merge)
    wall = time.monotonic() - started
    check(job_field(env, merge, "ExitCode") == "0:0", f"merge job exit code 0:0 (got {job_field(env, merge, 'ExitCode')})")
    log = (out / f"logs/shard-{task}.log").read_text()
    check(log.count(f"== shard {task}/4 on") == 2 and "restart 1" in log, f"shard {task} ran twice (its log)")
    once = [i for i in sizes if i != task and (out / f"logs/shard-{i}.log").read_text().count(f"== shard {i}/4 on") == 1]
    check(len(once) == 3, f"the other shards ran once each, uncancelled ({once})")
    runs = [l for l in log.splitlines() if l.startswith("sator batch: ") and "to run" in l]
    expected = f"{sizes[task] - done_before} to run"
    check(len(runs) == 2 and expected in runs[1], f"the requeued shard resumed: '{expected}' (log: {runs})")
    for f in ("summary.csv", "summary.json", "summary.md"):
        a, b = (single / f).read_text(), (out / f).read_text()
        if f == "summary.md":  # the merge job drew the charts and linked them; the unsharded run did not
            a, b = a.partition("## Charts")[0], b.partition("## Charts")[0]
            check((out / "charts" / "cost.svg").exists() == ("charts/cost.svg" in (out / f).read_text()),
                  "the merged summary.md links its charts exactly when they were drawn")
        if not check(a == b, f"merged {f} equals the unsharded run's"):
            for k, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
                if x != y:
                    print(f"  first differing line {k + 1}:\n  unsharded: {x}\n  merged:    {y}")
                    break
    rows = json.loads((out / "summary.json").read_text())["rows"]
    check(len(rows) == sum(sizes.values()), f"{len(rows)} rows, one per graph")
    check((out / "charts/cost.svg").is_file(), "the merge job drew the charts")
    status = sh([REPO / "scripts/slurm-batch", "--status", out], env)
    check(all(f"shard {i}/4: == shard {i}/4 exited 0" in status for i in sizes) and "merge: merge exited 0" in status,
          "--status after the merge: each shard exited 0, the merge exited 0")
    return wall


def shard_fails_for_good(env, tmp):
    graphs = sorted((REPO / "corpus/graphs").glob("*.json"))[:10]
    manifest = tmp / "small.txt"
    manifest.write_text("".join(f"{g}\n" for g in graphs))
    out = tmp / "lost"
    # Submitted held (sbatch's --hold goes to both jobs), so that shard 2 is
    # cancelled before it runs.
    array, merge = submit(env, manifest, out, 2, 1, "--hold")
    sh(["scancel", f"{array}_2"], env)
    sh(["scontrol", "release", f"{array},{merge}"], env)
    wait_ended(env, merge)
    check(job_field(env, merge, "ExitCode") == "1:0",
          f"merge job exits 1 when a shard did not finish (got {job_field(env, merge, 'ExitCode')})")
    lost = shard_graphs(manifest, 2, 2)
    summary = json.loads((out / "summary.json").read_text())
    check(sorted(summary.get("not_run", [])) == sorted(lost) and lost,
          f"summary.json lists shard 2's {len(lost)} graphs as not run")
    check(summary["ok"] == len(graphs) - len(lost), f"the merge kept shard 1's {len(graphs) - len(lost)} results")
    merge_log = (out / "logs/merge.log").read_text()
    check(all(f"not run: {g}" in merge_log for g in lost), "the merge log names each graph not run")
    check("NOT RUN" in (out / "summary.md").read_text(), "summary.md says graphs were not run")


def main():
    # A daemon the system already runs (Debian starts munged when it installs
    # it, where systemd runs) writes its own files: those places are not ours to check.
    places = [p for p in SYSTEM_PLACES
              if not any(d in p and running(daemon) for d, daemon in (("munge", "munged"), ("slurm", "slurmd"), ("slurm", "slurmctld")))]
    if len(places) < len(SYSTEM_PLACES):
        print(f"note: system daemons already running; not checked: {sorted(set(SYSTEM_PLACES) - set(places))}")
    before = snapshot(places)
    with tempfile.TemporaryDirectory(prefix="sator-slurm-") as t:
        tmp = pathlib.Path(t)
        cluster = tmp / "cluster"
        r = subprocess.run([REPO / "scripts/local-slurm", "start", cluster], capture_output=True, text=True)
        if r.returncode != 0:
            print("SKIP: no Slurm cluster could start here: " + r.stderr.strip())
            return 77
        env = dict(os.environ, SLURM_CONF=str(cluster / "slurm.conf"))
        try:
            manifest = tmp / "corpus_and_zoo.txt"
            paths = sorted((REPO / "corpus/graphs").glob("*.json")) + sorted((REPO / "corpus/zoo/graphs").glob("*.json"))
            manifest.write_text("".join(f"{p}\n" for p in paths))
            single = tmp / "single"
            started = time.monotonic()
            sh([SATOR, "batch", manifest, "--out", single, "--jobs", 2], env, timeout=600 * SLOW)
            print(f"unsharded sator batch of {len(paths)} graphs: {time.monotonic() - started:.1f} s", flush=True)
            wall = cancel_midway_and_requeue(env, tmp, manifest, single)
            print(f"4 shards on Slurm, one cancelled and requeued, merged: {wall:.1f} s", flush=True)
            shard_fails_for_good(env, tmp)
        except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
            check(False, f"{type(e).__name__}: {e}")
            for log in ("slurmctld.log", "slurmd.log"):
                print(f"--- {log} (last lines)\n" + "\n".join((cluster / log).read_text().splitlines()[-15:]))
        finally:
            subprocess.run([REPO / "scripts/local-slurm", "stop", cluster])
    after = snapshot(places)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    check(not changed, f"no system-wide file written (changed: {changed[:5]})")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
