"""Hostile entries in the audited tree: the audit reads only regular files.

A FIFO, a device or a symlink out of the tree inside a git folder is never opened, by the audit or by git
(which would block until the 300 s timeout and then report a false "base not in the store"): the checks that
need git become ``incomplete`` naming the entry, and every run ends within seconds. A symlinked fix file or
fixed-content copy is reported as what it is, never `clean`. An input with no repository is exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from audit_helpers import assert_valid_report, bounded, copy_fixture, run_cli

from overlap.audit import audit
from overlap.errors import InputError

FAST = {"git_timeout": "15"}  # should a regression reach git, it still ends (the assertions then fail)
MKIMAGE = Path(__file__).parent / "fixtures" / "mkimage.py"


def _replace(path: Path, make) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)


def fifo(path: Path) -> None:
    os.mkfifo(path)


def link_to(target: str):
    return lambda path: path.symlink_to(target)


def _incomplete_reasons(report) -> dict[str, str]:
    return {c.id: c.reason for t in report.targets for c in t.incomplete_checks()}


GIT_CHECKS = {f"G{i}" for i in range(1, 15)} | {"F1", "F2"}


# ------------------------------------------------------------------------------------------ git folders
def test_fifo_packed_refs_never_blocks(gitfix, tmp_path):
    """The issue's example, through the real command: exit 2 at once, the FIFO named, no false finding."""
    repo = copy_fixture(gitfix.L / "swb4", tmp_path / "swb4")
    _replace(repo / ".git/packed-refs", fifo)
    res = run_cli(str(repo), "--base", gitfix.base, "--fix", gitfix.path("fix.patch"), "--tests",
                  gitfix.path("test.patch"), "--format", "json", cwd=tmp_path)
    assert res.seconds < 20  # was 300 s per git call before, then "suspect"
    assert res.code == 2, res.stderr
    data = json.loads(res.stdout)
    assert data["verdict"] == "incomplete" and not data["complete"]
    checks = {c["id"]: c for c in data["targets"][0]["checks"]}
    assert {cid for cid, c in checks.items() if c["status"] == "incomplete"} == GIT_CHECKS
    assert ".git/packed-refs: a FIFO (never opened)" in checks["G1"]["reason"]
    assert checks["G1"]["reason"].startswith("git not run:")
    keys = {f["key"] for f in data["targets"][0]["findings"]}
    assert "G14:base_missing" not in keys  # the false "base not in the store" is gone
    assert keys == {"G15:format"}
    g15 = data["targets"][0]["findings"][0]
    assert g15["where"] == ".git/packed-refs" and g15["reproduce"]["command"] == "ls -l .git/packed-refs"
    assert "audit incomplete" in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("rel, make, needle", [
    ("packed-refs", link_to("/etc/passwd"), "packed-refs: a symlink to /etc/passwd, outside the audited tree"),
    ("packed-refs", link_to("/dev/zero"), "packed-refs: a symlink to /dev/zero, outside the audited tree"),
    ("config", fifo, ".git/config: a FIFO"),
    ("refs/heads/evil", fifo, ".git/refs/heads/evil: a FIFO"),
    ("refs/tags/dev", link_to("/dev/zero"), ".git/refs/tags/dev: a symlink to /dev/zero"),
    ("logs/HEAD", fifo, ".git/logs/HEAD: a FIFO"),
    ("objects/info/alternates", fifo, ".git/objects/info/alternates: a FIFO"),
    ("objects/info/commit-graph", fifo, ".git/objects/info/commit-graph: a FIFO"),
    ("objects/ab/" + "c" * 38, fifo, ".git/objects/ab/cccc"),
    ("shallow", link_to("../../../../../../dev/zero"), ".git/shallow: a symlink to ../../../../../../dev/zero"),
    ("FETCH_HEAD", fifo, ".git/FETCH_HEAD: a FIFO"),
])
def test_hostile_git_entry_makes_git_checks_incomplete(gitfix, tmp_path, rel, make, needle):
    repo = copy_fixture(gitfix.L / "swb4", tmp_path / "swb4")
    _replace(repo / ".git" / rel, make)
    report = bounded(lambda: audit(str(repo), limits=FAST, **gitfix.R), 20)
    assert report.verdict == "incomplete" and report.exit_code == 2
    reasons = _incomplete_reasons(report)
    assert GIT_CHECKS <= set(reasons)
    assert all(needle in reasons[c] for c in GIT_CHECKS), reasons["G1"]
    assert "G14:base_missing" not in {f.key for t in report.targets for f in t.findings}
    assert_valid_report(report)


def test_symlink_inside_the_git_folder_is_followed(gitfix, tmp_path):
    """A link that stays in the tree and leads to a regular file is what git itself writes (old symref HEAD):
    not refused."""
    repo = copy_fixture(gitfix.L / "swb4", tmp_path / "swb4")
    os.rename(repo / ".git/packed-refs", repo / ".git/packed-refs.real")
    (repo / ".git/packed-refs").symlink_to("packed-refs.real")
    (repo / ".git/hooks/pre-commit").symlink_to("/dev/zero")  # hooks are never read
    report = bounded(lambda: audit(str(repo), limits=FAST, **gitfix.R))
    assert report.verdict == "leak" and not _incomplete_reasons(report)
    assert "G1:refs/tags" in {f.key for t in report.targets for f in t.findings}  # the packed tag is read


def test_fifo_index_makes_t2_incomplete(gitfix, tmp_path):
    repo = copy_fixture(gitfix.L / "t-index", tmp_path / "t-index")
    _replace(repo / ".git/index", fifo)
    report = bounded(lambda: audit(str(repo), limits=FAST, **gitfix.R))
    reasons = _incomplete_reasons(report)
    assert ".git/index: a FIFO" in reasons["T2"] and ".git/index: a FIFO" in reasons["G7"]
    assert report.verdict == "incomplete" and report.exit_code == 2


def test_fifo_in_a_nested_store(gitfix, tmp_path):
    repo = copy_fixture(gitfix.L / "nested", tmp_path / "nested")
    _replace(repo / "vendor/up.git/packed-refs", fifo)
    report = bounded(lambda: audit(str(repo), limits=FAST, **gitfix.R))
    g13 = next(c for t in report.targets for c in t.checks if c.id == "G13")
    assert g13.status == "incomplete" and g13.findings == 1, g13
    assert g13.reason.startswith("nested store vendor/up.git: git not run:")
    assert "vendor/up.git/packed-refs: a FIFO (never opened)" in g13.reason
    f1 = next(c for t in report.targets for c in t.checks if c.id == "F1")  # the fixed blob sits in that store
    assert f1.status == "incomplete" and f1.reason.startswith("nested store vendor/up.git not read (git not run:")
    assert report.verdict == "incomplete" and report.exit_code == 2


def test_fifo_in_a_root_filesystem_git_folder(gitfix, tmp_path):
    root = copy_fixture(gitfix.L / "ctl-root", tmp_path / "rootfs")
    _replace(root / "testbed/.git/packed-refs", fifo)
    _replace(root / "testbed/.git/refs/heads/x", link_to("/etc/passwd"))  # the host's, never the image's
    report = bounded(lambda: audit(str(root), rootfs=True, limits=FAST, **gitfix.R))
    reasons = _incomplete_reasons(report)
    assert "/testbed/.git/packed-refs: a FIFO" in reasons["G1"]
    assert "/testbed/.git/refs/heads/x: a symlink to /etc/passwd, outside the audited tree" in reasons["G1"]
    assert report.verdict == "incomplete"


def _image(tmp_path: Path, layer: Path, fmt: str = "docker") -> Path:
    out = tmp_path / f"img-{fmt}.tar"
    subprocess.run([sys.executable, str(MKIMAGE), str(out), fmt, "t:1", "[]", str(layer), "build"], check=True)
    return out


def test_fifo_in_an_image_git_folder(gitfix, tmp_path):
    layer = tmp_path / "l0"
    copy_fixture(gitfix.L / "swb4", layer / "testbed")
    _replace(layer / "testbed/.git/packed-refs", fifo)
    report = bounded(lambda: audit(str(_image(tmp_path, layer)), limits=FAST, **gitfix.R))
    reasons = _incomplete_reasons(report)
    assert "/testbed/.git/packed-refs: a FIFO" in reasons["G1"] and "never materialised" in reasons["G1"]
    assert report.verdict == "incomplete" and report.exit_code == 2
    assert_valid_report(report)


# ------------------------------------------------------------------------------------------ worktree
def test_fifo_and_device_links_in_the_worktree_are_never_opened(gitfix, tmp_path):
    repo = copy_fixture(gitfix.L / "ctl-fresh", tmp_path / "ctl-fresh")
    os.mkfifo(repo / "pipe.patch")
    os.mkfifo(repo / "src" / "calc.cpython-311.pyc")
    (repo / "zero.log").symlink_to("/dev/zero")
    res = run_cli(str(repo), "--base", "HEAD", "--fix", gitfix.path("fix.patch"), "--format", "json", cwd=tmp_path)
    assert res.seconds < 20 and res.code == 0, res.stderr
    data = json.loads(res.stdout)
    l2 = [f for f in data["targets"][0]["findings"] if f["check"] == "L2"]
    assert [f["where"] for f in l2] == ["zero.log"] and l2[0]["evidence"]["target_read"] is False
    assert data["verdict"] == "suspect"


def test_symlinked_fix_file_out_of_the_repo_is_never_clean(gitfix, tmp_path):
    """src/calc.py (a reference path) replaced by a link to a fixed copy outside: the target is never read,
    F1 cannot say what the agent sees there (incomplete), L2 reports the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "calc.py").write_bytes((gitfix.L / "calc_fixed.py").read_bytes())
    repo = copy_fixture(gitfix.L / "ctl-fresh", tmp_path / "ctl-fresh")
    _replace(repo / "src/calc.py", link_to(str(outside / "calc.py")))
    res = run_cli(str(repo), "--base", "HEAD", "--fix", gitfix.path("fix.patch"), "--format", "json", cwd=tmp_path)
    assert res.seconds < 20 and res.code == 2, res.stderr
    data = json.loads(res.stdout)
    assert data["verdict"] == "incomplete"
    f1 = next(c for c in data["targets"][0]["checks"] if c["id"] == "F1")
    assert f1["status"] == "incomplete"
    assert f1["reason"] == (f"src/calc.py is a symlink to {outside / 'calc.py'}, outside the audited tree "
                            "(not followed, its target was not read)")
    l2 = next(f for f in data["targets"][0]["findings"] if f["key"] == "L2:src/calc.py")
    assert l2["evidence"] == {"symlink": "src/calc.py", "target": str(outside / "calc.py"), "target_read": False,
                              "reference_path": True}
    assert "F1" in res.stderr


def test_symlinked_fixed_copy_out_of_the_repo_is_reported(gitfix, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "calc.py").write_bytes((gitfix.L / "calc_fixed.py").read_bytes())
    repo = copy_fixture(gitfix.L / "ctl-fresh", tmp_path / "ctl-fresh")
    (repo / "notes").mkdir()
    (repo / "notes/answer.py").symlink_to("../../outside/calc.py")
    report = bounded(lambda: audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]))
    assert report.verdict == "suspect" and report.verdict != "clean"
    l2 = next(f for t in report.targets for f in t.findings if f.key == "L2:notes/answer.py")
    assert l2.severity == "medium" and "its target was not read" in l2.title
    assert l2.evidence["target"] == "../../outside/calc.py"
    assert_valid_report(report)


def test_symlinked_fix_file_inside_the_repo_is_read(gitfix, tmp_path):
    """A link that stays in the repository is resolved there: the fixed content it leads to is found."""
    repo = copy_fixture(gitfix.L / "ctl-fresh", tmp_path / "ctl-fresh")
    (repo / "stash").mkdir()
    (repo / "stash/calc.py").write_bytes((gitfix.L / "calc_fixed.py").read_bytes())
    _replace(repo / "src/calc.py", link_to("../stash/calc.py"))
    report = bounded(lambda: audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]))
    f1 = next(f for t in report.targets for f in t.findings if f.key == "F1:src/calc.py")
    assert f1.severity == "critical" and report.verdict == "leak"
    places = {(p["place"], p["path"]) for p in f1.evidence["items"]}
    assert ("worktree", "src/calc.py") in places and ("file", "stash/calc.py") in places
    assert_valid_report(report)


def test_user_files_given_as_symlink_or_fifo(gitfix, tmp_path):
    """--fix is the user's own file: a symlink to it is followed; a FIFO is refused at once, with one line."""
    (tmp_path / "fix.patch").symlink_to(gitfix.L / "fix.patch")
    report = audit(gitfix.path("ctl-fresh"), base="HEAD", fix=[str(tmp_path / "fix.patch")])
    assert report.verdict == "clean" and report.to_dict()["inputs"]["fix"][0]["paths"] == ["src/calc.py"]
    os.mkfifo(tmp_path / "pipe.patch")
    res = run_cli(gitfix.path("ctl-fresh"), "--fix", str(tmp_path / "pipe.patch"), cwd=tmp_path)
    assert res.seconds < 20 and res.code == 2 and res.stdout == ""
    line, = res.stderr.strip().splitlines()  # one line; its "overlap: ..." prefix belongs to overlap/cli/app.py
    assert line.endswith(f"--fix {tmp_path / 'pipe.patch'}: a FIFO, not a regular file (save it to a file first)")


# ------------------------------------------------------------------------------------------ no repository
def test_image_without_repository_is_audited_without_git(gitfix, tmp_path):
    """No repository anywhere: a verdict from the checks that need no git, the git route `not_applicable`."""
    layer = tmp_path / "l0"
    (layer / "etc").mkdir(parents=True)
    (layer / "etc/hostname").write_text("box\n")
    for fmt in ("docker", "oci"):
        img = _image(tmp_path, layer, fmt)
        res = run_cli(str(img), "--format", "json", cwd=tmp_path)
        assert res.seconds < 20 and res.code == 0, res.stderr
        target, = json.loads(res.stdout)["targets"]
        git_checks = [c for c in target["checks"] if c["route"] == "git"]
        assert git_checks and all(c["status"] == "not_applicable" and c["reason"] == "no repository"
                                  for c in git_checks)
        assert target["verdict"] == "clean" and target["base"]["repository"] is False


def test_rootfs_tar_and_folder_without_repository_are_audited(tmp_path):
    import tarfile

    root = tmp_path / "rootfs"
    (root / "etc").mkdir(parents=True)
    (root / "etc/hostname").write_text("box\n")
    with tarfile.open(tmp_path / "export.tar", "w") as t:
        t.add(root / "etc", arcname="etc")
    for args in ([str(tmp_path / "export.tar")], [str(root), "--rootfs"], ["rootfs", "--rootfs"]):
        res = run_cli(*args, "--format", "json", cwd=tmp_path)
        assert res.code == 0, res.stderr
        assert json.loads(res.stdout)["verdict"] == "clean"


def test_plain_folder_without_repository_is_audited(tmp_path):
    (tmp_path / "empty" / "src").mkdir(parents=True)
    report = audit(str(tmp_path / "empty"))
    target, = report.targets
    assert target.kind == "folder" and target.verdict == "clean"
    assert {c.reason for c in target.checks if c.id.startswith("G")} == {"no repository"}


def test_head_fifo_is_no_repository(gitfix, tmp_path):
    """A HEAD that is a FIFO makes the folder no git folder at all (HEAD is checked with stat, never opened)."""
    repo = copy_fixture(gitfix.L / "swb4", tmp_path / "swb4")
    _replace(repo / ".git/HEAD", fifo)
    with pytest.raises(InputError, match="no git repository found"):
        bounded(lambda: audit(str(repo), limits=FAST))


@pytest.mark.parametrize("make, what", [(fifo, "a FIFO"), (link_to("/dev/zero"), "a character device"),
                                        (link_to("/no/such/thing"), "a dangling symlink")])
def test_path_that_is_no_folder_or_file(tmp_path, make, what):
    """PATH itself a FIFO, a device or a dangling link: refused with one line, never opened."""
    _replace(tmp_path / "task.tar", make)
    res = run_cli("task.tar", cwd=tmp_path)
    assert res.seconds < 20 and res.code == 2 and res.stdout == ""
    line, = res.stderr.strip().splitlines()
    assert line.endswith(f"task.tar: {what}, not a folder or a tar archive (give a repository folder or an image tar)")
