"""A reference fix that patches files inside a git submodule: B's blob of such a file is read from the
submodule's own store (``.git/modules/<name>`` or the checkout's ``.git``) at the commit B's gitlink
records, so the fixed content is computed and looked up like any other; when no store holds that commit
the fix checks are ``incomplete`` naming the submodule, never ``clean``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from audit_helpers import assert_valid_report, git

from overlap.audit import audit


def _superproject(tmp_path: Path, source: Path, commit: str, name: str = "lib") -> Path:
    """A repository whose B pins submodule ``lib`` (cloned from ``source``, its store in
    ``.git/modules/<name>``) at ``commit``."""
    sup = tmp_path / "super"
    git("init", "-q", "-b", "main", str(sup), cwd=tmp_path)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "--name", name, f"file://{source}", "lib",
        cwd=sup)
    git("-C", "lib", "checkout", "-q", commit, cwd=sup)
    git("add", "lib", cwd=sup)
    git("commit", "-q", "-m", "B: lib at its base", cwd=sup)
    return sup


def _inside_lib(patch: Path, out: Path) -> str:
    """The patch with every path moved under ``lib/`` (the superproject's view of the submodule's files)."""
    lines = []
    for line in patch.read_text().splitlines(keepends=True):
        if line.startswith("diff --git "):
            line = line.replace(" a/", " a/lib/", 1).replace(" b/", " b/lib/", 1)
        elif line.startswith(("--- a/", "+++ b/")):
            line = line[:6] + "lib/" + line[6:]
        lines.append(line)
    out.write_text("".join(lines))
    return str(out)


def _reference(gitfix, tmp_path: Path) -> dict:
    return {"base": "HEAD", "fix": [_inside_lib(gitfix.L / "fix.patch", tmp_path / "fix-lib.patch")],
            "tests": [_inside_lib(gitfix.L / "test.patch", tmp_path / "test-lib.patch")]}


def _checks(target) -> dict[str, tuple[str, str | None]]:
    return {c.id: (c.status, c.reason) for c in target.checks}


@pytest.mark.parametrize("layout", ["modules", "named", "no-checkout", "checkout", "rootfs"])
def test_a_fix_inside_a_submodule_is_found_in_its_store(gitfix, tmp_path, layout):
    """The submodule's store (a full clone of upstream) holds the fix: F1 and F2 grade it critical."""
    sup = _superproject(tmp_path, gitfix.L / "up", gitfix.base, name="third_party/lib" if layout == "named" else "lib")
    path, extra = str(sup), {}
    if layout in ("named", "no-checkout"):  # found by the name .gitmodules gives it, without a checkout's .git
        (sup / "lib/.git").unlink()
    if layout == "checkout":  # the store in the checkout itself (a submodule cloned before `absorbgitdirs`)
        (sup / "lib/.git").unlink()
        shutil.move(sup / ".git/modules/lib", sup / "lib/.git")
        git("config", "--file", str(sup / "lib/.git/config"), "--unset", "core.worktree", cwd=sup)
    elif layout == "rootfs":  # a root filesystem: the gitdir: file and modules/ resolve inside it
        root = tmp_path / "root"
        (root / "etc").mkdir(parents=True)
        shutil.move(sup, root / "testbed")
        path, extra = str(root), {"rootfs": True, "repo_path": "/testbed"}
    report = audit(path, **_reference(gitfix, tmp_path), **extra)
    assert_valid_report(report)
    t = report.targets[0]
    checks = _checks(t)
    assert checks["F1"][0] == checks["F2"][0] == "ran", checks
    found = {f.key: f for f in t.findings if f.check in ("F1", "F2")}
    assert {k: f.severity for k, f in found.items()} == {"F1:lib/src/calc.py": "critical",
                                                         "F2:lib/tests/test_calc.py": "critical"}
    assert any(p["place"] == "nested-store" for p in found["F1:lib/src/calc.py"].evidence["items"])
    assert report.verdict == "leak"


def test_a_submodule_without_the_fix_is_checked(gitfix, tmp_path):
    """The submodule's store holds B's content only: the fixed blobs are computed and found nowhere."""
    sup = _superproject(tmp_path, gitfix.L / "ctl-fresh", "HEAD")
    t = audit(str(sup), **_reference(gitfix, tmp_path)).targets[0]
    checks = _checks(t)
    assert checks["F1"] == checks["F2"] == ("ran", None), checks
    assert not [f for f in t.findings if f.check in ("F1", "F2")]


@pytest.mark.parametrize("store", ["absent", "another"])
def test_a_submodule_whose_commit_is_not_here_is_incomplete_naming_it(gitfix, tmp_path, store):
    """No store holds the commit B's gitlink records (the submodule was never fetched, or its store is of
    another history): the fix checks cannot compute the fixed content, and say which submodule."""
    sup = _superproject(tmp_path, gitfix.L / "up", gitfix.base)
    shutil.rmtree(sup / ".git/modules/lib")
    if store == "absent":
        (sup / "lib/.git").unlink()
    else:
        git("clone", "-q", "--bare", str(gitfix.L / "ctl-fresh"), str(sup / ".git/modules/lib"), cwd=tmp_path)
    report = audit(str(sup), **_reference(gitfix, tmp_path))
    assert_valid_report(report)
    t = report.targets[0]
    checks = _checks(t)
    for cid, path in (("F1", "lib/src/calc.py"), ("F2", "lib/tests/test_calc.py")):
        status, reason = checks[cid]
        assert status == "incomplete", checks
        assert reason.startswith(f"{path} is inside submodule lib, and the commit B's gitlink records there "
                                 f"({gitfix.base[:12]}) is not here: ")
        assert "\n" not in reason
    where = "no git store at lib/.git or .git/modules/lib" if store == "absent" else ".git/modules/lib does not hold it"
    assert where in checks["F1"][1]
    assert report.verdict == "incomplete" and report.exit_code == 2


@pytest.mark.parametrize("store, why", [("removed", "its git folder ../.git/modules/lib is missing"),
                                        ("emptied", "its git folder ../.git/modules/lib is not a git folder")])
def test_a_submodule_whose_git_folder_is_gone_is_named_as_not_checked(gitfix, tmp_path, store, why):
    """The checkout's `gitdir:` file leads nowhere: nothing of that store can be audited, and the report says
    so (G13 info) instead of passing over it."""
    sup = _superproject(tmp_path, gitfix.L / "up", gitfix.base)
    shutil.rmtree(sup / ".git/modules/lib")
    if store == "emptied":
        (sup / ".git/modules/lib").mkdir()
    report = audit(str(sup), base="HEAD")
    assert_valid_report(report)
    g13 = [f for f in report.targets[0].findings if f.check == "G13"]
    assert [(f.key, f.severity) for f in g13] == [("G13:lib/.git", "info")]
    assert g13[0].evidence["kind"] == "missing" and g13[0].evidence["not_checked"].startswith(why)
    assert g13[0].title.startswith(f"nested git store lib/.git not checked: {why}")
