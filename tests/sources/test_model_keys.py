"""Dataset validation (overlap.model): the vectorised de-duplication and orphan check keep what the model
promises: the same rows as `drop_duplicates` (first copy kept, in order, nulls equal to nulls), and keys
naming an unknown item refused."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from overlap.errors import InputError
from overlap.model import Dataset, Provenance, make_keys


def _reference(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype("string").drop_duplicates().reset_index(drop=True)


@pytest.mark.parametrize("seed", range(30))
def test_make_keys_drops_the_same_rows_as_drop_duplicates(seed):
    rng = random.Random(seed)
    ids = ["a", "b", "c", None, "Ａ"][: rng.randint(1, 5)]
    kinds = ["repo_pr", "base", "cve", None][: rng.randint(1, 4)]
    values = ["x", "y", "x#1", "é"]
    raws = ["x", "X", None, "y"]
    rows = [(rng.choice(ids), rng.choice(kinds), rng.choice(values), rng.choice(raws))
            for _ in range(rng.randint(0, 40))]
    frame = pd.DataFrame(rows, columns=["item_id", "kind", "value", "raw"])
    pd.testing.assert_frame_equal(make_keys(frame), _reference(frame) if len(frame) else make_keys(frame))


def test_make_keys_keeps_first_copies_in_order():
    frame = pd.DataFrame({"item_id": ["b", "a", "b", "a", "b"], "kind": ["cve"] * 5,
                          "value": ["2", "1", "2", "3", "4"], "raw": ["r2", "r1", "r2", "r3", "r4"]})
    assert make_keys(frame)["value"].tolist() == ["2", "1", "3", "4"]


def test_keys_naming_an_unknown_item_are_refused():
    items = pd.DataFrame({"item_id": ["a", "b"], "row": [0, 1]})
    keys = pd.DataFrame({"item_id": ["a", "zz", "c"], "kind": ["cve"] * 3, "value": ["1", "2", "3"],
                         "raw": ["1", "2", "3"]})
    with pytest.raises(InputError, match="keys name unknown item id 'c'"):
        Dataset("d", items, keys, Provenance("d", "local-file"))
    keys.loc[1, "item_id"] = None
    with pytest.raises(InputError, match="unknown item id"):
        Dataset("d", items, keys, Provenance("d", "local-file"))
    dataset = Dataset("d", items, keys.iloc[[0, 0]], Provenance("d", "local-file"))
    assert dataset.keys["item_id"].tolist() == ["a"]
