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


@pytest.mark.parametrize(("options", "message"), [
    ({"columns": "extra_info.instance_id"}, "columns: expected a dict"),
    ({"columns": ["id"]}, "columns: expected a dict"),  # dict(["id"]) would be {'i': 'd'}
    ({"id_column": 5}, "id_column: expected a column name"),
    ({"columns": {"id": "extra_info.instance_id", "repo": ["repo"]}}, "repo_column: expected a column name"),
    ({"ngram_ns": "13"}, "n-gram sizes"),  # never the sizes 1 and 3
    ({"ngram_ns": None}, "n-gram sizes"),
    ({"seed": "0"}, "seed: expected a whole number"),
    ({"workers": "2"}, "workers: expected a whole number"),
    ({"boilerplate_threshold": "5"}, "boilerplate_threshold: expected a whole number"),
    ({"mapping": "arvo.csv"}, "mapping: expected an OssFuzzMapping"),
    ({"pool": 3}, "pool: expected"),
    ({"reference": 3}, "expected a dataset name or a path, got int"),
])
def test_wrongly_typed_arguments_are_input_errors(options, message):
    train = str(DEMO_ROOT / "mimo-cyber" / "cyber.parquet") if {"columns", "id_column"} & set(options) \
        else "mimo-cyber"
    with pytest.raises(InputError, match=re.escape(message)):
        compare(train, "cybergym", data=demo_data("str"), **{**FAST, **options})


def test_a_split_nothing_reads_is_refused():
    # every dataset is registered: a split would pick no file, and the answer would be the whole set's
    with pytest.raises(InputError, match="split 'train'"):
        compare("mimo-cyber", "cybergym", data=demo_data("str"), split="train", **FAST)


def test_one_name_or_path_is_one_dataset_in_matrix_atlas_and_load(tmp_path):
    from overlap.api import matrix
    from overlap.api.atlas import atlas
    from overlap.sources.load import load_dataset

    with pytest.raises(InputError, match="at least two benchmarks"):  # not "unknown dataset 'c'"
        matrix("cybergym", data=demo_data("str"))
    with pytest.raises(InputError, match="cybergym alone makes no cell"):
        atlas("cybergym", data=demo_data("str"), cache=tmp_path, pool=None)
    with pytest.raises(InputError, match="got NoneType"):
        matrix(None)
    both = matrix([DEMO_ROOT / "cybergym", "cybergym:arvo"], data=demo_data("str"))
    assert len(both.datasets) == 2
    dataset = load_dataset(DEMO_ROOT / "mimo-cyber" / "cyber.parquet")  # a Path, as compare takes one
    assert len(dataset.items) == 11
    by_str = load_dataset("cybergym", {"cybergym": str(DEMO_ROOT / "cybergym")})
    assert by_str.provenance.origin != "hub"
    with pytest.raises(InputError, match="expected a dict"):
        load_dataset("cybergym", ["cybergym=./x"])


def test_filter_arguments_are_checked_before_anything_is_read(tmp_path):
    from overlap.api import filter_train

    with pytest.raises(InputError, match="out: expected the folder"):
        filter_train("mimo-cyber", "cybergym", None, data=demo_data("str"))
    with pytest.raises(InputError, match="reasons: expected a list"):
        filter_train("mimo-cyber", "cybergym", tmp_path / "a", data=demo_data("str"), reasons=None)
    one = filter_train("mimo-cyber", "cybergym", tmp_path / "one", data=demo_data("str"), reasons="id")
    listed = filter_train("mimo-cyber", "cybergym", tmp_path / "list", data=demo_data("str"), reasons=["id"])
    assert one.decision.removed.equals(listed.decision.removed) and len(one.decision.removed) == 8


def test_a_missing_training_file_is_named_before_a_benchmark_is_fetched(tmp_path, monkeypatch):
    """A typo in the training path says so, not that a benchmark could not be downloaded (nothing is fetched)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(InputError, match=r"missing\.parquet: no such file, folder or glob"):
        compare(str(tmp_path / "missing.parquet"), ["cybergym"], id_column="id")
