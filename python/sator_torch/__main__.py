"""`python3 -m sator_torch --check`: which sator binary the bridge would run,
its version, git revision and rule set; exit 1 where there is none or it
does not run. No torch needed."""
import argparse
import os
import sys

from .binary import describe, find_sator


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m sator_torch", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="say which binary, version and rule set the bridge uses")
    ap.add_argument("--sator", help="this binary instead of $SATOR / the installed one / PATH / the checkout's build/sator")
    a = ap.parse_args(argv)
    if not a.check:
        ap.print_help()
        return 0
    try:
        path, version = describe(a.sator)
    except (FileNotFoundError, RuntimeError) as e:
        print(f"sator_torch: {e}", file=sys.stderr)
        return 1
    print(f"binary: {path}\n{version}")
    print(f"torch.compile backend \"sator\": {_backend_registration()}")
    try:
        import torch  # noqa: F401
        print(f"torch {torch.__version__}: InductorPass() will run it on each joint graph")
    except ImportError:
        print("torch: not installed here (the pass needs it; `sator` itself does not)")
    return 0


def _backend_registration():
    """Whether torch.compile(backend="sator") finds this package (its
    torch_dynamo_backends entry point, written by pip install)."""
    from importlib.metadata import entry_points
    try:
        found = [e for e in entry_points(group="torch_dynamo_backends") if e.name == "sator"]
    except TypeError:  # Python < 3.10
        found = [e for e in entry_points().get("torch_dynamo_backends", []) if e.name == "sator"]
    if not found:
        return "not registered (pip install the repository to register it)"
    return f"registered ({found[0].value})"


def run_binary():
    """The `sator` command pip installs: runs the binary installed with this
    package (or $SATOR) with the same arguments."""
    path = find_sator(search_path=False)
    if path is None:
        print("sator: the binary installed with sator_torch is missing (reinstall: pip install .), or $SATOR is "
              "not an executable file", file=sys.stderr)
        sys.exit(2)
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
