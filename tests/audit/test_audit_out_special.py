"""`--out` naming something that is no regular file: the report replaces its file whole by a rename, so a pipe,
a device or a symbolic link would itself be replaced (as root, `--out /dev/null` made /dev/null a JSON file).
Each is refused in one line before the audit runs, and left as it was."""

from __future__ import annotations

import os
import shutil
import stat

import pytest
from audit_helpers import run_cli
from batch_helpers import repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.mark.parametrize("kind", ["pipe", "link", "folder"])
def test_an_out_that_is_no_regular_file_is_refused_and_left_alone(tmp_path, kind):
    repo(tmp_path / "clean", leak=False)
    target = tmp_path / "report.json"
    if kind == "pipe":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(target)
    elif kind == "link":
        (tmp_path / "elsewhere.json").write_text("kept")
        target.symlink_to(tmp_path / "elsewhere.json")
    else:
        target.mkdir()
    r = run_cli("clean", "--out", "report.json", cwd=tmp_path, timeout=60)
    assert r.code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--output report.json: is a" in r.stderr and "not a file" in r.stderr
    mode = os.lstat(target).st_mode
    assert {"pipe": stat.S_ISFIFO, "link": stat.S_ISLNK, "folder": stat.S_ISDIR}[kind](mode)
    if kind == "link":
        assert (tmp_path / "elsewhere.json").read_text() == "kept"


def test_a_regular_file_is_replaced_as_before(tmp_path):
    repo(tmp_path / "clean", leak=False)
    (tmp_path / "report.json").write_text("old")
    r = run_cli("clean", "--out", "report.json", "--format", "json", cwd=tmp_path, timeout=60)
    assert r.code in (0, 1), r.stderr
    assert (tmp_path / "report.json").read_text().startswith("{")
