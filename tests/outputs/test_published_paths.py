"""Nothing meant for publishing names a local path: the card, `.overlap/*.json` and the pushed PR description
made from a compare on local folders hold repo ids, revisions and file sha256s, never a path of this machine."""

from __future__ import annotations

import re
from pathlib import Path

from outputs_helpers import FakeHfApi
from typer.testing import CliRunner

from overlap.cli import app
from overlap.outputs.published import public_provenance, safe_name, scrub_paths
from overlap.outputs.report.result_view import load_result
from overlap.outputs.ship.cards import card_update, push_card

ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:tmp|home|root|Users|var|private|work|mnt|opt)/")


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def assert_no_local_path(text: str, tmp_path: Path) -> None:
    assert str(tmp_path) not in text
    assert str(Path.home()) not in text or str(Path.home()) == "/"
    assert not ABSOLUTE.search(text), ABSOLUTE.search(text)


def test_card_from_local_folders_names_no_path(demo_copy, tmp_path):
    data = [a for name, path in demo_copy.items() for a in ("--data", f"{name}={path}")]
    run("compare", "mimo-cyber", "cybergym", *data, "--out", tmp_path / "res")
    assert str(tmp_path) in (tmp_path / "res" / "summary.json").read_text()  # local reports keep paths
    run("card", tmp_path / "res", "--card", tmp_path / "ds" / "README.md", "--out", tmp_path / "card")
    published = [p for p in (tmp_path / "card").rglob("*") if p.is_file() and p.name != ".overlap-output"]
    assert {p.relative_to(tmp_path / "card").as_posix() for p in published} == {"README.md", ".overlap/cybergym.json"}
    for path in published:
        assert_no_local_path(path.read_text(encoding="utf-8"), tmp_path)
    readme = (tmp_path / "card" / "README.md").read_text()
    assert "as local files cyber.parquet (sha256 " in readme and "local copy" not in readme
    api = FakeHfApi()
    update = card_update(load_result(tmp_path / "res"), "", None, "hub:me/ds")
    push_card(update, "me/ds", api=api)
    (commit,) = api.commits
    assert_no_local_path(commit["commit_description"], tmp_path)
    for op in commit["operations"]:
        assert_no_local_path(op.path_or_fileobj.decode("utf-8"), tmp_path)


def test_public_provenance_keeps_ids_and_hashes_only():
    prov = {"name": "/data/me/train.jsonl", "origin": "local-file", "location": "/data/me/train.jsonl",
            "repo_id": None, "revision": None, "adapter": "swe-bench", "subsets": [],
            "files": [{"path": "/data/me/train.jsonl", "sha256": "a" * 64, "rows": 3},
                      {"path": "data/test.parquet", "sha256": "b" * 64, "rows": None},
                      {"path": "../up/x.csv", "sha256": "c" * 64, "rows": 1}]}
    public = public_provenance(prov)
    assert "location" not in public and public["name"] == "train.jsonl"
    assert [f["path"] for f in public["files"]] == ["train.jsonl", "data/test.parquet", "x.csv"]
    assert public["files"][0]["sha256"] == "a" * 64


def test_scrub_paths_and_safe_name():
    assert scrub_paths({"r": ["cannot read /tmp/a/b/patch.diff here", "https://github.com/a/b", "5/10"]}) == {
        "r": ["cannot read patch.diff here", "https://github.com/a/b", "5/10"]}
    assert safe_name("cybergym") == "cybergym"
    for name in ("../../escaped", "/etc/passwd", "a/b", ".hidden", "..", "", "x" * 300, "a b\n"):
        safe = safe_name(name)
        assert "/" not in safe and "\\" not in safe and not safe.startswith(".") and 0 < len(safe) <= 100
    assert safe_name("a/b") != safe_name("a_b")


def test_scrub_paths_keeps_closing_html_tags():
    assert scrub_paths("<sub>Written by overlap 0.1.0</sub>") == "<sub>Written by overlap 0.1.0</sub>"
    assert scrub_paths("<a href='x'>y</a> and </sub >") == "<a href='x'>y</a> and </sub >"
    # a path is still cut to its name, inside a tag or between angle brackets
    assert scrub_paths("</home/me/x> <a href=/home/me/y.csv>") == "<x> <a href=y.csv>"


def test_published_card_keeps_its_html_and_adds_no_front_matter(demo_copy, tmp_path):
    data = [a for name, path in demo_copy.items() for a in ("--data", f"{name}={path}")]
    run("compare", "mimo-cyber", "cybergym", *data, "--text", "none", "--out", tmp_path / "res")
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "README.md").write_text("# My set\n\nRows.\n")
    run("card", tmp_path / "res", "--card", tmp_path / "ds" / "README.md", "--out", tmp_path / "card")
    readme = (tmp_path / "card" / "README.md").read_text()
    assert readme.startswith("# My set\n\nRows.\n\n<!-- overlap:begin cybergym -->")
    assert "---\n{}\n---" not in readme
    assert readme.count("<sub>") == readme.count("</sub>") == 1
