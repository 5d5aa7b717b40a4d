"""Names that are not UTF-8 (bytes Python keeps as surrogates) around `compare`: a pool file, a data folder, the
--out folder; and a task id written with spaces still finds its own per-task files."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest
from typer.testing import CliRunner

from overlap.api.demo import DEMO_ROOT
from overlap.cli import app
from overlap.sources.pools.arvo_git import git_tree_sha1
from overlap.sources.rows.item_paths import cybergym_task_path


def _demo(tmp_path):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_ROOT, root)
    return root


def _args(root, **where):
    names = {"mimo-cyber": root / "mimo-cyber", "cybergym": root / "cybergym", "arvo": root / "arvo",
             "arvo-meta": root / "arvo-meta", **where}
    args = ["compare", "mimo-cyber", "cybergym"]
    for name, path in names.items():
        args += ["-d", f"{name}={path}"]
    return args


def _bytes_name(folder, name: bytes, data: bytes = b"{}") -> None:
    try:
        with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
            handle.write(data)
    except OSError:
        pytest.skip("this file system takes UTF-8 names only")


def test_git_tree_id_hashes_a_non_utf8_name_by_its_bytes():
    name = os.fsdecode(b"\xff.json")
    blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    body = b"100644 \xff.json\0" + bytes.fromhex(blob)
    assert git_tree_sha1([("100644", name, blob)]) == hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def test_a_pool_file_named_in_latin1_is_a_problem_not_a_crash(tmp_path):
    root = _demo(tmp_path)
    _bytes_name(root / "arvo-meta" / "archive_data" / "meta", b"caf\xe9.json")
    done = CliRunner().invoke(app, [*_args(root), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert r'"caf\\xe9.json"' in (tmp_path / "out" / "summary.json").read_text(encoding="utf-8")  # JSON-escaped


def test_a_data_folder_named_in_latin1_is_one_line(tmp_path):
    root = _demo(tmp_path)
    try:
        moved = os.path.join(os.fsencode(root), b"mimo\xff")
        os.rename(os.fsencode(root / "mimo-cyber"), moved)
    except OSError:
        pytest.skip("this file system takes UTF-8 names only")
    done = CliRunner().invoke(app, [*_args(root, **{"mimo-cyber": os.fsdecode(moved)}), "--no-report"])
    assert done.exit_code == 2, done.output
    assert "mimo\\xff/cyber.parquet: a folder's name is not UTF-8 text" in done.output
    assert "Traceback" not in done.output and "internal error" not in done.output


def test_an_out_folder_named_in_latin1_is_written_and_re_rendered(tmp_path):
    root = _demo(tmp_path)
    out = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"r\xe9sultat"))
    try:
        os.mkdir(out)
        os.rmdir(out)
    except OSError:
        pytest.skip("this file system takes UTF-8 names only")
    done = CliRunner().invoke(app, [*_args(root), "--out", out])
    assert done.exit_code == 0, done.output
    assert os.path.isfile(os.path.join(out, "pair_items.parquet"))
    again = CliRunner().invoke(app, ["report", out])
    assert again.exit_code == 0, again.output


def test_a_task_id_written_with_spaces_finds_its_own_files():
    assert cybergym_task_path(" arvo:10102 ", "error.txt") == "data/arvo/10102/error.txt"
    assert cybergym_task_path("arvo:13555\n", "patch.diff") == "data/arvo/13555/patch.diff"
    assert cybergym_task_path("arvo: ../1", "patch.diff") is None
