"""Hostile inputs to the text check: n-gram sizes out of range, and streamed JSON text columns holding no text."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from overlap.errors import InputError
from overlap.text import text_check
from overlap.text.api import MAX_NGRAM, ngram_sizes

WORDS = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
BENCH = pd.DataFrame({"item_id": ["B"], "text": [WORDS + " 12345 true 1.5"]})


@pytest.mark.parametrize("n", [MAX_NGRAM + 1, 2**40, 2**63, 2**64])
def test_ngram_size_over_the_cap_is_refused(n):
    # an unbounded n asked the scan for terabytes (MemoryError) or overflowed a C long
    with pytest.raises(InputError, match="from 1 to 64"):
        ngram_sizes((13, n))
    train = pd.DataFrame({"item_id": ["t"], "text": [WORDS]})
    with pytest.raises(InputError, match="from 1 to 64"):
        text_check(train, BENCH, "text", "text", ns=(n,), workers=1)


def test_ngram_size_at_the_cap_runs():
    assert ngram_sizes([MAX_NGRAM, 1]) == (MAX_NGRAM, 1)


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("cell, shown", [(12345, "the number 12345"), (True, "the boolean true"),
                                         (1.5, "the number 1.5"), (["x"], "a list"), ({"a": 1}, "an object")])
def test_streamed_json_text_cell_that_is_no_text_is_refused(tmp_path, cell, shown):
    # read as files (a folder), a number beside text was written as its digits and scanned as words: "12345"
    # flagged against a bench holding 12345, where the row reader counts it as no text
    folder = tmp_path / "shards"
    folder.mkdir()
    _write(folder / "a.jsonl", [{"item_id": "t", "text": WORDS}, {"item_id": "n", "text": cell}])
    with pytest.raises(InputError) as err:
        text_check(str(folder), BENCH, "text", "text", ns=(1,), workers=1)
    message = str(err.value)
    assert "a.jsonl: line 2: column 'text'" in message and shown in message and "\n" not in message


def test_streamed_json_text_column_of_numbers_only_is_refused(tmp_path):
    # pyarrow reads such a column as numbers (floats with fractions then became text): refused the same way
    folder = tmp_path / "shards"
    folder.mkdir()
    _write(folder / "a.jsonl", [{"item_id": "a", "text": 1.5}, {"item_id": "b", "text": 2.5}])
    with pytest.raises(InputError, match="line 1: column 'text' holds the number 1.5"):
        text_check(str(folder), BENCH, "text", "text", ns=(1,), workers=1)


def test_streamed_json_numeric_ids_still_read(tmp_path):
    # only the text column is held to text: ids written as numbers stay ids
    folder = tmp_path / "shards"
    folder.mkdir()
    _write(folder / "a.jsonl", [{"item_id": 7, "text": WORDS}, {"item_id": "x8", "text": None}])
    result = text_check(str(folder), BENCH, "text", "text", ns=(13,), workers=1)
    assert result.flags["train_id"].tolist() == ["7"]
