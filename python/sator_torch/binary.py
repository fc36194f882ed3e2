"""Which sator binary the bridge runs, and what it is (no torch needed).

    python3 -m sator_torch --check     # from python/, or with it on PYTHONPATH
"""
import os
import shutil
import subprocess


def packaged_binary():
    """The binary `pip install .` put inside this package (None in a checkout)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sator")


def find_sator(explicit=None, search_path=True):
    """The sator binary: `explicit`, else $SATOR, else the one installed with
    this package (pip install), else `sator` on PATH, else this checkout's
    build/sator; None where there is none. A path that was given (`explicit`
    or $SATOR) and is not an executable file gives None: a typo must not fall
    back to another binary. search_path=False skips PATH (the `sator`
    command pip installs is itself on PATH)."""
    for given in (explicit, os.environ.get("SATOR")):
        if given:
            return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for c in (packaged_binary(), shutil.which("sator") if search_path else None, os.path.join(here, "build", "sator")):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def describe(explicit=None, timeout=30):
    """(binary, version line) of the binary find_sator picks; raises
    FileNotFoundError where there is none and RuntimeError where it does not
    run (`sator --version` fails)."""
    path = find_sator(explicit)
    if path is None:
        given = explicit or os.environ.get("SATOR")
        raise FileNotFoundError(
            f"no sator binary: {given!r} is not an executable file" if given else
            "no sator binary: pip install the repository, set $SATOR, put `sator` on PATH, or build this checkout "
            "(scripts/demo)")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"{path} does not run: {e}") from e
    if out.returncode != 0 or not out.stdout.startswith("sator "):
        said = ((out.stderr or out.stdout).strip().splitlines() or [""])[0][:200]
        raise RuntimeError(f"{path} is not a sator binary that runs: `--version` gave exit {out.returncode}, {said!r}")
    return path, out.stdout.strip()
