"""`overlap.audit` called from Python with arguments of the wrong type (`fix=5`, `base=5`, bytes where a path
goes): each is one InputError line naming the argument, never a TypeError or AttributeError from deep inside.
Right types in every accepted shape (one str, a Path, a list, a generator) still run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import overlap
from overlap.errors import InputError


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


WRONG = [("fix", 5), ("fix", [5]), ("fix", b"fix.patch"), ("fix", [b"fix.patch"]), ("fix", {"a": 1}),
         ("tests", 5), ("tests", [None]), ("test_ids", 5), ("test_ids", [3.5]), ("base", 5), ("base", ["HEAD"]),
         ("fix_commit", 5), ("instance", 5), ("network", 5), ("network", None), ("repo_path", 5), ("image", 5),
         ("platform", ["linux/amd64"]), ("rootfs", "yes"), ("rootfs", 1), ("limits", 5), ("limits", [5]),
         ("limits", b"git_timeout=5"), ("git", 5), ("insecure_registries", 5), ("insecure_registries", [5]),
         ("stage", "print")]


@pytest.mark.parametrize("name, value", WRONG, ids=[f"{n}={v!r}" for n, v in WRONG])
def test_wrong_type_is_one_line_naming_the_argument(repo, name, value):
    with pytest.raises(InputError) as exc:
        overlap.audit(repo, **{name: value})
    msg = str(exc.value)
    wrong = value[0] if isinstance(value, list) else value  # in a list, the item of the wrong type is named
    assert "\n" not in msg and f"{name}=" in msg and type(wrong).__name__ in msg, msg


@pytest.mark.parametrize("path", [5, b"repo", None, 3.0])
def test_wrong_type_of_path(path):
    with pytest.raises(InputError, match="path="):
        overlap.audit(path)


def test_right_types_in_every_shape_still_run(gitfix, tmp_path):
    repo = tmp_path / "solved"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    fix = gitfix.path("fix.patch")
    shapes = (([fix], None), (str(fix), "git_timeout=300"), (Path(fix), {"git_timeout": 300}),
              ((f for f in [fix]), (x for x in ["git_timeout=300"])))
    reports = [overlap.audit(repo, base="HEAD", fix=fix_given, limits=limits) for fix_given, limits in shapes]
    assert all(r.to_dict() == reports[0].to_dict() for r in reports)
    assert len(reports[0].inputs["fix"]) == 1
