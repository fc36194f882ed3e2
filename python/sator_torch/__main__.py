"""`python3 -m sator_torch --check`: which sator binary the bridge would run,
its version, git revision and rule set; exit 1 where there is none or it
does not run. No torch needed."""
import argparse
import sys

from .binary import describe


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m sator_torch", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="say which binary, version and rule set the bridge uses")
    ap.add_argument("--sator", help="this binary instead of $SATOR / PATH / the checkout's build/sator")
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
    try:
        import torch  # noqa: F401
        print(f"torch {torch.__version__}: InductorPass() will run it on each joint graph")
    except ImportError:
        print("torch: not installed here (the pass needs it; `sator` itself does not)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
