"""The PEP 517 build backend of `pip install .`: the sator binary built by
CMake and put inside the `sator_torch` package, in a wheel written here.

It needs nothing but the standard library, so pip installs no build
requirements (nothing is downloaded): the C++ dependencies are the Debian
packages `scripts/deps` installs, as for every other build of sator.

    pip install .                          # from the repository root or python/
    SATOR_PREBUILT=build/sator pip install .   # a binary already built (no CMake)
    SATOR_BUILD_DIR=/tmp/b pip install .       # where CMake builds (default build-wheel/)

The wheel holds sator_torch (python/sator_torch), its binary at
sator_torch/bin/sator, a `sator` command that runs it, and the
`torch_dynamo_backends` entry point that makes torch.compile(model,
backend="sator") work.
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

NAME = "sator"
SUMMARY = "Equality saturation for PyTorch graphs: attention fusion, layout identities and chunking inside torch.compile"


def _root():
    """The repository root: the directory above this backend holding
    CMakeLists.txt and python/sator_torch (pip runs the hooks in the source
    tree: the root, or python/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.dirname(os.path.dirname(here)), os.getcwd(), os.path.dirname(os.getcwd())):
        if os.path.isfile(os.path.join(d, "CMakeLists.txt")) and os.path.isdir(os.path.join(d, "python", "sator_torch")):
            return d
    raise RuntimeError(f"sator_build: no repository root above {here} (CMakeLists.txt beside python/sator_torch)")


def _version(root):
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        m = re.search(r"project\(\s*sator\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("sator_build: CMakeLists.txt has no `project(sator VERSION x.y.z ...)`")
    return m.group(1)


def _say(text):
    print(f"sator_build: {text}", file=sys.stderr, flush=True)


def _binary(root):
    """The sator binary to package: $SATOR_PREBUILT as it is, else a Release
    build of the `sator` target (CMake, Ninja where there is one)."""
    prebuilt = os.environ.get("SATOR_PREBUILT")
    if prebuilt:
        if not (os.path.isfile(prebuilt) and os.access(prebuilt, os.X_OK)):
            raise RuntimeError(f"sator_build: SATOR_PREBUILT={prebuilt!r} is not an executable file")
        _say(f"packaging {prebuilt} (SATOR_PREBUILT)")
        return prebuilt
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("sator_build: cmake not found: install the build dependencies (scripts/deps, Debian "
                           "packages) or give a built binary as SATOR_PREBUILT=PATH")
    build = os.environ.get("SATOR_BUILD_DIR") or os.path.join(root, "build-wheel")
    configure = [cmake, "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DSATOR_TESTS=OFF", "-DSATOR_BENCH=OFF"]
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")) and shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    _say(f"building the sator binary in {build} (Release; the first build takes minutes)")
    for cmd in (configure, [cmake, "--build", build, "--target", "sator", "--parallel"]):
        done = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
        if done.returncode != 0:
            raise RuntimeError(f"sator_build: `{' '.join(cmd)}` failed (exit {done.returncode}); the C++ "
                               "dependencies are Debian packages: scripts/deps installs them")
    return os.path.join(build, "sator")


def _platform_tag():
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def _metadata(version):
    readme = ("sator loads a PyTorch graph into an e-graph, applies view/permute identities and attention "
              "patterns to saturation, extracts the cheapest equivalent graph and chunks the memory-hungry "
              "part. Installed, torch.compile(model, backend=\"sator\") runs it inside Inductor.\n")
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\nLicense: see the repository\n"
            "Description-Content-Type: text/markdown\n\n" + readme)


ENTRY_POINTS = """[console_scripts]
sator = sator_torch.__main__:run_binary

[torch_dynamo_backends]
sator = sator_torch.backend:sator
"""


class _Wheel:
    """A wheel being written: each file's RECORD line kept as it is added."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, name, data, mode=0o644):
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{name},sha256={digest},{len(data)}")

    def close(self, record_name):
        self.record.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | 0o644) << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n")
        self.zip.close()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    root = _root()
    version = _version(root)
    binary = _binary(root)
    tag = f"py3-none-{_platform_tag()}"
    name = f"{NAME}-{version}-{tag}.whl"
    dist_info = f"{NAME}-{version}.dist-info"
    os.makedirs(wheel_directory, exist_ok=True)
    w = _Wheel(os.path.join(wheel_directory, name))
    package = os.path.join(root, "python", "sator_torch")
    for f in sorted(os.listdir(package)):
        if f.endswith(".py"):
            with open(os.path.join(package, f), "rb") as src:
                w.add(f"sator_torch/{f}", src.read())
    with open(binary, "rb") as src:
        w.add("sator_torch/bin/sator", src.read(), mode=0o755)
    w.add(f"{dist_info}/METADATA", _metadata(version).encode())
    w.add(f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: sator_build\nRoot-Is-Purelib: false\nTag: {tag}\n".encode())
    w.add(f"{dist_info}/entry_points.txt", ENTRY_POINTS.encode())
    w.add(f"{dist_info}/top_level.txt", b"sator_torch\n")
    w.close(f"{dist_info}/RECORD")
    _say(f"wrote {name}")
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the checkout as a tarball (git archive)."""
    root = _root()
    version = _version(root)
    name = f"{NAME}-{version}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    out = os.path.join(sdist_directory, name)
    done = subprocess.run(["git", "-C", root, "archive", "--format=tar.gz", f"--prefix={NAME}-{version}/", "-o", out,
                           "HEAD"], stdout=sys.stderr, stderr=sys.stderr)
    if done.returncode != 0:
        raise RuntimeError("sator_build: an sdist is made from a git checkout (git archive failed)")
    return name
