"""Small repositories for the batch-audit tests (``overlap audit --targets`` / ``--benchmark``), built with real
git: one whose fix is kept as an unreachable commit (a leak), one with a single commit (clean)."""

from __future__ import annotations

import json
from pathlib import Path

from audit_helpers import git

DATES = {"GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
BUGGY = "def add(a, b):\n    return a - b  # the bug sits in this line of the calculator\n"
FIXED = "def add(a, b):\n    return a + b  # the bug sat in this line, now fixed for good\n"


def repo(root: Path, leak: bool) -> tuple[str, str]:
    """A repository at ``root``: (base commit, fix patch). With ``leak`` the fix commit stays in the store,
    unreachable (branch reset, reflog and ORIG_HEAD gone)."""
    root.mkdir(parents=True)
    git("init", "-q", "-b", "main", ".", cwd=root)
    for i in range(12):
        (root / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    (root / "calc.py").write_text(BUGGY)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "base", cwd=root, env=DATES)
    base = git("rev-parse", "HEAD", cwd=root).strip()
    (root / "calc.py").write_text(FIXED)
    patch = git("diff", cwd=root)
    if leak:
        git("commit", "-qam", "fix", cwd=root, env=DATES)
        git("reset", "-q", "--hard", base, cwd=root)
        git("reflog", "expire", "--expire=now", "--all", cwd=root)
        (root / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    else:
        git("checkout", "-q", "--", "calc.py", cwd=root)
    return base, patch


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
