"""text_check: the one entry point (flags, runs, boilerplate, identifiers, counts, summary)."""

import json

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from overlap.errors import InputError
from overlap.text import TextResult, text_check
from overlap.text.api import ngram_sizes


def w(prefix, k, start=0):
    return " ".join(f"{prefix}{i}" for i in range(start, start + k))


TEMPLATE = "thanks for filing this issue please fill in every section of the form below before you submit it"


def bench_frame():
    texts = [
        w("alpha", 30),  # b0
        w("beta", 30),  # b1
        "too short",  # b2
        None,  # b3
        "Crash in png_read_row while reading " + w("gamma", 20),  # b4
    ] + [f"{TEMPLATE} {w(f'tmpl{i}_', 20)}" for i in range(6)]  # b5..b10 share a template
    return pd.DataFrame({"item_id": [f"b{i}" for i in range(len(texts))], "description": texts})


def train_frame():
    return pd.DataFrame({
        "item_id": ["t0", "t1", "t2", "t3", "t4", "t5", "t6"],
        "prompt": [
            f"copy {w('alpha', 20, 4)} end",  # own counterpart b0
            f"copy {w('beta', 15)} end",  # counterpart is b0, flagged by b1: another bench item
            f"{TEMPLATE} my own words here",  # template only
            "nothing shared",  # rest, not flagged
            f"rest copy {w('gamma', 14)}",  # not id-matched, flagged by b4
            None,
            "SEGV in function `png_read_row` in file `pngread.c` " + w("alpha", 10),
        ],
    })


PAIRS = pd.DataFrame({"train_id": ["t0", "t1", "t2", "t5", "t6", "t0"],
                      "bench_id": ["b0", "b0", "b5", "b1", "b4", "b99"]})


@pytest.fixture(scope="module")
def result() -> TextResult:
    return text_check(train_frame(), bench_frame(), "prompt", "description", pairs=PAIRS, workers=1)


def test_flags_table(result):
    f = result.flags
    assert list(f.columns) == ["train_id", "n", "bench_id", "shared", "train_start", "train_end", "bench_start",
                               "bench_end", "words"]
    got = list(zip(f["train_id"], f["n"], f["bench_id"], f["shared"], f["train_start"], f["train_end"], strict=True))
    assert got == [
        ("t0", 13, "b0", 8, 1, 21), ("t0", 8, "b0", 13, 1, 21),
        ("t1", 13, "b1", 3, 1, 16), ("t1", 8, "b1", 8, 1, 16),
        ("t4", 13, "b4", 2, 2, 16), ("t4", 8, "b4", 7, 2, 16),
        ("t6", 8, "b0", 3, 8, 18),
    ]
    assert f.loc[0, "words"] == w("alpha", 20, 4)
    assert result.reasons()["reason"].tolist() == ["ngram:13", "ngram:8"] * 3 + ["ngram:8"]


def test_runs_table(result):
    r = result.runs.set_index(["train_id", "bench_id"])
    assert r.loc[("t0", "b0"), "longest_run"] == 20
    assert r.loc[("t0", "b0"), "train_pos"] == 1 and r.loc[("t0", "b0"), "bench_pos"] == 4
    assert r.loc[("t0", "b0"), "words"] == w("alpha", 20, 4)
    assert r.loc[("t1", "b0"), "longest_run"] == 0
    assert r.loc[("t2", "b5"), "longest_run"] == 18  # the template: a run, but no flag
    assert pd.isna(r.loc[("t5", "b1"), "longest_run"])  # train text missing
    assert pd.isna(r.loc[("t0", "b99"), "longest_run"])  # bench id missing


def test_identifiers_table(result):
    ident = result.identifiers.set_index(["train_id", "bench_id"])
    assert bool(ident.loc[("t6", "b4"), "function_named"]) is True
    assert bool(ident.loc[("t6", "b4"), "file_named"]) is False
    assert pd.isna(ident.loc[("t0", "b0"), "function_named"])


def test_summary(result):
    s = result.summary()
    json.dumps(s)  # JSON-ready
    f13 = s["flags"]["13"]
    assert f13["train_items_flagged"] == 3 and f13["bench_items_hit"] == 3
    assert f13["id_matched"] == {"items": 5, "flagged": 2, "by_counterpart": 1, "by_other_bench_item": 1,
                                 "by_other_only": 1}
    assert f13["rest"] == {"items": 2, "flagged": 1}
    assert f13["boilerplate"] == {"train_items": 1, "hits": 6}
    f8 = s["flags"]["8"]
    assert f8["id_matched"]["flagged"] == 3 and f8["id_matched"]["by_other_only"] == 2
    assert s["runs"] == {"pairs": 6, "with_text": 4, "median": 9.5, "max": 20, "at_least_n": {"13": 2, "8": 2}}
    assert s["bench"]["short"] == {"13": 1, "8": 1} and s["bench"]["null"] == 1
    assert s["train"]["null"] == 1 and s["train"]["items"] == 7
    assert s["boilerplate"]["top_spans"][0]["bench_items"] == 6
    assert s["identifiers"]["function_named"] == 1
    assert s["pairs_missing"] == {"train_ids_not_in_train": 0, "bench_ids_not_in_bench": 1}
    assert s["params"] == {"ns": [13, 8], "boilerplate_threshold": 5, "tokenizer": "words", "mask_spans": True}


def test_streamed_train_gives_the_same_result(result):
    table = pa.Table.from_pandas(train_frame(), preserve_index=False)
    streamed = text_check(iter(table.to_batches(max_chunksize=2)), bench_frame(), "prompt", "description",
                          pairs=PAIRS, workers=1)
    pd.testing.assert_frame_equal(streamed.flags, result.flags)
    pd.testing.assert_frame_equal(streamed.runs, result.runs)
    assert streamed.summary() == result.summary()


def test_process_pool_gives_the_same_result(result):
    pooled = text_check(train_frame(), bench_frame(), "prompt", "description", pairs=PAIRS, workers=2,
                        batch_rows=2)
    pd.testing.assert_frame_equal(pooled.flags, result.flags)
    pd.testing.assert_frame_equal(pooled.runs, result.runs)
    assert pooled.summary() == result.summary()


def test_bad_inputs_are_counted():
    train = pd.DataFrame({"item_id": ["a", "b", "c", "d"],
                          "prompt": [b"\xff\xfebad", "", None, "fine " + w("alpha", 13)]})
    res = text_check(train, bench_frame(), "prompt", "description", workers=1)
    assert res.train_counts["non_utf8"] == 1 and res.train_counts["null"] == 1
    assert res.train_counts["empty"] == 1
    assert res.flagged(13) == {"d"}


def test_missing_columns_and_bad_parameters():
    with pytest.raises(InputError, match="no column 'text'"):
        text_check(train_frame(), bench_frame(), "text", "description")
    with pytest.raises(InputError, match="no column 'nope'"):
        text_check(train_frame(), bench_frame(), "prompt", "nope")
    with pytest.raises(InputError, match="threshold"):
        text_check(train_frame(), bench_frame(), "prompt", "description", boilerplate_threshold=1)


def test_custom_ns_and_no_pairs():
    res = text_check(train_frame(), bench_frame(), "prompt", "description", ns=(20,), workers=1)
    assert res.flagged(20) == {"t0"}
    assert res.identifiers is None and len(res.runs) == 0
    s = res.summary()
    assert list(s["flags"]) == ["20"] and s["flags"]["20"]["rest"] == {"items": 7, "flagged": 1}


def test_unknown_tokenizer_is_an_input_error():
    with pytest.raises(InputError, match="unknown tokenizer"):
        text_check(train_frame(), bench_frame(), "prompt", "description", tokenizer="bpe")
    res = text_check(train_frame(), bench_frame(), "prompt", "description", tokenizer="identifiers", workers=None)
    assert res.tokenizer == "identifiers" and res.flagged(13) == {"t0", "t1", "t4"}


@given(st.one_of(st.text(min_size=1, max_size=4), st.booleans(), st.floats(), st.none(),
                 st.lists(st.one_of(st.text(max_size=3), st.booleans(), st.integers(max_value=0)), min_size=1,
                          max_size=3)))
def test_ngram_sizes_never_convert_what_is_not_a_size(ns):
    # int("13") per character would scan 1- and 3-grams, int(True) 1-grams: a wrong check, silently
    with pytest.raises(InputError, match="n-gram sizes"):
        ngram_sizes(ns)


@given(st.one_of(st.integers(1, 64), st.lists(st.integers(1, 64), min_size=1, max_size=4)))
def test_ngram_sizes_keep_every_size(ns):
    assert ngram_sizes(ns) == ((ns,) if isinstance(ns, int) else tuple(ns))
