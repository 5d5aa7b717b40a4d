"""Fixed-content route: the post-fix blobs are computed in a scratch folder (the audited store gains
no object) and found in the store, the index, the worktree and any same-sized file."""

from __future__ import annotations

import json
import shutil

import pytest
from audit_helpers import git

from overlap.audit import audit
from overlap.audit.content.fixed import blob_id
from overlap.audit.content.patch import parse_patch
from overlap.audit.content.reference import load_reference
from overlap.errors import InputError


def _object_count(repo) -> int:
    out = git("count-objects", "-v", cwd=repo)
    fields = dict(line.split(": ") for line in out.splitlines())
    return int(fields["count"]) + int(fields["in-pack"])


def test_fixed_blob_in_worktree_and_same_sized_copies(gitfix, tmp_path):
    repo = tmp_path / "solved"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    shutil.copy(gitfix.L / "calc_fixed.py", repo / "src/calc.py")  # the task is already solved
    (repo / "build/lib/src").mkdir(parents=True)
    shutil.copy(gitfix.L / "calc_fixed.py", repo / "build/lib/src/calc.py")  # and a copy elsewhere
    before = _object_count(repo)
    t = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]).targets[0]
    assert _object_count(repo) == before  # the scratch apply never wrote into the audited store
    f1 = next(f for f in t.findings if f.key == "F1:src/calc.py")
    assert f1.severity == "critical"
    places = {(p["place"], p.get("path")) for p in f1.evidence["items"]}
    assert places == {("worktree", "src/calc.py"), ("file", "build/lib/src/calc.py")}
    assert f1.evidence["blob"] == blob_id((gitfix.L / "calc_fixed.py").read_bytes())


def test_fixed_blobs_match_git_and_the_index_lines(gitfix):
    for name, patch in (("swb4", "fix.patch"), ("swb4", "test.patch")):
        t = audit(gitfix.path(name), base=gitfix.base, fix=[gitfix.path(patch)]).targets[0]
        assert {c.id: c.status for c in t.checks}["F1"] == "ran"
    fp = parse_patch((gitfix.L / "fix.patch").read_bytes(), "fix.patch")[0]
    assert blob_id((gitfix.L / "calc_fixed.py").read_bytes()).startswith(fp.new_abbrev)


def test_fixed_file_form_and_instance(gitfix, tmp_path):
    t = audit(gitfix.path("index"), base=gitfix.base,
              fix=[f"src/calc.py={gitfix.path('calc_fixed.py')}"]).targets[0]
    assert {f.key: f.severity for f in t.findings}["F1:src/calc.py"] == "critical"
    inst = tmp_path / "task.json"
    inst.write_text(json.dumps({
        "instance_id": "toy__calc-42", "base_commit": gitfix.base,
        "patch": (gitfix.L / "fix.patch").read_text(), "test_patch": (gitfix.L / "test.patch").read_text(),
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"])}))
    report = audit(gitfix.path("swb4"), instance=str(inst))
    assert report.inputs["base_source"] == "instance" and report.inputs["base"] == gitfix.base
    assert report.inputs["test_ids"] == ["tests/test_calc.py::test_add"]
    keys = {f.key for f in report.targets[0].findings}
    assert {"F1:src/calc.py", "F2:tests/test_calc.py"} <= keys


def test_patch_not_matching_base_makes_f1_incomplete(gitfix, tmp_path):
    bad = tmp_path / "bad.patch"
    bad.write_text((gitfix.L / "fix.patch").read_text().replace("-    return a - b", "-    return a * b"))
    t = audit(gitfix.path("ctl-fresh"), base="HEAD", fix=[str(bad)]).targets[0]
    f1 = next(c for c in t.checks if c.id == "F1")
    assert f1.status == "incomplete" and "src/calc.py" in f1.reason
    assert t.verdict == "incomplete"


def test_reference_parsing_and_test_ids(gitfix):
    ref = load_reference(fix=[gitfix.path("fix.patch")], tests=[gitfix.path("test.patch")])
    assert ref.paths == {"src/calc.py", "tests/test_calc.py"}
    assert ref.test_ids == ["tests/test_calc.py::test_add"]
    with pytest.raises(InputError, match="leaves the repository"):
        load_reference(fix=["../../etc/passwd=" + gitfix.path("fix.patch")])
    with pytest.raises(InputError, match="not a unified diff"):
        load_reference(fix=[gitfix.path("ids.env")])


def test_object_set_matches_dulwich(gitfix):
    """Cross-check: ALL from `cat-file --batch-all-objects` equals dulwich's object_store iteration."""
    dulwich_repo = pytest.importorskip("dulwich.repo")
    from overlap.audit.context import Ctx  # noqa: F401
    from overlap.audit.git.cmd import GitRunner
    from overlap.audit.git.repo import GitRepo

    for name in ("swb4", "reflog", "unreach-loose", "cruft", "stash-drop", "alt", "index-gc", "graph", "nested"):
        home = gitfix.L.parent / "dulwich-home"
        home.mkdir(exist_ok=True)
        repo = GitRepo(gitfix.L / name / ".git", GitRunner(home))
        repo.load(None)
        ours = {o.hex() for o in repo.all}
        theirs = {o.decode() for o in dulwich_repo.Repo(gitfix.path(name)).object_store}
        assert ours == theirs, name
