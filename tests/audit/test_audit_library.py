"""`overlap.api.audit` as a Python user calls it: one path as a str or Path (never its letters), options that
`help()` lists, and a report whose repr fits on a line."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

from overlap.api import audit


def test_fix_as_one_string_or_path_is_one_file(gitfix, tmp_path):
    repo = tmp_path / "solved"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    as_list = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")])
    as_str = audit(str(repo), base="HEAD", fix=str(gitfix.path("fix.patch")))
    as_path = audit(repo, base="HEAD", fix=Path(gitfix.path("fix.patch")))
    assert as_str.to_dict() == as_list.to_dict() == as_path.to_dict()
    assert len(as_str.inputs["fix"]) == 1


def test_help_lists_the_options():
    parameters = inspect.signature(audit).parameters
    assert list(parameters)[:4] == ["path", "base", "fix", "tests"]
    for name in ("test_ids", "fix_commit", "instance", "network", "repo_path", "image", "platform", "rootfs",
                 "limits", "git"):
        assert name in parameters and f"{name}:" in audit.__doc__


def test_report_repr_is_short(gitfix):
    report = audit(gitfix.path("swb4"), base=gitfix.base, fix=[gitfix.path("fix.patch")])
    text = repr(report)
    assert len(text) < 300 and "\n" not in text
    assert text.startswith("<AuditReport ") and report.verdict in text and "critical" in text
