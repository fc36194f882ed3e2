"""`pip install .`'s wheel (python/build_backend/sator_build.py), without
torch: built from a sator binary already built (SATOR_PREBUILT), it holds
the package, the binary (executable), the `sator` command and the
torch_dynamo_backends entry point; installed, `python -m sator_torch
--check` finds the installed binary with nothing else set, and says the
backend is registered. Installed twice: by pip into a fresh virtual
environment where this Python has venv and pip, and by unpacking the wheel
as pip would (always).

    test_wheel.py SATOR
"""
import importlib
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def build(sator, out):
    sys.path.insert(0, os.path.join(ROOT, "python", "build_backend"))
    backend = importlib.import_module("sator_build")
    os.environ["SATOR_PREBUILT"] = sator
    try:
        return os.path.join(out, backend.build_wheel(out))
    finally:
        del os.environ["SATOR_PREBUILT"]


def unpack(wheel, site):
    """What pip does with a wheel's files: each in place, with its mode."""
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            path = z.extract(info, site)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)


def env_without_sator(**more):
    env = {k: v for k, v in os.environ.items() if k not in ("SATOR", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"  # no sator on it
    env.update(more)
    return env


def check_installed(python, site, what, failures, env):
    r = subprocess.run([python, "-m", "sator_torch", "--check"], capture_output=True, text=True, env=env, cwd="/")
    binary = os.path.join(site, "sator_torch", "bin", "sator")
    if r.returncode != 0 or f"binary: {os.path.realpath(binary)}" not in r.stdout.replace(site, os.path.realpath(site)):
        failures.append(f"{what}: --check did not find the installed binary {binary}: exit {r.returncode}, "
                        f"{r.stdout!r} {r.stderr!r}")
    if 'torch.compile backend "sator": registered (sator_torch.backend:sator)' not in r.stdout:
        failures.append(f"{what}: the backend is not registered: {r.stdout!r}")


def main():
    sator = os.path.abspath(sys.argv[1])
    failures, checks = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build(sator, os.path.join(tmp, "dist"))
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            info = z.getinfo("sator_torch/bin/sator")
            entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
            record = z.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
        checks += 4
        for needed in ("sator_torch/__init__.py", "sator_torch/backend.py", "sator_torch/inductor_pass.py"):
            if needed not in names:
                failures.append(f"the wheel lacks {needed}")
        if (info.external_attr >> 16) & 0o111 == 0:
            failures.append("the packaged binary is not executable")
        if "sator = sator_torch.backend:sator" not in entry_points or "sator = sator_torch.__main__:run_binary" not in entry_points:
            failures.append(f"entry points: {entry_points!r}")
        if any(line and line.split(",")[0] not in names for line in record.splitlines()):
            failures.append("RECORD names a file the wheel lacks")

        # Unpacked as pip unpacks it.
        site = os.path.join(tmp, "site")
        unpack(wheel, site)
        checks += 2
        check_installed(sys.executable, site, "unpacked", failures, env_without_sator(PYTHONPATH=site))
        # The `sator` command's function runs the installed binary.
        checks += 1
        r = subprocess.run([sys.executable, "-c", "import sys; sys.argv[1:] = ['--version']; "
                            "from sator_torch.__main__ import run_binary; run_binary()"],
                           capture_output=True, text=True, env=env_without_sator(PYTHONPATH=site), cwd="/")
        if r.returncode != 0 or not r.stdout.startswith("sator "):
            failures.append(f"the sator command: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")

        # By pip, into a fresh virtual environment, offline.
        venv = os.path.join(tmp, "venv")
        made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
        pip = os.path.join(venv, "bin", "pip")
        if made.returncode != 0 or not os.path.exists(pip):
            print("note: this Python has no venv with pip (Debian: python3-venv); the pip install was not tried")
        else:
            checks += 3
            r = subprocess.run([pip, "install", "-q", "--no-index", "--no-deps", wheel], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"pip install: exit {r.returncode}, {r.stderr[-500:]!r}")
            else:
                python = os.path.join(venv, "bin", "python")
                site = subprocess.run([python, "-c", "import sator_torch, os; "
                                       "print(os.path.dirname(os.path.dirname(sator_torch.__file__)))"],
                                      capture_output=True, text=True, env=env_without_sator(), cwd="/").stdout.strip()
                check_installed(python, site, "pip-installed", failures, env_without_sator())
                r = subprocess.run([os.path.join(venv, "bin", "sator"), "--version"], capture_output=True, text=True,
                                   env=env_without_sator())
                if r.returncode != 0 or not r.stdout.startswith("sator "):
                    failures.append(f"pip-installed sator command: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"{checks - len(failures)} of {checks} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
