"""Repositories nobody put in a fixture: history spliced by a graft, an alternates line that leads back to
the store itself, the fix left as text in the git folder's own files, an instance record with fields of the
wrong type. Each repository is a tiny one built here with real git."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from audit_helpers import git, run_cli

from overlap.audit import audit
from overlap.errors import InputError

BASE_TEXT = "def add(a, b):\n    return a - b\n"
FIXED_TEXT = "def add(a, b):\n    return a + b  # the sum, as the tests ask\n"
FIX_PATCH = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
             "+    return a + b  # the sum, as the tests ask\n")
DATES = {"GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z"}


@pytest.fixture(autouse=True)
def _git_needed():
    if shutil.which("git") is None:
        pytest.skip("git is not installed")


def base_repo(tmp_path: Path, name: str = "repo") -> tuple[Path, Path]:
    """A one-commit repository (calc.py before the fix, a few other files) and the fix as a patch file."""
    repo = tmp_path / name
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "calc.py").write_text(BASE_TEXT)
    for i in range(12):
        (repo / f"f{i}.txt").write_text(f"x{i}\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo, env=DATES)
    patch = tmp_path / f"{name}.patch"
    patch.write_text(FIX_PATCH)
    return repo, patch


def unreachable_fix(repo: Path) -> str:
    """The fix committed, then reset away with every trace but the objects themselves removed."""
    (repo / "calc.py").write_text(FIXED_TEXT)
    git("commit", "-qam", "fix", cwd=repo, env={**DATES, "GIT_COMMITTER_DATE": "2024-01-03T03:04:05Z"})
    fix = git("rev-parse", "HEAD", cwd=repo).strip()
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    git("reflog", "expire", "--expire=now", "--all", cwd=repo)
    for name in ("ORIG_HEAD", "COMMIT_EDITMSG"):
        (repo / ".git" / name).unlink(missing_ok=True)
    return fix


def codes(report) -> set[tuple[str, str]]:
    return {(f.severity, f.check) for t in report.targets for f in t.findings}


# ------------------------------------------------------------------------------------------------ grafts
def test_graft_that_splices_the_fix_into_base_history_is_a_leak(tmp_path):
    """info/grafts makes the unreachable fix commit a parent of B: git (and the agent's `git log`) then
    shows it as history. The audit reads history without grafts, so the fix stays outside base history and
    the graft line is graded by what it makes reachable (was: the fix counted as base history, `suspect`)."""
    repo, patch = base_repo(tmp_path)
    fix = unreachable_fix(repo)
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{head} {fix}\n")
    report = audit(str(repo), fix=[str(patch)])
    assert report.verdict == "leak"
    assert ("critical", "G11") in codes(report) and ("critical", "F1") in codes(report)
    graft = next(f for t in report.targets for f in t.findings if f.check == "G11")
    assert graft.evidence["items"][0]["parents"] == [fix]


def test_grafts_are_off_without_a_word_on_stderr(tmp_path):
    """The audit's git reads no graft file and writes nothing about it: a hint on stderr would stand in for
    git's real error in every `incomplete` reason (an empty graft file makes git print one on each walk)."""
    from overlap.audit.git.cmd import GitRunner

    repo, _ = base_repo(tmp_path)
    fix = unreachable_fix(repo)
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{head} {fix}\n")
    home = tmp_path / "home"
    home.mkdir()
    res = GitRunner(home).run(["rev-list", head], git_dir=repo / ".git")
    assert res.stdout.decode().split() == [head] and res.stderr == ""
    bad = GitRunner(home).run(["rev-list", "1" * 40], git_dir=repo / ".git", ok_codes=(128,))
    assert bad.stderr.startswith("fatal: bad object"), bad.stderr


def test_graft_to_base_history_stays_medium(tmp_path):
    """A graft whose parents are base history hides nothing: it stays a medium hygiene finding."""
    repo, patch = base_repo(tmp_path)
    (repo / "g.txt").write_text("second\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "second", cwd=repo, env=DATES)
    head, parent = git("rev-parse", "HEAD", "HEAD~1", cwd=repo).split()
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{head} {parent}\n")
    report = audit(str(repo), fix=[str(patch)])
    assert report.verdict == "suspect"
    assert {c for c in codes(report) if c[1] == "G11"} == {("medium", "G11")}


# ------------------------------------------------------------------------------------------- alternates
def test_alternates_line_back_to_the_store_itself_is_listed_once(tmp_path):
    """`../../.git/objects` from `.git/objects` is the store itself: one G9 line, not one per hop down to the
    depth limit (each hop spelled the same folder with a longer path)."""
    repo, patch = base_repo(tmp_path)
    (repo / ".git/objects/info/alternates").write_text("../../.git/objects\n")
    report = audit(str(repo), fix=[str(patch)])
    g9 = [f for t in report.targets for f in t.findings if f.check == "G9"]
    assert len(g9) == 1 and g9[0].severity == "info"
    assert report.verdict == "clean"


def test_two_stores_borrowing_from_each_other_are_each_listed_once(tmp_path):
    repo, patch = base_repo(tmp_path)
    other, _ = base_repo(tmp_path, "other")
    unreachable_fix(other)
    (repo / ".git/objects/info/alternates").write_text(f"{other / '.git/objects'}\n")
    (other / ".git/objects/info/alternates").write_text(f"{repo / '.git/objects'}\n")
    report = audit(str(repo), fix=[str(patch)])
    g9 = [f for t in report.targets for f in t.findings if f.check == "G9"]
    assert len(g9) == 2, [f.title for f in g9]
    assert report.verdict == "leak" and ("critical", "F1") in codes(report)


# ------------------------------------------------------------------------------- the git folder's files
@pytest.mark.parametrize("rel", ["rebase-apply/patch", "MERGE_MSG", "notes.txt"])
def test_fix_patch_left_in_the_git_folder_is_critical(tmp_path, rel):
    """The reference diff in a file of the git folder is read by `cat` like any file: L1 critical (was:
    `rebase-apply/` and `MERGE_MSG` only a medium G4, `.git/notes.txt` nothing at all, `clean`)."""
    repo, patch = base_repo(tmp_path)
    target = repo / ".git" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(("Merge branch 'fix'\n\n" if rel == "MERGE_MSG" else "") + FIX_PATCH)
    report = audit(str(repo), fix=[str(patch)])
    assert report.verdict == "leak"
    l1 = [f for t in report.targets for f in t.findings if f.check == "L1"]
    assert [(f.severity, f.where) for f in l1] == [("critical", f".git/{rel}")]


def test_near_copy_of_the_fix_in_the_git_folder_is_f3(tmp_path):
    repo, patch = base_repo(tmp_path)
    (repo / ".git" / "scratch.txt").write_text("kept for later:\n" + FIXED_TEXT)
    report = audit(str(repo), fix=[str(patch)])
    f3 = [f for t in report.targets for f in t.findings if f.check == "F3"]
    assert [(f.severity, f.where) for f in f3] == [("critical", ".git/scratch.txt")]


def test_git_folder_diffs_of_other_changes_are_not_reported(tmp_path):
    """Only the reference's hunks count in the git folder: a diff of some other change is no finding (G4 says
    what git means by its own files)."""
    repo, patch = base_repo(tmp_path)
    (repo / ".git" / "notes.txt").write_text("--- a/f1.txt\n+++ b/f1.txt\n@@ -1 +1 @@\n-x1\n+something else entirely\n")
    (repo / ".git" / "calc.py.bak").write_text(FIXED_TEXT)  # an exact copy: F1's, not also F3's
    report = audit(str(repo), fix=[str(patch)])
    assert codes(report) == {("critical", "F1")}


def test_clean_repository_stays_clean_with_the_git_folder_read(tmp_path):
    repo, patch = base_repo(tmp_path)
    assert audit(str(repo), fix=[str(patch)]).verdict == "clean"


# ------------------------------------------------------------------------------------ instance records
@pytest.mark.parametrize("record, says", [
    ({"base_commit": 5}, "base_commit is a JSON number, expected a string"),
    ({"patch": [FIX_PATCH]}, "patch is a JSON array, expected a string"),
    ({"test_patch": False}, "test_patch is a JSON boolean, expected a string"),
    ({"fix_commit": {"sha": "abc1234"}}, "fix_commit is a JSON object, expected a string"),
    ({"instance_id": ["a"]}, "instance_id is a JSON array, expected a string"),
])
def test_instance_field_of_the_wrong_type_is_one_line(tmp_path, record, says):
    """A numeric base reached git as an internal error; a patch given as a list was dropped and the audit ran
    without a reference. Both are one line naming the file and the field, exit 2."""
    repo, _ = base_repo(tmp_path)
    inst = tmp_path / "task.json"
    inst.write_text(json.dumps(record))
    with pytest.raises(InputError, match=says):
        audit(str(repo), instance=str(inst))
    res = run_cli(str(repo), "--instance", str(inst), cwd=tmp_path)
    assert res.code == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(inst) in lines[0] and says in lines[0] and "internal error" not in lines[0]


def test_instance_with_null_fields_and_a_numeric_id_runs(tmp_path):
    repo, _ = base_repo(tmp_path)
    inst = tmp_path / "task.json"
    inst.write_text(json.dumps({"instance_id": 7, "base_commit": None, "patch": FIX_PATCH, "test_patch": None}))
    report = audit(str(repo), instance=str(inst))
    assert report.verdict == "clean"
    assert report.to_dict()["inputs"]["instance_id"] == "7"


# ------------------------------------------------------------------------------------------ patch shapes
def test_patch_saved_with_crlf_line_ends_still_finds_the_fixed_blob(tmp_path):
    """A CRLF copy of the fix for an LF file made F1 `incomplete` (git apply refuses it) and the verdict
    lost the critical finding: the fixed blob is the one with the CRs dropped."""
    repo, _ = base_repo(tmp_path)
    unreachable_fix(repo)
    crlf = tmp_path / "crlf.patch"
    crlf.write_bytes(FIX_PATCH.replace("\n", "\r\n").encode())
    report = audit(str(repo), fix=[str(crlf)])
    assert not [c for t in report.targets for c in t.incomplete_checks()]
    assert ("critical", "F1") in codes(report) and report.verdict == "leak"


def test_crlf_patch_that_does_not_apply_even_without_crs_stays_incomplete(tmp_path):
    repo, _ = base_repo(tmp_path)
    wrong = tmp_path / "wrong.patch"
    wrong.write_bytes(FIX_PATCH.replace("return a - b", "return a * b").replace("\n", "\r\n").encode())
    report = audit(str(repo), fix=[str(wrong)])
    assert report.verdict == "incomplete"
    assert {c.id for t in report.targets for c in t.incomplete_checks()} >= {"F1"}


# --------------------------------------------------------------------------------------- broken .git
@pytest.mark.parametrize("make, says", [
    (lambda d: (d / ".git").write_text("gitdir: /no/such/store\n"),
     ".git is a gitdir: file naming '/no/such/store', which is no git folder"),
    (lambda d: (d / ".git").write_bytes(b"\xff\xfe not a gitdir line"), ".git is a file without a 'gitdir:' line"),
    (lambda d: (d / ".git").symlink_to(".git"), ".git is a symlink to '.git', which is no git folder or loops"),
    (lambda d: (d / ".git").mkdir(), ".git is no git folder: it needs a HEAD file"),
])
def test_a_dot_git_that_leads_nowhere_is_named(tmp_path, make, says):
    """"no .git" sent the user looking for a .git that is there: the one line says what is wrong with it."""
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "calc.py").write_text(BASE_TEXT)
    make(folder)
    res = run_cli(str(folder), cwd=tmp_path)
    assert res.code == 2 and res.stdout == ""
    line, = res.stderr.strip().splitlines()
    assert f"no git repository found in {folder}" in line and says in line and "no .git" not in line


# ------------------------------------------------------------------------------------- unborn HEAD
def test_head_on_a_branch_without_a_commit_is_incomplete_not_a_leak(tmp_path):
    """HEAD naming a branch that has no commit left the base unresolved: the task's own base commit then
    counted as history beyond it, touching the reference paths (a false `leak`, exit 0). The checks that need
    the base do not run and say why."""
    repo, patch = base_repo(tmp_path)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/nonexistent\n")
    report = audit(str(repo), fix=[str(patch)])
    assert report.verdict == "incomplete" and not [f for t in report.targets for f in t.findings]
    reasons = {c.id: c.reason for t in report.targets for c in t.incomplete_checks()}
    assert {"G1", "G6", "F1"} <= set(reasons) and "give --base" in reasons["G1"]
    res = run_cli(str(repo), "--fix", str(patch), cwd=tmp_path)
    assert res.code == 2 and "VERDICT: INCOMPLETE" in res.stdout


def test_head_on_a_branch_without_a_commit_with_base_given_is_clean(tmp_path):
    """With --base the audit runs; the index is compared with B, since HEAD has no tree."""
    repo, patch = base_repo(tmp_path)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/nonexistent\n")
    assert audit(str(repo), fix=[str(patch)], base="main").verdict == "clean"


def test_store_without_any_commit_is_not_refused(tmp_path):
    repo = tmp_path / "fresh"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "notes.txt").write_text("nothing committed yet\n")
    report = audit(str(repo))
    assert report.verdict == "clean"
