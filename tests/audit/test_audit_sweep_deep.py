"""Inputs nested past what a recursive reader survives: JSON nested a hundred thousand levels deep (a mypy cache
file in the repository, an image's index.json, the task record) and folders nested thousands deep (in an image,
where removing the private copy recursed once per level, and past the host's PATH_MAX, where the walk dropped
them without a word). Each is a finding, one line, or a counted skip; never an internal error."""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
from pathlib import Path

import pytest
from audit_helpers import CALC_FIX_PATCH, CALC_FIXED_TEXT, calc_repo, run_cli

from overlap.audit import audit
from overlap.audit.scratch import remove_tree
from overlap.errors import InputError

FIX_PATCH = CALC_FIX_PATCH
FIXED_TEXT = CALC_FIXED_TEXT.encode()
DEEP_JSON = '{"names": ' + "[" * 100_000 + "]" * 100_000 + "}"




@pytest.fixture
def fix_patch(tmp_path) -> Path:
    p = tmp_path / "fix.patch"
    p.write_text(FIX_PATCH)
    return p


def test_deeply_nested_mypy_cache_file_is_no_internal_error(tmp_path, fix_patch):
    repo = calc_repo(tmp_path / "repo")
    (repo / ".mypy_cache" / "3.11").mkdir(parents=True)
    (repo / ".mypy_cache" / "3.11" / "calc.data.json").write_text(DEEP_JSON)
    r = run_cli(str(repo), "--fix", str(fix_patch), "--test-id", "tests/test_calc.py::test_add", cwd=tmp_path)
    assert r.code == 0, r.stderr
    assert "internal error" not in r.stderr and r.stdout.startswith("VERDICT: ")


def test_deeply_nested_task_record_is_one_line(tmp_path):
    repo = calc_repo(tmp_path / "repo")
    (tmp_path / "task.json").write_text('{"a": ' * 100_000)
    r = run_cli(str(repo), "--instance", "task.json", cwd=tmp_path)
    assert r.code == 2 and "internal error" not in r.stderr
    assert r.stderr.count("\n") == 1 and "--instance task.json: not a JSON object" in r.stderr


def test_deeply_nested_index_json_is_one_line(tmp_path):
    layout = tmp_path / "layout"
    layout.mkdir()
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (layout / "index.json").write_text('{"manifests": ' + "[" * 100_000)
    with pytest.raises(InputError, match="index.json: not valid JSON"):
        audit(str(layout))


def _image(path: Path, repo: Path, deep_file: str) -> Path:
    """A `docker save` archive: the repository at /testbed and the fixed file at ``deep_file``."""
    import hashlib

    layers = []
    for fill in ("repo", "deep"):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
            if fill == "repo":
                t.add(repo, arcname="testbed")
            else:
                folder = tarfile.TarInfo(os.path.dirname(deep_file))
                folder.type, folder.mode = tarfile.DIRTYPE, 0o755
                t.addfile(folder)
                info = tarfile.TarInfo(deep_file)
                info.size, info.mtime = len(FIXED_TEXT), 1_700_000_000
                t.addfile(info, io.BytesIO(FIXED_TEXT))
        layers.append(buf.getvalue())
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"WorkingDir": "/testbed"},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(b).hexdigest()
                                                                   for b in layers]}}).encode()
    files = [("config.json", config), *((f"{i}/layer.tar", b) for i, b in enumerate(layers)),
             ("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["t:1"],
                                            "Layers": [f"{i}/layer.tar" for i in range(len(layers))]}]).encode())]
    with tarfile.open(path, "w") as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def test_folders_thousands_deep_in_an_image_are_read_and_removed(tmp_path, fix_patch, monkeypatch):
    """1,900 levels: under path_bytes and the host's PATH_MAX, past Python's recursion limit."""
    image = _image(tmp_path / "deep.tar", calc_repo(tmp_path / "repo"), "root" + "/d" * 1900 + "/x.py")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    report = audit(str(image), fix=[str(fix_patch)])
    assert report.verdict == "leak"
    assert any(f.check == "F1" and f.where.endswith("/x.py") for f in report.targets[0].findings)
    assert list(scratch.iterdir()) == []  # the private copy is gone


def test_folders_past_the_hosts_path_max_are_counted_not_dropped(tmp_path, fix_patch):
    """The container reads /root/d/…/x.py (under 4,096 bytes); the host path of the private copy is longer."""
    image = _image(tmp_path / "deeper.tar", calc_repo(tmp_path / "repo"), "root" + "/d" * 2040 + "/x.py")
    r = run_cli(str(image), "--fix", str(fix_patch), cwd=tmp_path, timeout=60)
    assert r.code == 0, r.stderr
    assert "not walked: root/d/d/" in r.stdout and "File name too long" in r.stdout
    data = json.loads(run_cli(str(image), "--fix", str(fix_patch), "--format", "json", cwd=tmp_path,
                              timeout=60).stdout)
    notes = data["targets"][0]["stats"]["skipped"]["notes"]
    assert len(notes) == 1 and len(notes[0]) < 300


def test_repository_folders_past_path_max_are_counted(tmp_path, fix_patch):
    repo = calc_repo(tmp_path / "repo")
    here = os.getcwd()
    try:
        os.chdir(repo)
        for _ in range(2100):  # relative steps: each call's path stays short
            os.mkdir("d")
            os.chdir("d")
        Path("x.py").write_bytes(FIXED_TEXT)
    finally:
        os.chdir(here)
    try:
        r = run_cli(str(repo), "--fix", str(fix_patch), cwd=tmp_path)
    finally:
        remove_tree(repo / "d")  # pytest's own clean-up recurses once per level
    assert r.code == 0, r.stderr
    assert "not walked: d/d/d/" in r.stdout
