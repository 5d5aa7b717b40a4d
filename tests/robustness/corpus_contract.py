"""The robustness corpus's shared parts: builders of small inputs in the real schemas (as the datasets'
declarations name them), the runners (typer's CliRunner in-process, or `python -m overlap.cli` in a
subprocess with a timeout) and ONE checker of the command-line contract (docs/architecture.md, Promises):

- exit code 0, 1 or 2, and 1 only when `--fail-on` was given;
- no `Traceback` on stderr or stdout (in-process, an exception escaping the app counts as one);
- on exit 2, exactly one stderr line, starting `overlap: error:`, and never the app's "internal error …
  please report it" line (an exception nobody expected is a bug, whatever the exit code);
- no file created, changed or removed outside `--out` (the whole work folder is snapshotted before and after,
  inputs included, so inputs stay byte-identical);
- no partial output: on exit 2 the `--out` folder is as it was (missing or unchanged), and no `.*.tmp`
  temp file or folder is left anywhere.

The test modules (`test_corpus_*.py`) import this module by name, as `tests/swe` modules import
`swe_fixtures`; it defines no pytest fixtures.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
for _folder in (_TESTS, _TESTS / "swe"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import fixtures  # noqa: E402  (tests/fixtures.py: the cyber datasets)
import swe_fixtures  # noqa: E402  (tests/swe/swe_fixtures.py: the SWE datasets)

FAST = ["--pool", "none", "--no-evidence", "--text", "none"]
SUBPROCESS_TIMEOUT = 60


# --- snapshots ----------------------------------------------------------------------------------------


def _entry(path: Path) -> tuple:
    """What a path is, without ever opening anything but a regular file (never follows a link, never
    reads a FIFO or a device)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return ("dir",)
    if stat.S_ISREG(info.st_mode):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return ("file", info.st_size, digest.hexdigest())
    return ("special", stat.S_IFMT(info.st_mode))


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Every entry under `roots` (absolute path → kind and content hash)."""
    out: dict[str, tuple] = {}
    for root in roots:
        root = Path(root).absolute()
        if not os.path.lexists(root):
            continue
        out[str(root)] = _entry(root)
        for folder, dirs, files in os.walk(root, followlinks=False):
            for name in dirs + files:
                path = Path(folder) / name
                out[str(path)] = _entry(path)
    return out


def _under(path: str, folder: Path | None) -> bool:
    if folder is None:
        return False
    folder_text = str(folder)
    return path == folder_text or path.startswith(folder_text.rstrip(os.sep) + os.sep)


# --- runs ---------------------------------------------------------------------------------------------


@dataclass
class Run:
    case: str
    args: list[str]
    code: int
    stdout: str
    stderr: str
    out: Path | None
    before: dict[str, tuple]
    after: dict[str, tuple]
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def first_line(self) -> str:
        lines = self.stderr.strip().splitlines()
        return lines[0] if lines else ""


def out_of(args: list[str], cwd: Path) -> Path | None:
    """The output path a command line names (`--out`, `-o`, audit's `--output`), absolute."""
    for flag in ("--out", "-o", "--output"):
        if flag in args:
            index = args.index(flag)
            if index + 1 < len(args):
                value = Path(args[index + 1])
                return Path(os.path.normpath(value if value.is_absolute() else cwd / value))
        for arg in args:
            if arg.startswith(flag + "="):
                value = Path(arg.split("=", 1)[1])
                return Path(os.path.normpath(value if value.is_absolute() else cwd / value))
    return None


def invoke(case: str, args: list, *, root: Path, out: Path | None = None, watch: tuple = (),
           subprocess_run: bool = False, timeout: float = SUBPROCESS_TIMEOUT, stdin: str | None = None) -> Run:
    """Run `overlap ARGS` with the current directory = `root`, snapshotting `root` (and `watch`) around it.

    `out` overrides the output folder read from the arguments (for a command's default --out)."""
    args = [str(a) for a in args]
    root = Path(root).absolute()
    out = Path(os.path.normpath(out)) if out is not None else out_of(args, root)
    before = snapshot(root, *watch)
    timed_out = False
    if subprocess_run:
        # the checkout under test, not whichever copy is installed (a second worktree runs its own code)
        path = os.pathsep.join(p for p in (str(_TESTS.parent), os.environ.get("PYTHONPATH", "")) if p)
        env = dict(os.environ, HF_HUB_OFFLINE="1", OVERLAP_OFFLINE="1", PYTHONUNBUFFERED="1", PYTHONPATH=path)
        try:
            proc = subprocess.run([sys.executable, "-m", "overlap.cli", *args], cwd=root, env=env,
                                  capture_output=True, text=True, errors="replace", timeout=timeout,
                                  input=stdin if stdin is not None else "")
            code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            timed_out = True
            code = -9
            stdout = (exc.stdout or b"").decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (
                exc.stdout or "")
            stderr = (exc.stderr or b"").decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (
                exc.stderr or "")
    else:
        from typer.testing import CliRunner

        from overlap.cli import app

        previous = os.getcwd()
        os.chdir(root)
        try:
            result = CliRunner().invoke(app, args, input=stdin)
        finally:
            os.chdir(previous)
        code, stdout, stderr = result.exit_code, result.stdout, result.stderr
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            exc = result.exception
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/overlap/" in f.filename]
            where = f"{frames[-1].filename.split('/overlap/')[-1]}:{frames[-1].lineno}" if frames else "?"
            stderr += (f"Traceback (escaped the app in-process): {type(exc).__name__}: {str(exc)[:200]} "
                       f"[last overlap frame: overlap/{where}]\n")
    after = snapshot(root, *watch)
    return Run(case, args, code, stdout, stderr, out, before, after, timed_out)


# --- the one checker ----------------------------------------------------------------------------------


def contract_problems(run: Run, *, bug_injected: bool = False) -> list[str]:
    """Every way `run` breaks the command-line contract (empty when it keeps it). `bug_injected`: the test
    planted an exception on purpose, so the app's "internal error" line is the answer it checks."""
    problems = []
    if run.timed_out:
        return ["did not finish within the timeout (hung)"]
    fail_on = any(a == "--fail-on" or a.startswith("--fail-on=") for a in run.args)
    if run.code not in (0, 1, 2):
        problems.append(f"exit code {run.code} is not 0, 1 or 2")
    if run.code == 1 and not fail_on:
        problems.append("exit 1 without --fail-on (1 means 'overlap at or above --fail-on')")
    if "Traceback" in run.stderr or "Traceback" in run.stdout:
        problems.append("a traceback was printed")
    # The app's line for an exception nobody expected: a bug, not an answer.
    if "internal error" in run.stderr and not bug_injected:
        problems.append("an internal error (a bug) was reported instead of a line saying what to do")
    if run.code == 2:
        lines = run.stderr.strip().splitlines()
        if len(lines) != 1:
            problems.append(f"exit 2 with {len(lines)} stderr lines (one expected)")
        if not lines or not lines[0].startswith("overlap: error:"):
            problems.append("exit 2 without a line starting 'overlap: error:'")
    changed = sorted(p for p in set(run.before) | set(run.after) if run.before.get(p) != run.after.get(p))
    # Creating the missing parent folders of a new --out is part of writing it.
    parents = {str(p) for p in run.out.parents} if run.out is not None else set()
    outside = [p for p in changed if not _under(p, run.out)
               and not (p in parents and p not in run.before and run.after.get(p) == ("dir",))]
    if outside:
        problems.append(f"changed outside --out: {outside[:5]}")
    leftovers = [p for p in run.after if p not in run.before and Path(p).name.startswith(".")
                 and Path(p).name.endswith(".tmp")]
    if leftovers:
        problems.append(f"temp files left: {leftovers[:5]}")
    if run.code == 2 and run.out is not None:
        inside = [p for p in changed if _under(p, run.out)]
        if inside:
            problems.append(f"exit 2 but --out changed (partial output): {inside[:5]}")
    return problems


def check_contract(run: Run, *, expect: int | set[int] | None = None, bug_injected: bool = False) -> Run:
    """Assert the command-line contract on one run (and, when given, its expected exit code)."""
    problems = contract_problems(run, bug_injected=bug_injected)
    if expect is not None:
        wanted = {expect} if isinstance(expect, int) else set(expect)
        if run.code not in wanted:
            problems.append(f"exit {run.code}, expected {sorted(wanted)}")
    if problems:
        detail = "\n".join(run.stderr.strip().splitlines()[-6:])
        raise AssertionError(
            f"CONTRACT [{run.case}] overlap {' '.join(_short(a) for a in run.args)}\n"
            f"  problems: {'; '.join(problems)}\n  first stderr line: {run.first_line!r}\n"
            f"  stderr tail:\n{detail}")
    return run


def _short(arg: str) -> str:
    return arg if len(arg) < 80 else arg[:60] + "…"


def run_checked(case: str, args: list, *, root: Path, expect=None, **kwargs) -> Run:
    return check_contract(invoke(case, args, root=root, **kwargs), expect=expect)


# --- inputs -------------------------------------------------------------------------------------------


def cyber_data(root: Path) -> dict[str, Path]:
    """MiMo cyber, CyberGym, SEC-bench and the ARVO mapping as local folders (tests/fixtures.py)."""
    return fixtures.write_all(Path(root))


def swe_data(root: Path) -> dict[str, Path]:
    """Every SWE dataset as local folders (tests/swe/swe_fixtures.py), SWE-rebench-V2-PRs included."""
    root = Path(root)
    paths = swe_fixtures.write_all(root)
    paths["swe-rebench-v2-prs"] = swe_fixtures.write_prs(root)
    return paths


def data_args(paths: dict[str, Path], *names: str) -> list[str]:
    out = []
    for name, path in paths.items():
        if not names or name in names:
            out += ["--data", f"{name}={path}"]
    return out


# Where each adapter's main file sits in its folder, and a command line that reads it.
ADAPTER_FILES: dict[str, str] = {
    "mimo-cyber": "cyber.parquet",
    "cybergym": "tasks.json",
    "sec-bench": "data/eval-oss.jsonl",
    "arvo": "arvo/oss_fuzz_mappings.csv",
    "swe-rebench-v2": "data/train-00000-of-00001.parquet",
    "swe-rebench-v2-prs": "data/train-00000-of-00003.parquet",
    "multi-swe-bench": "rust/clap-rs__clap_dataset.jsonl",
    "swe-polybench": "test.csv",
    "swe-bench": "data/test-00000-of-00001.parquet",
    "swe-bench-pro": "data/default/test-00000-of-00001.parquet",
}
CYBER = ("mimo-cyber", "cybergym", "sec-bench", "arvo")


def compare_args_for(name: str) -> list[str]:
    """A compare (train, bench…) that reads adapter `name`."""
    if name in CYBER:
        bench = "sec-bench" if name == "sec-bench" else "cybergym"
        return ["compare", "mimo-cyber", bench]
    if name in ("swe-rebench-v2", "swe-rebench-v2-prs"):
        return ["compare", name, "swe-bench-multilingual"]
    return ["compare", "swe-rebench-v2", name]


def all_data(root: Path, name: str) -> dict[str, Path]:
    return cyber_data(root) if name in CYBER else swe_data(root)
