"""reports/demo/ is the demo report exactly as `overlap demo` writes it today.

The test writes the demo report again into a scratch folder and compares the file list and every file's
bytes with the committed reports/demo/. Nothing is left out or normalised: a difference means the committed
report is stale (refresh it with the command in the failure message) or that the output is not reproducible
(a path, time or library version in a file), which the message shows line by line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "reports" / "demo"
REFRESH = "overlap demo --out reports/demo   (run from the repository root; it replaces the folder)"


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def first_difference(name: str, old: bytes, new: bytes) -> str:
    """Where two versions of a file part: the first differing line of a text file, else sizes."""
    try:
        old_lines, new_lines = old.decode("utf-8").splitlines(), new.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return f"{name}: binary, {len(old)} bytes committed, {len(new)} bytes written now"
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return f"{name}:{number}:\n    committed: {a[:300]}\n    now:       {b[:300]}"
    return f"{name}: {len(old_lines)} lines committed, {len(new_lines)} now (one is a prefix of the other)"


def test_reports_demo_is_what_overlap_demo_writes(tmp_path):
    out = tmp_path / "demo"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OVERLAP_OFFLINE": "1", "COLUMNS": "120", "NO_COLOR": "1",
           "OVERLAP_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "overlap.cli", "demo", "--out", str(out)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    committed, written = files_of(COMMITTED), files_of(out)
    problems = []
    if sorted(committed) != sorted(written):
        problems.append(f"files only in reports/demo/: {sorted(set(committed) - set(written))}; "
                        f"files only in the new report: {sorted(set(written) - set(committed))}")
    problems += [first_difference(name, committed[name], written[name])
                 for name in sorted(set(committed) & set(written)) if committed[name] != written[name]]
    assert not problems, ("reports/demo/ differs from what `overlap demo` writes now. Refresh it with\n    "
                          + REFRESH + "\nDifferences:\n" + "\n".join(problems))


def test_reports_demo_is_small():
    size = sum(p.stat().st_size for p in COMMITTED.rglob("*") if p.is_file())
    assert 0 < size < 2_000_000, f"reports/demo/ holds {size} bytes"
