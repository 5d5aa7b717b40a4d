"""NUL bytes where a name is expected: a task record's base commit (JSON allows ``\\u0000``) and a targets file's
path. Neither can name a commit or a file; each is one line naming the value, never an internal error, and the
other rows of a targets file still run and are written."""

from __future__ import annotations

import json
import shutil

import pytest
from audit_helpers import run_cli
from batch_helpers import repo, write_jsonl

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_base_commit_with_a_nul_byte_is_one_line(tmp_path):
    repo(tmp_path / "clean", leak=False)
    (tmp_path / "task.json").write_text(json.dumps({"base_commit": "ab\u0000cd", "patch": ""}))
    r = run_cli("clean", "--instance", "task.json", cwd=tmp_path)
    assert r.code == 2 and "internal error" not in r.stderr
    assert r.stderr.count("\n") == 1 and "--base ab\\x00cd: not a commit in" in r.stderr


def test_targets_row_with_a_nul_byte_fails_alone_with_out(tmp_path):
    repo(tmp_path / "clean", leak=False)
    write_jsonl(tmp_path / "t.jsonl", [{"path": "clean", "instance_id": "ok"},
                                       {"path": "cl\u0000ean", "instance_id": "nul-path"},
                                       {"path": "clean", "instance_id": "nul-base", "base_commit": "ab\u0000cd"}])
    r = run_cli("--targets", "t.jsonl", "--jobs", "1", "--out", "out", "--format", "json", cwd=tmp_path, timeout=60)
    assert r.code == 2 and "internal error" not in r.stderr + r.stdout
    doc = json.loads((tmp_path / "out" / "audit.json").read_text())
    status = {t["instance_id"]: (t["status"], t.get("error") or "") for t in doc["targets"]}
    assert status["ok"][0] == "ok"
    assert status["nul-path"][0] == "error" and "no such file" in status["nul-path"][1]
    assert status["nul-base"][0] == "error" and "not a commit" in status["nul-base"][1]
