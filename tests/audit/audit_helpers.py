"""Helpers of the audit tests: building the audit fixtures with real git, running real git for a
test's own setup, and snapshotting a folder. Imported by name (``audit_helpers``), never as
``conftest``, which other test folders also have."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "fixtures"


@dataclass
class Fixtures:
    L: Path
    base: str
    fix: str

    def path(self, name: str) -> str:
        return str(self.L / name)

    @property
    def R(self) -> dict:
        """The standard reference options ("with R")."""
        return {"base": self.base, "fix": [str(self.L / "fix.patch")], "tests": [str(self.L / "test.patch")],
                "fix_commit": self.fix}


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp), "TZ": "UTC", "LC_ALL": "C"}
    env.update(extra)
    return env


def build(L: Path, *scripts: str) -> None:
    body = "\n".join(f"source {SCRIPTS / s}" for s in ("prelude.sh", *scripts))
    home = L.parent / (L.name + "-home")
    home.mkdir(exist_ok=True)
    bindir = home / "bin"  # `python3` in the recipes is this interpreter, so pyc magic numbers match
    bindir.mkdir(exist_ok=True)
    if not (bindir / "python3").exists():
        (bindir / "python3").symlink_to(sys.executable)
    env = clean_env(home, L=str(L), FIXDIR=str(SCRIPTS))
    env["PATH"] = f"{bindir}:{env['PATH']}"
    subprocess.run(["bash", "-e", "-c", body], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def load_ids(L: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (L / "ids.env").read_text().split())


def git(*args: str, cwd: str | Path, env: dict | None = None) -> str:
    """Run real git for a test's own setup or cross-check (never used by the audit itself)."""
    e = clean_env(Path(cwd), GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
                  GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
                  GIT_COMMITTER_EMAIL="t@example.org")
    e.update(env or {})
    return subprocess.run(["git", *args], cwd=cwd, env=e, check=True, capture_output=True, text=True).stdout


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path below root with its type, content hash and mtime (ns): the 'input unchanged' check."""
    import hashlib

    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = None
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
            elif os.path.islink(p):
                digest = os.readlink(p)
            rel = os.path.relpath(p, root)
            out[rel] = (st.st_mode, digest, st.st_mtime_ns)
    return out


def assert_valid_report(report) -> dict:
    """The report's JSON validates against ``overlap/audit/schema.json`` and names no private path."""
    import json
    from importlib.resources import files

    import pytest

    jsonschema = pytest.importorskip("jsonschema")
    text = report.to_json()
    assert "overlap-audit-" not in text and "/scratch" not in text
    data = json.loads(text)
    jsonschema.validate(data, json.loads(files("overlap.audit").joinpath("schema.json").read_text()))
    return data


CLI = "import sys; from overlap.cli import main; sys.argv[0] = 'overlap'; main()"


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str
    seconds: float


def _this_checkout() -> str:
    """PYTHONPATH for a child: this checkout's overlap first (an editable install may be another checkout's)."""
    import overlap

    root = str(Path(overlap.__file__).resolve().parents[1])
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)


def run_cli(*args: str, cwd: str | Path, timeout: float = 20) -> CliRun:
    """``overlap audit ARGS`` in a child process started in ``cwd``; fails the test past ``timeout`` seconds
    (a hostile input must never block the audit)."""
    import time

    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", CLI, "audit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200", "PYTHONPATH": _this_checkout()})
    return CliRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def bounded(fn, seconds: float = 20):
    """``fn()`` in a thread; the test fails when it has not returned within ``seconds`` (a blocked open)."""
    import threading

    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s (blocked on a FIFO or device?)"
    if "error" in box:
        raise box["error"]
    return box["value"]


def copy_fixture(src: Path, dest: Path) -> Path:
    import shutil

    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True)
    else:
        shutil.copy2(src, dest)
    return dest


# The calc task the sweep tests audit: calc.py before the fix, and the fix as a patch.
CALC_FIX_PATCH = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
                  "+    return a + b  # the sum, as the tests ask\n")
CALC_FIXED_TEXT = "def add(a, b):\n    return a + b  # the sum, as the tests ask\n"
CALC_DATES = {"GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z"}


def calc_repo(root: Path) -> Path:
    """A one-commit repository holding calc.py before the fix (skips the test when git is missing)."""
    import shutil

    import pytest

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root.mkdir()
    git("init", "-q", "-b", "main", cwd=root)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "base", cwd=root, env=CALC_DATES)
    return root
