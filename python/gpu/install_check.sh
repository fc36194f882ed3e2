#!/usr/bin/env bash
# `pip install .` and torch.compile(backend="sator") as a user would, on the GPU
# machine (issue 43): a fresh virtual environment over the system's torch
# (--system-site-packages), the repository installed offline, then
# python/gpu/backend_check.py run by that environment's python, from /, with
# no $SATOR: the pass must find the binary pip installed.
#   python/gpu/install_check.sh OUT_DIR [PREBUILT_SATOR]
# PREBUILT_SATOR: a built binary to package (SATOR_PREBUILT; the GPU machine
# has no Debian C++ dependencies to build with). Writes OUT_DIR/install.log and
# OUT_DIR/backend_check.json.
set -uo pipefail
out=$1 prebuilt=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
venv=$(mktemp -d)/venv
log=$out/install.log
{
  echo "python: $(command -v python3) ($(python3 --version 2>&1))"
  python3 -m venv --system-site-packages "$venv" || exit 3
  # Where python3 is itself a virtual environment (the GPU machine's is
  # /opt/torch/.venv), --system-site-packages reaches the interpreter
  # below it, not the packages torch is in: those are added by a .pth file.
  outer=$(python3 -c 'import site, sys; print(site.getsitepackages()[0] if sys.prefix != sys.base_prefix else "")')
  if [ -n "$outer" ]; then
    inner=$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
    echo "$outer" > "$inner/outer_site_packages.pth"
    echo "torch's packages from $outer (python3 is a virtual environment)"
  fi
  [ -n "$prebuilt" ] && export SATOR_PREBUILT=$prebuilt
  start=$SECONDS
  (cd "$root" && "$venv/bin/pip" install --no-index . ) || exit 4
  echo "pip install: $((SECONDS - start)) s"
  unset SATOR SATOR_PREBUILT
  (cd / && "$venv/bin/python" -m sator_torch --check) || exit 5
  "$venv/bin/sator" --version || exit 6
} > "$log" 2>&1
rc=$?
cat "$log"
[ $rc -eq 0 ] || { echo "install_check: failed (exit $rc), see $log"; exit $rc; }
cd / && env -u SATOR "$venv/bin/python" "$root/python/gpu/backend_check.py" "$out/backend_check.json"
