"""The published cleaner and checker rules against the fixtures, rebuilt from the rules themselves
(run with real git on the fixture), next to overlap's verdict, which must match the expected column."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from audit_helpers import clean_env

from overlap.audit import audit

F, P = "flag", "pass"
# fixture: (repo the rules read, bmd, swb5, mimo, count, fsck, overlap); an absent object's ID with no remote
# (swb5, pseudo, graph) gives nothing to read and is graded low: clean
MATRIX = {
    "swb4": ("swb4", F, F, F, P, P, "leak"),
    "swb5": ("swb5", F, P, P, P, P, "clean"),
    "ctl-swb5": ("ctl-swb5", F, P, P, P, P, "clean"),
    "ctl-fresh": ("ctl-fresh", F, P, P, P, P, "clean"),
    "reflog": ("reflog", F, P, P, F, F, "leak"),
    "unreach-pack": ("unreach-pack", P, P, P, F, F, "leak"),
    "unreach-loose": ("unreach-loose", P, P, P, F, F, "leak"),
    "cruft": ("cruft", P, P, P, F, F, "leak"),
    "stash": ("stash", F, F, F, P, P, "leak"),
    "stash-drop": ("stash-drop", F, P, P, F, F, "leak"),
    "packed-tag": ("packed-tag", P, F, F, P, P, "leak"),
    "pseudo": ("pseudo", P, P, P, P, P, "clean"),
    "worktree": ("worktree", P, F, F, P, P, "leak"),
    "alt": ("alt", P, P, P, F, F, "leak"),
    "namespaces": ("namespaces", P, F, F, P, P, "leak"),
    "index": ("index", P, P, P, P, P, "leak"),
    "index-gc": ("index-gc", P, P, P, P, P, "leak"),
    "dangling": ("dangling", F, P, P, P, F, "leak"),
    "backdated": ("backdated", F, P, F, P, P, "leak"),
    "graph": ("graph", P, P, P, P, P, "clean"),
    "replace": ("replace", P, P, P, P, P, "leak"),
    "remote": ("remote", P, P, P, P, P, "suspect"),
    "nested": ("nested", P, P, P, P, P, "leak"),
    "ctl-shallow": ("ctl-shallow", F, P, P, P, P, "clean"),
    "smith": ("smith", F, P, P, P, P, "suspect"),
    "t-validate": ("t-validate", P, P, P, P, P, "leak"),
    "t-index": ("t-index", P, P, P, P, P, "leak"),
    "root": ("root/testbed", P, P, P, P, P, "leak"),
    "img-validate.tar": ("r", P, P, P, P, P, "leak"),
    "img-normalised.tar": ("r", P, P, P, P, P, "leak"),
}


def _git(repo: Path, *args: str, ok=(0,)) -> str:
    env = clean_env(repo, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    res = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    assert res.returncode in ok, (args, res.stderr)
    return res.stdout


def rules(repo: Path, base: str) -> tuple[str, ...]:
    """The five published rules as written, run by hand."""
    logs = repo / ".git/logs/HEAD"
    remotes = repo / ".git/refs/remotes"
    bmd = (logs.is_file() and logs.stat().st_size > 0) or (remotes.is_dir() and any(remotes.iterdir()))
    t = int(_git(repo, "show", "-s", "--format=%ct", base).strip())
    swb5 = bool(_git(repo, "log", "--all", f"--after=@{t + 1}", "--format=%H").strip())
    mimo = bool(_git(repo, "rev-list", "--all", "--not", base).strip())
    types = _git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype)").split()
    count = types.count("commit") != len(_git(repo, "rev-list", "--all").split())
    # the rule reads the listing; git 2.39 also verifies a stale commit-graph and exits non-zero (graph)
    fsck = bool(_git(repo, "fsck", "--no-reflogs", "--unreachable", "--no-progress", ok=range(256)).strip())
    return tuple(F if x else P for x in (bmd, swb5, mimo, count, fsck))


@pytest.mark.parametrize("fixture", sorted(MATRIX))
def test_matrix_row(gitfix, fixture):
    repo, *columns = MATRIX[fixture]
    expected_rules, expected_overlap = tuple(columns[:5]), columns[5]
    if fixture in ("ctl-fresh", "smith"):
        base = "HEAD"
    else:
        base = gitfix.base
    assert rules(gitfix.L / repo, _git(gitfix.L / repo, "rev-parse", base).strip()) == expected_rules
    if fixture == "smith":
        report = audit(gitfix.path(fixture), base="HEAD", fix=[gitfix.path("smith-fix.patch")])
    elif fixture == "root":
        report = audit(gitfix.path(fixture), rootfs=True, **gitfix.R)
    else:
        report = audit(gitfix.path(fixture), **(gitfix.R if fixture != "ctl-fresh" else {**gitfix.R, "base": "HEAD"}))
    assert report.verdict == expected_overlap
