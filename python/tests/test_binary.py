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
    # Every public name of the package resolves (where it needs torch and
    # there is none, it says so), reached both ways a user writes it: a name
    # that is also a submodule's (`backend`) recursed until Python gave up.
    # Run in a fresh interpreter each: an import that failed leaves nothing.
    for name in sorted(sator_torch._FROM):
        for stmt in (f"from sator_torch import {name}", f"import sator_torch; sator_torch.{name}"):
            code = (f"try:\n    {stmt.replace('; ', chr(10) + '    ')}\n    print('ok')\n"
                    "except ModuleNotFoundError as e:\n    print('needs', e.name)\n")
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=PYTHON_DIR), cwd="/")
            if r.returncode != 0 or r.stdout.strip() not in ("ok", "needs torch"):
                failures.append(f"{stmt}: exit {r.returncode}, {r.stdout.strip()!r} {r.stderr[-300:]!r}")
    r = subprocess.run([sys.executable, "-c", "import sator_torch; sator_torch.nothing_of_this_name"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PYTHON_DIR), cwd="/")
    if r.returncode == 0 or "AttributeError: module 'sator_torch' has no attribute 'nothing_of_this_name'" not in r.stderr:
        failures.append(f"an unknown name: exit {r.returncode}, {r.stderr[-300:]!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} of the checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
