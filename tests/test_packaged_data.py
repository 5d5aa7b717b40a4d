"""The shipped data (data/demo/, mappings/) is found the same way in an editable install and in a wheel.

pyproject.toml maps the top-level folders `data/` and `mappings/` to the packages `overlap._data` and
`overlap._mappings`; `overlap.resources` locates them with `importlib.resources`. These tests check that
the editable install (the one the suite runs in) finds the repository's files, and that a wheel built from
the repository ships the same files, byte for byte, and finds them from its own install folder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from overlap.api.demo import DEMO_ROOT, demo_data
from overlap.ids.github import RENAMES_FILE, known_renames
from overlap.resources import demo_root, renames_file

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("mimo-cyber", "cybergym", "arvo", "arvo-meta")


def digests(folder: Path) -> dict[str, str]:
    """{relative posix path: sha256} of every file under `folder` (caches left out)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_every_overlap_subpackage_is_listed_in_pyproject():
    """packages are listed, not found (data/ and mappings/ need names discovery cannot give them): a
    folder of overlap/ with Python files that the list lacks would be left out of the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    present = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "overlap").rglob("*.py")
               if "__pycache__" not in p.parts}
    missing = sorted(present - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml (else the wheel lacks them)"
    assert config["package-dir"] == {"overlap._data": "data", "overlap._mappings": "mappings"}


def test_editable_install_finds_the_repository_files():
    assert demo_root() == DEMO_ROOT and DEMO_ROOT.resolve() == (ROOT / "data" / "demo").resolve()
    assert renames_file() == RENAMES_FILE
    assert RENAMES_FILE.resolve() == (ROOT / "mappings" / "repo_renames.csv").resolve()
    assert {name: path.is_dir() for name, path in demo_data().items()} == dict.fromkeys(DATASETS, True)
    assert (DEMO_ROOT / "mimo-cyber" / "cyber.parquet").is_file()
    assert (DEMO_ROOT / "arvo" / "arvo" / "oss_fuzz_mappings.csv").is_file()
    assert known_renames()["kbknapp/clap-rs"] == "clap-rs/clap"


# Run by the installed wheel, from a folder outside the repository: where things were found, and what.
PROBE = """
import hashlib, json, sys
from pathlib import Path
import overlap, overlap._data, overlap._mappings
from overlap.resources import demo_root, renames_file
from overlap.api.demo import DEMO_ROOT, demo_data
from overlap.ids.github import RENAMES_FILE, known_renames

root = demo_root()
print(json.dumps({
    "modules": [overlap.__file__, overlap._data.__file__, overlap._mappings.__file__],
    "demo_root": str(root), "same_demo_root": DEMO_ROOT == root,
    "renames_file": str(renames_file()), "same_renames_file": RENAMES_FILE == renames_file(),
    "demo_data": {name: [str(path), path.is_dir()] for name, path in demo_data().items()},
    "demo": {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file()},
    "renames": hashlib.sha256(renames_file().read_bytes()).hexdigest(),
    "clap": known_renames().get("kbknapp/clap-rs"),
}))
"""


def can_build_wheels() -> bool:
    """setuptools >= 70.1 has bdist_wheel; older ones need the `wheel` package for it."""
    return (importlib.util.find_spec("wheel") is not None
            or importlib.util.find_spec("setuptools.command.bdist_wheel") is not None)


@pytest.mark.skipif(not can_build_wheels(), reason="building a wheel offline needs the `wheel` package "
                    "(setuptools < 70.1): pip install wheel")
def test_wheel_ships_the_data_and_finds_it_the_same_way(tmp_path):
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1"}
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(ROOT)], capture_output=True, text=True, env=env, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheels.glob("overlap-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "overlap").rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(sources - names)
    assert not missing, f"Python files missing from the wheel (list their package in pyproject.toml): {missing}"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                              str(wheel)], capture_output=True, text=True, env=env, timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]

    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=elsewhere,
                           env={**os.environ, "PYTHONPATH": str(target)}, timeout=120)
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout)

    # Everything comes from the wheel's install folder, not from the repository (the editable install's
    # finder stays active in the subprocess, so a file the wheel lacked would otherwise be found there).
    site = target.resolve()
    for path in [*found["modules"], found["demo_root"], found["renames_file"],
                 *(path for path, _ in found["demo_data"].values())]:
        assert Path(path).resolve().is_relative_to(site), f"{path} is not in the installed wheel ({site})"
    assert Path(found["demo_root"]) == site / "overlap" / "_data" / "demo"
    assert found["same_demo_root"] and found["same_renames_file"]
    assert {name: is_dir for name, (_, is_dir) in found["demo_data"].items()} == dict.fromkeys(DATASETS, True)

    # The same files, byte for byte.
    assert found["demo"] == digests(ROOT / "data" / "demo")
    assert found["renames"] == hashlib.sha256((ROOT / "mappings" / "repo_renames.csv").read_bytes()).hexdigest()
    assert found["clap"] == "clap-rs/clap"
    for readme in ("overlap/_data/README.md", "overlap/_mappings/README.md"):
        assert readme in names
