"""Real base images for the audit's calibration: Debian's python3, nodejs, golang and openjdk packages
unpacked into a root filesystem, as a task image's base layers are.

``.ci/run`` downloads the packages once (``apt-get download``) into ``DEBS``, outside the repository; the
tree they unpack to is cached beside them and hard-linked (or copied) into each test's root filesystem.
Missing packages skip the tests, and fail them under ``CI=true``. Imported by name (``runtime_helpers``)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "overlap-ci"
DEBS = CACHE / "debs"
# the python runtime (the interpreter, its stdlib, venv's ensurepip and the wheels it bundles), node, go, java
PACKAGES = ("python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib", "python3.11-venv",
            "python3-pip-whl", "python3-setuptools-whl", "nodejs", "libnode108", "golang-1.19-go",
            "openjdk-17-jre-headless")


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (.ci/run downloads them into {DEBS})")
    pytest.skip(reason)


def debs() -> list[Path]:
    """One .deb per package of ``PACKAGES`` (the test fails under CI, else skips, when one is missing)."""
    if shutil.which("dpkg-deb") is None:
        _missing("dpkg-deb is not installed")
    found = sorted(DEBS.glob("*.deb")) if DEBS.is_dir() else []
    out = []
    for name in PACKAGES:
        mine = [p for p in found if p.name.startswith(name + "_")]
        if not mine:
            _missing(f"the Debian package {name} is not downloaded")
        out.append(mine[-1])
    return out


def runtime_tree() -> Path:
    """The packages unpacked once into a root filesystem (cached by the .deb names), with the python.org
    layout of ``ensurepip``'s bundled wheels (``/usr/lib/python3.11/ensurepip/_bundled``) that task images
    carry."""
    files = debs()
    key = hashlib.sha256("\n".join(p.name for p in files).encode()).hexdigest()[:16]
    tree = CACHE / f"rootfs-{key}"
    if (tree / ".complete").is_file():
        return tree
    work = CACHE / f"rootfs-{key}.partial-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for deb in files:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(work)], check=True)
    bundled = work / "usr/lib/python3.11/ensurepip/_bundled"
    bundled.mkdir(parents=True, exist_ok=True)
    for wheel in sorted((work / "usr/share/python-wheels").glob("*.whl")):
        shutil.copy2(wheel, bundled / wheel.name)
    for d in ("tmp", "root", "etc", "home"):
        (work / d).mkdir(exist_ok=True)
    (work / ".complete").write_text(key)
    shutil.rmtree(tree, ignore_errors=True)
    work.rename(tree)
    return tree


def rootfs_copy(dest: Path) -> Path:
    """A private copy of the runtime tree at ``dest`` (hard links when on the same file system)."""
    tree = runtime_tree()
    res = subprocess.run(["cp", "-al", str(tree), str(dest)], capture_output=True)
    if res.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run(["cp", "-a", str(tree), str(dest)], check=True)
    (dest / ".complete").unlink()
    return dest
