"""A local folder laid out like a Hub dataset repo (a clone) whose README.md declares `configs:` gives, with
--split, the files the card names for that split, as the Hub does: it picked files by their names, so a card
mapping `train` to `extra/*` read `data/train-*` instead (another split's rows, exit 0)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from overlap.errors import InputError
from overlap.sources.formats.batches import open_batches

CARD = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: \"extra/*\"\n"
        "  - split: test\n    path: \"data/*\"\n---\n# a card\n")


def _folder(tmp_path, card):
    folder = tmp_path / "clone"
    for relpath, n in (("data/train-00000-of-00001.jsonl", 0), ("data/test-00000-of-00001.jsonl", 1),
                       ("extra/more.jsonl", 2)):
        (folder / relpath).parent.mkdir(parents=True, exist_ok=True)
        (folder / relpath).write_text(json.dumps({"n": n}) + "\n")
    if card is not None:
        (folder / "README.md").write_text(card)
    return folder


def _rows(folder, split):
    return pa.Table.from_batches(list(open_batches(folder, ["n"], split=split))).column("n").to_pylist()


def test_the_card_decides_the_split_of_a_clone(tmp_path):
    folder = _folder(tmp_path, CARD)
    assert _rows(folder, "train") == [2]
    assert sorted(_rows(folder, "test")) == [0, 1]
    with pytest.raises(InputError, match="no split 'validation'"):
        _rows(folder, "validation")


@pytest.mark.parametrize("card", [None, "# no front matter\n", "---\nlicense: mit\n---\n",
                                  "---\nconfigs:\n- config_name: a\n  data_files: extra/*\n"
                                  "- config_name: b\n  data_files: data/*\n---\n"])
def test_without_a_card_that_decides_the_names_do(tmp_path, card):
    assert _rows(_folder(tmp_path, card), "train") == [0]
