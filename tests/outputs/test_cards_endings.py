"""Cards: the input's line endings are kept, a card without front matter gets minimal valid front matter, the
input card is never overwritten, the card and `.overlap/` appear together or not at all, and a bench name from
a result folder never becomes a path outside the output. Also the summary table's pair count adds up."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from overlap.cli import app
from overlap.errors import InputError
from overlap.outputs.report.console import render_markdown
from overlap.outputs.report.result_view import view_of
from overlap.outputs.report.table_rows import pairs_cell
from overlap.outputs.ship.cards import card_update


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def view(demo_result):
    return view_of(demo_result)


def test_crlf_card_stays_crlf(view, tmp_path):
    card = tmp_path / "ds" / "README.md"
    card.parent.mkdir()
    original = b"---\r\nlicense: mit\r\n---\r\n# My set\r\n\r\nSome text.\r\n"
    card.write_bytes(original)
    from overlap.outputs.ship.cards import read_card

    text, where = read_card(card, None)
    update = card_update(view, text, None, where)
    written = update.write(tmp_path / "out")
    data = written[0].read_bytes()
    assert data.startswith(original.rstrip(b"\r\n")) and b"<!-- overlap:begin cybergym -->\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")  # no bare LF anywhere
    assert card.read_bytes() == original


def test_lf_card_stays_lf_and_a_card_without_front_matter_gets_none(view):
    update = card_update(view, "# Title\n\ntext\n", None, "x")
    readme = update.files["README.md"]
    assert readme.startswith("# Title\n\ntext\n\n<!-- overlap:begin cybergym -->") and "\r" not in readme
    assert "---" not in readme.split("<!-- overlap:begin")[0]
    empty = card_update(view, "", None, "x").files["README.md"]
    assert empty.startswith("<!-- overlap:begin cybergym -->")
    kept = card_update(view, "---\nlicense: mit\n---\nbody\n", None, "x").files["README.md"]
    assert kept.startswith("---\nlicense: mit\n---\nbody\n")


def test_output_over_the_input_card_is_refused(demo_result, tmp_path):
    from overlap.outputs.report.result_folders import write_compare_report

    write_compare_report(demo_result, tmp_path / "res", reports=False)
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "README.md").write_text("# mine\n")
    result = invoke("card", tmp_path / "res", "--card", ds / "README.md", "--out", ds)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1  # refused before any work
    assert (ds / "README.md").read_text() == "# mine\n" and not (ds / ".overlap").exists()
    from overlap.outputs.report.result_view import load_result
    from overlap.outputs.ship.cards import read_card

    text, where = read_card(ds / "README.md", None)
    with pytest.raises(InputError, match="never overwritten"):  # and the writer refuses it too
        card_update(load_result(tmp_path / "res"), text, None, where).write(ds)
    assert (ds / "README.md").read_text() == "# mine\n" and not (ds / ".overlap").exists()


def test_card_files_are_all_or_nothing(view, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".overlap").write_text("a file where the folder should be")
    update = card_update(view, "", None, "x")
    with pytest.raises(InputError):
        update.write(out)
    assert sorted(p.name for p in out.iterdir()) == [".overlap"]


def test_a_bench_name_never_escapes_the_output(demo_result, tmp_path):
    from overlap.outputs.report.result_folders import write_compare_report

    res = tmp_path / "res"
    write_compare_report(demo_result, res, reports=False)
    summary = json.loads((res / "summary.json").read_text())
    summary["benches"][0]["bench"] = "../../escaped"
    (res / "summary.json").write_text(json.dumps(summary))
    pairs = (res / "pairs.csv").read_text().replace("\ncybergym,", "\n../../escaped,")
    (res / "pairs.csv").write_text(pairs)
    out = tmp_path / "deep" / "er" / "card"
    result = invoke("card", res, "--card", tmp_path / "none.md", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert not list(tmp_path.glob("deep/escaped*")) and not list(tmp_path.glob("escaped*"))
    (record,) = (out / ".overlap").iterdir()
    assert record.name.startswith("escaped-") and record.parent == out / ".overlap"
    assert "<!-- overlap:begin escaped-" in (out / "README.md").read_text()
    shutil.rmtree(out)


def test_pairs_by_kind_add_up():
    bench = {"pairs": 100, "pairs_by_match_type": {"translated": 80, "fix": 20}}
    assert pairs_cell(bench) == "100 pairs: 0 exact, 80 translated, 20 by fix"
    plain = {"pairs": 8, "pairs_by_match_type": {"exact": 4, "translated": 4}}
    assert pairs_cell(plain) == "8 pairs: 4 exact, 4 translated"


def test_summary_table_shows_pairs_found_by_fix(demo_result):
    summary = demo_result.summary()
    summary["benches"][0]["pairs"] = 10
    summary["benches"][0]["pairs_by_match_type"] = {"exact": 0, "translated": 8, "fix": 2}
    assert "| pairs by how they matched | 10 pairs: 0 exact, 8 translated, 2 by fix |" in render_markdown(summary)
