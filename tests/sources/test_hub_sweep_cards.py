"""Hostile dataset cards in folders laid out like Hub repos (and in a fake Hub): a config's `data_dir` roots
its files, a config without `data_files` splits its files by their names, a card whose YAML cannot be parsed
or whose configs are not names and patterns is one error naming the card, and a card pattern that no file of
a local copy matches is a part of the repo that is not there. Before, `data_dir` was ignored (another
config's rows read as this one's), `--split` on a config without `data_files` read every split, a broken
header fell back to the files' names, a pattern like `path: 5` was a TypeError, and a missing part of a clone
was read as if whole."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from fake_hub import FakeHubFileSystem, make_repo

from overlap.errors import InputError
from overlap.sources.formats.batches import open_batches
from overlap.sources.places.card import choose_files

SHA = "a" * 40
FILES = {"data/train-00000-of-00001.jsonl": 0, "data/test-00000-of-00001.jsonl": 1,
         "other/train-00000-of-00001.jsonl": 2}


def _clone(tmp_path: Path, card: str, files: dict[str, int] = FILES) -> Path:
    folder = tmp_path / "clone"
    for relpath, n in files.items():
        (folder / relpath).parent.mkdir(parents=True, exist_ok=True)
        (folder / relpath).write_text(json.dumps({"n": n}) + "\n")
    (folder / "README.md").write_text(card)
    return folder


def _rows(source, split=None, filesystem=None) -> list[int]:
    batches = list(open_batches(source, ["n"], split=split, filesystem=filesystem))
    return sorted(pa.Table.from_batches(batches).column("n").to_pylist())


DATA_DIR = ("---\nconfigs:\n- config_name: default\n  data_dir: data\n- config_name: other\n  data_dir: ./other/\n"
            "---\n")


def test_data_dir_roots_a_configs_files_in_a_clone(tmp_path):
    folder = _clone(tmp_path, DATA_DIR)
    assert _rows(folder, "train") == [0]  # other/'s train file is the other config's
    assert _rows(folder, "test") == [1]


def test_data_dir_roots_a_configs_files_on_the_hub(tmp_path):
    repo = tmp_path / "hub"
    make_repo(repo, "o/dirs", {name: (json.dumps({"n": n}) + "\n").encode() for name, n in FILES.items()}
              | {"README.md": DATA_DIR.encode()}, SHA)
    hub = FakeHubFileSystem(repo, {("o/dirs", "main"): SHA})
    assert _rows("o/dirs", filesystem=hub) == [0, 1]
    assert _rows("o/dirs:other", filesystem=hub) == [2]
    assert _rows("o/dirs", "test", filesystem=hub) == [1]


def test_data_files_are_relative_to_data_dir():
    card = {"configs": [{"config_name": "default", "data_dir": "data", "data_files": [
        {"split": "train", "path": "train-*"}]}]}
    names = list(FILES)
    assert choose_files(names, card, None, "train", "x") == ["data/train-00000-of-00001.jsonl"]


@pytest.mark.parametrize("data_dir", ["../elsewhere", "/etc", "data/../../x"])
def test_a_data_dir_outside_the_repo_is_refused(tmp_path, data_dir):
    folder = _clone(tmp_path, f"---\nconfigs:\n- config_name: default\n  data_dir: {data_dir}\n---\n")
    with pytest.raises(InputError, match=r"config 'default' has data_dir .* not a folder inside the repo"):
        _rows(folder, "train")


def test_a_config_without_data_files_splits_by_the_names(tmp_path):
    folder = _clone(tmp_path, "---\nconfigs:\n- config_name: default\n  default: true\n---\n")
    assert _rows(folder, "test") == [1]  # every file was read for any split


@pytest.mark.parametrize("card", [
    "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: true\n---\n",
    "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: [null]\n---\n",
    "---\nconfigs:\n- config_name: [a]\n---\n",
    "---\nconfigs:\n- config_name: default\n  data_files:\n    train: {a: 1}\n---\n",
    "---\nconfigs:\n- config_name: default\n  data_dir: {a: 1}\n---\n",
])
def test_configs_that_are_not_names_and_patterns_are_one_error(tmp_path, card):
    with pytest.raises(InputError, match=r"README.md's configs give .* not text.*fix the configs"):
        _rows(_clone(tmp_path, card), "train")


def test_a_card_header_that_cannot_be_parsed_is_named(tmp_path):
    folder = _clone(tmp_path, "---\nconfigs: [\n  - config_name: x\n---\n")
    with pytest.raises(InputError, match=r"README.md: the card's YAML header declares configs but cannot be "
                                         r"parsed \(line \d+\).*fix the YAML"):
        _rows(folder, "train")
    # a broken header that says nothing of the files leaves the names to decide
    assert _rows(_clone(tmp_path, "---\nlicense: [mit\n---\n"), "train") == [0, 2]


def test_a_card_pattern_no_file_of_a_clone_matches_is_a_missing_part(tmp_path):
    card = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n"
            "  - split: train\n    path: extra/more-*.jsonl\n---\n")
    with pytest.raises(InputError, match=r"reads extra/more-\*\.jsonl, and no file in the folder matches it"):
        _rows(_clone(tmp_path, card), "train")


def test_a_huge_card_header_is_read_quickly(tmp_path):
    """The header is parsed only when it declares configs, and by libyaml when installed: a 50 MB scalar took
    half a minute in pure Python."""
    import time

    folder = _clone(tmp_path, "---\nlicense: " + "a" * 50_000_000 + "\n---\n")
    started = time.monotonic()
    assert _rows(folder, "train") == [0, 2]
    assert time.monotonic() - started < 10


def test_a_card_the_hub_lists_but_cannot_serve_is_an_error(tmp_path):
    """A card read failing on the network was taken for no card: the files were then chosen by their names."""
    from overlap.errors import HubUnavailableError

    class Flaky(FakeHubFileSystem):
        def cat_file(self, path, start=None, end=None, **kwargs):
            raise ConnectionError("connection reset")

    repo = tmp_path / "hub"
    make_repo(repo, "o/dirs", {"data/train-0.jsonl": b'{"n": 0}\n', "README.md": DATA_DIR.encode()}, SHA)
    with pytest.raises(HubUnavailableError, match=r"o/dirs@aaaaaaaaaaaa: README.md: cannot read the dataset card"):
        _rows("o/dirs", filesystem=Flaky(repo, {("o/dirs", "main"): SHA}))


@pytest.mark.parametrize("split", ["../x", "トレイン"])
def test_odd_split_names_and_patterns_outside_the_repo(tmp_path, split):
    card = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: ../x\n    path: ../elsewhere/*\n"
            "  - split: トレイン\n    path: data/train-*\n---\n")
    folder = _clone(tmp_path, card)
    if split == "../x":
        with pytest.raises(InputError, match=r"reads \.\./elsewhere/\*, which is not inside the repo"):
            _rows(folder, split)
    else:
        assert _rows(folder, split) == [0]


@pytest.mark.parametrize("header", ["configs: " + "[" * 100_000, "configs: " + "{a: " * 100_000])
def test_a_card_nested_too_deep_is_refused_before_it_is_parsed(tmp_path, header):
    """libyaml crashed the process (a segmentation fault) on these, and the pure-Python parser raised a
    RecursionError that no handler took."""
    with pytest.raises(InputError, match=r"README.md: the card's YAML header nests \[ or \{ more than 100 deep"):
        _rows(_clone(tmp_path, f"---\n{header}\n---\n"), "train")


def test_a_card_whose_configs_hold_no_mapping_is_no_card(tmp_path):
    assert _rows(_clone(tmp_path, "---\nconfigs: &a [*a]\n---\n"), "train") == [0, 2]
