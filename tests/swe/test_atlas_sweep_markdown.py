"""report.md shows the ids and texts of the data as written, never as markup: an id holding raw HTML, a
table's `|` or a Markdown link is escaped (report.html escapes them as HTML already)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from overlap.cli import app

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
HOSTILE = {"<script>alert(1)</script>CVE-2021-1111": "CVE-2021-1111",
           "</td></tr></table><h1>INJ</h1>CVE-2021-2222": "CVE-2021-2222",
           "[evil](javascript:alert(4)) CVE-2021-3333": "CVE-2021-3333",
           "a|b CVE-2021-4444": "CVE-2021-4444"}


def test_hostile_ids_are_text_in_report_md(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, ids in (("t", list(HOSTILE)), ("b", list(HOSTILE.values()))):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")
    (tmp_path / "reg.toml").write_text(
        '[[dataset]]\nname = "sweep-t"\nrole = "training"\npath = "t.jsonl"\ncolumns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-b"\nrole = "benchmark"\npath = "b.jsonl"\ncolumns = {id = "id"}\n',
        encoding="utf-8")
    done = CliRunner().invoke(app, ["compare", "sweep-t", "sweep-b", "--registry", "reg.toml", "-d",
                                    f"arvo={DEMO / 'arvo'}", "--pool", "none", "--no-evidence", "--text", "none",
                                    "--out", "cmp"])
    assert done.exit_code == 0, done.output
    md = (tmp_path / "cmp" / "report.md").read_text(encoding="utf-8")
    assert "CVE-2021-3333" in md and "\\<script\\>" in md  # the pairs are shown, escaped
    raw_tags = [t for t in re.findall(r"(?<!\\)<(/?[a-z][a-z0-9]*)", md) if t not in ("br", "sub", "/sub")]
    assert raw_tags == [], raw_tags
    assert not re.search(r"(?<!\\)\]\(javascript:", md)  # no link of the data's
    for line in md.splitlines():
        if "a|b" in line or "a\\|b" in line:
            assert "a|b" not in line.replace("\\|", "")  # a column break of the data is no column break
