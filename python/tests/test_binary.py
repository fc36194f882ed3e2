"""`python3 -m sator_torch --check` and sator_torch.describe, without torch:
the binary found, its version line; a missing or broken binary an error
(exit 1), never a silent fallback.

    test_binary.py SATOR
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)


def check(args, env_sator=None):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    env.pop("SATOR", None)
    if env_sator is not None:
        env["SATOR"] = env_sator
    return subprocess.run([sys.executable, "-m", "sator_torch", "--check"] + args, capture_output=True, text=True,
                          env=env, cwd="/")


def main():
    sator = os.path.abspath(sys.argv[1])
    failures = []
    r = check(["--sator", sator])
    if r.returncode != 0 or f"binary: {sator}" not in r.stdout or "rule set " not in r.stdout:
        failures.append(f"--check --sator BUILT: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
    r = check([], env_sator=sator)
    if r.returncode != 0 or f"binary: {sator}" not in r.stdout:
        failures.append(f"--check with $SATOR: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
    r = check([], env_sator="/nonexistent/sator")
    if r.returncode != 1 or "'/nonexistent/sator' is not an executable file" not in r.stderr:
        failures.append(f"a $SATOR typo: exit {r.returncode}, {r.stderr!r}")
    r = check(["--sator", "/bin/true"])
    if r.returncode != 1 or "is not a sator binary that runs" not in r.stderr:
        failures.append(f"a binary that is not sator: exit {r.returncode}, {r.stderr!r}")
    sys.path.insert(0, PYTHON_DIR)
    import sator_torch
    path, version = sator_torch.describe(sator)
    if path != sator or not version.startswith("sator "):
        failures.append(f"describe: {path!r} {version!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"{5 - len(failures)} of 5 checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
