"""Printed tables read as sentence fragments and fit narrow terminals: `overlap demo` and
`overlap matrix` at 80 and 120 columns stay within the width and never break a header word; counts carry
thousands separators; plurals agree; the chance cells name the observed count, `P(X ≥ n) = p`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from fixtures import write_cybergym, write_mapping, write_mimo
from rich.console import Console
from typer.testing import CliRunner

from overlap.api import compare
from overlap.api.demo import demo_data, explain
from overlap.cli import app
from overlap.outputs.report.cell_text import count, part_of, plural, range95, tail
from overlap.outputs.report.console import (
    column_widths,
    identifier_words,
    print_table,
    render_markdown,
    stdout_console,
    summary_rows,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "swe"))
from swe_fixtures import write_all as write_swe  # noqa: E402

BENCHES = ["multi-swe-bench", "swe-polybench", "swe-bench-multilingual", "swe-bench", "swe-bench-pro"]
BAD_PLURAL = re.compile(r"\(s\)|(?<![\d.,])1 (?:[a-z-]+ )?(?:rows|items|pairs|bugs|words|groups|ids|draws|tasks)\b")


def whole(word: str, text: str) -> bool:
    """`word` appears in `text` with no letter, digit, hyphen or underscore glued to either side."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def check_fits(text: str, width: int, header_words: list[str]) -> None:
    lines = text.splitlines()
    assert lines and max(len(line) for line in lines) <= width, max(lines, key=len)
    assert "…" not in text  # rich truncates a cell with an ellipsis when a column is too narrow
    for word in header_words:
        assert whole(word, text), f"header word {word!r} is not whole in:\n{text}"
    assert not BAD_PLURAL.search(text), BAD_PLURAL.search(text)


@pytest.fixture(scope="module")
def demo_summary():
    return compare("mimo-cyber", ["cybergym"], data=demo_data()).summary()


@pytest.mark.parametrize("width", [80, 120])
def test_demo_fits_the_terminal(width, tmp_path, demo_summary):
    run = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo")], env={"COLUMNS": str(width)})
    assert run.exit_code == 0, run.output
    header, rows = summary_rows(demo_summary)
    assert header[0]  # no empty first header
    check_fits(run.stdout, width, [w for text in [*header, *(row[0] for row in rows)] for w in text.split()])
    assert "1 bug appears twice" in run.stdout


def test_demo_cells_read_as_sentences(demo_summary):
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - no cell wraps
    print_table(demo_summary, console)
    text = console.export_text()
    for cell in ("8 pairs: 4 exact, 4 translated", "7 of 10 (70.0%)", "2 items in 1 group",
                 "6 of 8 (3 by plain join)", "61 ids: 8 train, 9 bench, 6 shared", "1 bench id (1 shared)",
                 "(95% range 0–3)", "z = 5.11, P(X ≥ 6) = 3.8e-05", "P(X ≥ 6) ≈ 4.0e-05 ± 2.0e-05 by 100,000 draws",
                 "1 bench item under 8 words", "median 1 word, max 3 words"):
        assert cell in text, cell
    for old in ("p≥", "p≤", "6/8 (3)", "8 / 9 / 6 of 61", "without id) /", "[0–3]", "1 rows"):
        assert old not in text, old
    markdown = render_markdown(demo_summary)
    assert markdown.startswith("| measure | cybergym |")
    assert "| chance, uniform | observed 6, expected 1.2 ± 0.9 (95% range 0–3), z = 5.11, P(X ≥ 6) = 3.8e-05 |" \
        in markdown
    assert not BAD_PLURAL.search(markdown + explain(demo_summary))


def test_report_md_uses_the_same_cells(demo_result):
    from overlap.outputs.report.markdown import render_markdown as report_markdown
    from overlap.outputs.report.result_view import view_of

    md = report_markdown(view_of(demo_result))
    assert "| uniform | 6 | 1.18 | 0.9428 | 0–3 | 5.112 | P(X ≥ 6) = 3.8e-05 |" in md
    assert "(95% range 0–3)" in md and "p≥" not in md
    tables = "\n".join(line for line in md.splitlines() if line.startswith("|"))  # notes come from producers
    assert not BAD_PLURAL.search(tables), BAD_PLURAL.search(tables)


def test_thousands_separators_on_a_large_set(tmp_path):
    data = {"mimo-cyber": write_mimo(tmp_path / "mimo", ids=[f"arvo_{20000 + i}" for i in range(1500)]),
            "cybergym": write_cybergym(tmp_path / "cg", tasks=[(f"arvo:{20000 + i}", f"p{i % 7}")
                                                                for i in range(300, 1600)]),
            "arvo": write_mapping(tmp_path / "map")}
    summary = compare("mimo-cyber", ["cybergym"], data=data, permutations=0).summary()
    for width in (80, 120):
        console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        print_table(summary, console)
        text = console.export_text()
        check_fits(text, width, ["measure", "cybergym"])
        assert "1,500" in text and "1,200 of 1,300 (92.3%)" in text and "1500" not in text


@pytest.fixture(scope="module")
def swe_data(tmp_path_factory):
    return write_swe(tmp_path_factory.mktemp("swe"))


@pytest.mark.parametrize("width", [80, 120])
def test_matrix_fits_the_terminal(width, swe_data):
    from overlap.api import matrix
    from overlap.outputs.report.matrix_folder import couple_rows, matrix_rows

    args = ["matrix", *BENCHES, *[a for name, path in swe_data.items() for a in ("--data", f"{name}={path}")]]
    run = CliRunner().invoke(app, args, env={"COLUMNS": str(width)})
    assert run.exit_code == 0, run.output
    result = matrix(BENCHES, data=swe_data)
    header, rows = couple_rows(result)
    shown = [h for i, h in enumerate(header) if i < 2 or any(row[i] for row in rows)]  # an empty column is left out
    headers = [*matrix_rows(result)[0], *[identifier_words(h) for h in shown]]
    check_fits(run.stdout, width, [w for h in headers for w in h.split()])
    assert "same_pr" not in run.stdout and "same PR" in run.stdout
    for name in BENCHES:  # a benchmark shown by a code is named in the legend
        assert whole(name, run.stdout)


def test_stdout_width_is_fixed_when_not_a_terminal(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert stdout_console().width == 100  # pytest's stdout is not a terminal
    monkeypatch.setenv("COLUMNS", "72")
    assert stdout_console().width == 72


def test_cell_helpers():
    assert count(1507) == "1,507" and count(None) == "n/a" and count(2.0) == "2"
    assert plural(1, "row") == "1 row" and plural(2, "row") == "2 rows" and plural(1507, "bench item") == \
        "1,507 bench items"
    assert part_of(6, 8) == "6 of 8" and part_of(7, 10, 0.7, word="pair") == "7 of 10 pairs (70.0%)"
    assert range95([0, 3]) == "95% range 0–3" and range95(None) == ""
    assert tail(6, 3.846e-05) == "P(X ≥ 6) = 3.8e-05" and tail(2, 0.5, upper=False) == "P(X ≤ 2) = 0.5"


def test_widths_never_split_words():
    assert column_widths(["a", "b"], [["one two", "three"]], 20) is not None
    assert column_widths(["header"], [["a-very-long-unbreakable-word"]], 20) is None
