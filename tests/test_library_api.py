"""The library entry point as a Python user calls it (README "Library"): `data` paths as str or Path, relative
or absolute; one benchmark as a plain string; `text` as "TRAIN:BENCH" strings or tuples; errors are
`InputError`s that do not name CLI flags; a short repr, an HTML repr and `result["bench"]`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from overlap.api import BenchComparison, CompareResult, compare
from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError, OverlapError

FAST = {"permutations": 200, "evidence": False, "text": []}


def demo_data(style: str) -> dict:
    paths = {name: DEMO_ROOT / name for name in ("mimo-cyber", "cybergym", "arvo", "arvo-meta")}
    if style == "str":
        return {name: str(path) for name, path in paths.items()}
    return paths


@pytest.fixture(scope="module")
def result() -> CompareResult:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        return compare("mimo-cyber", "cybergym", data=demo_data("path"), permutations=200)


def test_data_values_may_be_str_path_relative_or_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(DEMO_ROOT.parent)  # relative paths are read from the current folder, once
    relative = {"mimo-cyber": "demo/mimo-cyber", "cybergym": "./demo/cybergym", "arvo": Path("demo/arvo")}
    by_relative = compare("mimo-cyber", ["cybergym"], data=relative, **FAST)
    monkeypatch.chdir(tmp_path)  # the result does not depend on the folder it is used from afterwards
    by_str = compare("mimo-cyber", ["cybergym"], data=demo_data("str"), **FAST)
    assert by_relative["cybergym"].contaminated_ids() == by_str["cybergym"].contaminated_ids()
    assert by_str["cybergym"].items_matched == 7
    location = by_relative.train.provenance.location
    assert Path(location).is_absolute()


def test_data_names_may_be_aliases_and_errors_are_input_errors(tmp_path):
    with pytest.raises(OverlapError, match="unknown dataset 'no-such-set'"):
        compare("mimo-cyber", "cybergym", data={"no-such-set": tmp_path}, **FAST)
    with pytest.raises(InputError, match=r"data\['arvo'\]: .* does not exist") as info:
        compare("mimo-cyber", "cybergym", data={"arvo": tmp_path / "missing"}, **FAST)
    assert "--" not in str(info.value)
    with pytest.raises(InputError, match="expected a dict"):
        compare("mimo-cyber", "cybergym", data=["arvo=./ARVO"], **FAST)


def test_one_benchmark_as_a_string_is_one_benchmark(result):
    assert [b.name for b in result.benches] == ["cybergym"]
    assert result.parameters["benches"] == ["cybergym"]


@pytest.mark.parametrize("text", [["prompt:description"], "prompt:description", [("prompt", "description")]])
def test_text_accepts_strings_and_tuples(text):
    got = compare("mimo-cyber", "cybergym", data=demo_data("str"), permutations=200, evidence=False, text=text,
                  ngram_ns=13)
    block = got["cybergym"].sections["text"]
    fields = block if isinstance(block, list) else block.get("fields", [block])
    assert "prompt" in repr(fields) and "description" in repr(fields)


@pytest.mark.parametrize("text, message", [
    (["prompt"], "expected 'TRAIN_FIELD:BENCH_FIELD'"),
    ([":description"], "expected 'TRAIN_FIELD:BENCH_FIELD'"),
    ([("prompt",)], "expected 'TRAIN_FIELD:BENCH_FIELD'"),
    (42, "expected a list"),
    (["nofield:description"], "mimo-cyber has no text field 'nofield'"),
    (["prompt:nofield"], "cybergym has no text field 'nofield'"),
])
def test_text_errors_are_input_errors_without_cli_flags(text, message):
    with pytest.raises(InputError, match=re.escape(message)) as info:
        compare("mimo-cyber", "cybergym", data=demo_data("str"), **{**FAST, "text": text})
    assert "--" not in str(info.value)


def test_other_argument_errors_do_not_name_flags():
    with pytest.raises(InputError) as info:
        compare("mimo-cyber", "cybergym", data=demo_data("str"), fix_join="sometimes", **FAST)
    assert "--" not in str(info.value) and "fix_join" in str(info.value)
    with pytest.raises(InputError, match="not a list"):
        compare(["mimo-cyber"], "cybergym", data=demo_data("str"), **FAST)
    with pytest.raises(InputError, match="at least one benchmark"):
        compare("mimo-cyber", [], data=demo_data("str"), **FAST)


def test_short_repr_without_dataframes(result):
    text = repr(result)
    assert text == "<CompareResult mimo-cyber (11 items) vs cybergym: 7 of 10 items matched>"
    assert repr(result["cybergym"]) == "<BenchComparison cybergym: 7 of 10 items matched, 8 pairs>"
    assert len(text) < 200 and "DataFrame" not in text


def test_html_repr_is_a_small_table(result):
    html = result._repr_html_()
    assert html.count("<table>") == 1 and "<td>cybergym</td>" in html
    assert "<td>10</td><td>7</td><td>70.0%</td>" in html
    assert len(html) < 2000


def test_getitem_by_name_and_position(result):
    assert isinstance(result["cybergym"], BenchComparison)
    assert result["cybergym"] is result[0]
    assert "cybergym" in result and "swe-bench" not in result
    with pytest.raises(KeyError, match="its benchmarks: cybergym"):
        result["swe-bench"]


def test_pair_records_give_kinds_as_lists(result):
    comp = result["cybergym"]
    records = comp.pair_records()
    assert len(records) == len(comp.pairs)
    for record, joined in zip(records, comp.pairs["kinds"], strict=True):
        assert isinstance(record["kinds"], list) and ";".join(record["kinds"]) == joined
    assert all(isinstance(k, str) for k in comp.pairs["kinds"])  # the DataFrame (and pairs.csv) stay joined


def test_clean_and_contaminated_ids_partition_the_benchmark(result):
    comp = result["cybergym"]
    clean, dirty = comp.clean_ids(), comp.contaminated_ids()
    assert len(dirty) == comp.items_matched == 7
    assert sorted(clean + dirty) == sorted(comp.bench.items["item_id"])
