"""Dataset names come from the data (a local file's name, a hand-edited summary): report.md and the card section
show them as written, never as Markdown or HTML. Rule (overlap/outputs/report/markdown.py): `\\`, `|`, `<` and `>` are
backslash-escaped, a line break is `<br>`, and a command keeps one code span whatever backticks it holds."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.outputs.report.markdown import render_markdown
from overlap.outputs.report.result_folders import write_compare_report
from overlap.outputs.report.result_view import load_result
from overlap.outputs.ship.cards import card_update


def _shown(name: str) -> str:
    """`name` as the rule writes it in Markdown text."""
    out = "".join("\\" + c if c in "\\|<>" else c for c in name).replace("](", "\\](")
    return out.replace("\r", "").replace("\n", "<br>")


def _renamed(folder, train: str, bench: str) -> None:
    path = folder / "summary.json"
    summary = json.loads(path.read_text())
    summary["train"]["name"] = train
    summary["benches"][0]["bench"] = bench
    summary.setdefault("parameters", {})["labels"] = [train, bench]
    path.write_text(json.dumps(summary))
    pairs = pd.read_csv(folder / "pairs.csv", dtype=str, keep_default_na=False)
    pairs.assign(bench=bench).to_csv(folder / "pairs.csv", index=False)


def test_names_with_markup_stay_text_in_the_report_and_the_card(demo_result, tmp_path):
    folder = tmp_path / "res"
    write_compare_report(demo_result, folder)
    train, bench = "my\nset <b>x</b>|y`", "cy<script>ber</script>"
    _renamed(folder, train, bench)
    view = load_result(folder)
    report = render_markdown(view)
    assert report.splitlines()[0] == f"# overlap: {_shown(train)} vs {_shown(bench)}"
    assert f"## {_shown(bench)}" in report.splitlines()
    readme = card_update(view, "# card\n").files["README.md"]
    assert f"## Overlap with {_shown(bench)}" in readme.splitlines()
    assert f"``overlap filter my set <b>x</b>|y` {bench}``" in readme
    for text in (report, readme):  # outside code spans (shown as written) no tag of the names is left raw
        prose = re.sub(r"(`+).*?\1", "", text)
        assert not {"<b>", "</b>", "<script>", "</script>"} & set(re.findall(r"(?<!\\)</?\w+>", prose))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.sampled_from("ab<>|\\`\n]( "), min_size=1, max_size=12).filter(lambda s: s.strip()))
def test_any_bench_name_is_one_heading_line(demo_result, tmp_path_factory, name):
    if not _WRITTEN:  # one compare folder, copied for each name
        _WRITTEN.append(tmp_path_factory.mktemp("written"))
        write_compare_report(demo_result, _WRITTEN[0])
    folder = tmp_path_factory.mktemp("res")
    shutil.copytree(_WRITTEN[0], folder, dirs_exist_ok=True)
    _renamed(folder, "train", name)
    readme = card_update(load_result(folder), "").files["README.md"]
    assert f"## Overlap with {_shown(name)}" in readme.splitlines()
    command = next(line for line in readme.splitlines() if line.startswith("- Train without these rows: "))
    span = command.removeprefix("- Train without these rows: ").split(" (it also writes ")[0]
    fence = span[: len(span) - len(span.lstrip("`"))]
    inner = span[len(fence):-len(fence)]
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip():  # CommonMark strips one space each side
        inner = inner[1:-1]
    assert "`" * len(fence) not in inner and inner == f"overlap filter train {' '.join(name.splitlines())}"


_WRITTEN: list = []
