"""G8 and the git-folder rewriting inside an image: a linked worktree whose main repository is `/testbed` and whose
checkout is `/work/wt` (the `worktree` fixture of fixtures/git.sh, moved into one image layer). Its `gitdir` and
`commondir` files name image paths: they are resolved inside the image and rewritten into the private
copy, and the host path of the same name is never read."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from audit_helpers import assert_valid_report

from overlap.audit import audit

MKIMAGE = Path(__file__).parent / "fixtures/mkimage.py"


def _image(gitfix, tmp_path: Path, *, gitdir: str = "/work/wt/.git", commondir: str | None = None) -> str:
    layer = tmp_path / "l0"
    shutil.copytree(gitfix.L / "worktree", layer / "testbed", symlinks=True)
    shutil.copytree(gitfix.L / "worktree-wt", layer / "work/wt", symlinks=True)
    wt_git = layer / "testbed/.git/worktrees/worktree-wt"
    (wt_git / "gitdir").write_text(gitdir + "\n")
    if commondir is not None:
        (wt_git / "commondir").write_text(commondir + "\n")
    (layer / "work/wt/.git").write_text("gitdir: /testbed/.git/worktrees/worktree-wt\n")
    out = tmp_path / "wt.tar"
    subprocess.run([sys.executable, str(MKIMAGE), str(out), "docker", "wt:1", "[]", str(layer), "clone"], check=True)
    return str(out)


@pytest.fixture
def wt_image(gitfix, tmp_path) -> str:
    return _image(gitfix, tmp_path)


def test_linked_worktree_of_the_image_repo(gitfix, wt_image):
    report = audit(wt_image, repo_path="/testbed", **gitfix.R)
    t = report.targets[0]
    by = {f.key: f for f in t.findings}
    g8 = by["G8:worktrees/worktree-wt"]
    assert g8.severity == "critical"
    assert (g8.evidence["checkout"], g8.evidence["path_exists"]) == ("/work/wt", True)  # found in the image
    assert "/work/wt/src/calc.py" in str(by["F1:src/calc.py"].evidence)  # the checkout is scanned for F
    assert by["G6:worktree"].severity == "critical" and t.complete
    assert_valid_report(report)


def test_worktree_gitdir_naming_a_host_path_is_not_looked_up_on_the_host(gitfix, tmp_path):
    host_checkout = gitfix.L / "worktree-wt"  # exists on this machine, not in the image
    assert host_checkout.is_dir()
    t = audit(_image(gitfix, tmp_path, gitdir=f"{host_checkout}/.git"), repo_path="/testbed", **gitfix.R).targets[0]
    g8 = next(f for f in t.findings if f.check == "G8")
    assert g8.evidence["path_exists"] is False


def _keys(report) -> dict[str, str]:
    return {f.key: f.severity for f in report.targets[0].findings}


def test_auditing_the_linked_checkout_itself(gitfix, tmp_path, wt_image):
    """`--repo-path /work/wt`: git reads the worktree's own folder and, through `commondir`, the main
    store. A relative and an absolute (image) `commondir` give the same report."""
    relative = audit(wt_image, repo_path="/work/wt", **gitfix.R)
    assert relative.targets[0].complete and relative.verdict == "leak"
    assert {"G13:/testbed/.git", "F1:src/calc.py", "F2:tests/test_calc.py"} <= set(_keys(relative))
    assert relative.targets[0].base["head"] == gitfix.fix  # the checkout's HEAD is the fix commit
    absolute = audit(_image(gitfix, tmp_path / "abs", commondir="/testbed/.git"), repo_path="/work/wt", **gitfix.R)
    assert _keys(absolute) == _keys(relative) and absolute.targets[0].complete


def test_commondir_naming_a_host_repository_is_never_read(gitfix, tmp_path):
    host_store = gitfix.L / "swb4/.git"  # a leaky repo on this machine; the image has no such path
    report = audit(_image(gitfix, tmp_path, commondir=str(host_store)), repo_path="/work/wt", **gitfix.R)
    t = report.targets[0]
    g1 = next(c for c in t.checks if c.id == "G1")
    assert g1.status == "incomplete" and "common git folder is not in the input" in g1.reason
    assert not any(f.key.startswith(("G1:", "G2:", "G4:")) for f in t.findings)  # nothing of swb4's store
    assert report.verdict == "incomplete" and report.exit_code == 2  # never `clean` with the store unread
    assert {c.status for c in t.checks if c.route in ("times", "leftovers") and c.id != "T3"} == {"ran"}
    mentions = [ln for ln in report.to_json().splitlines() if str(host_store) in ln]
    assert mentions and all("common git folder is not in the input" in ln for ln in mentions)  # named, not read
