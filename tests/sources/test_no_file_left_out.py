"""A file of a dataset is read or named, never left out silently: an incomplete Hub cache (a deleted blob, a
missing `-of-<n>` shard), a file of a type no reader takes or a link to nothing in a folder, the compressed
files of a registered layout, a CSV that is not UTF-8 and a shard without the id column. Hub caches are laid
out locally (HF_HUB_OFFLINE=1): no network."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from fake_hub import make_hub_cache

from overlap.api import filter_train
from overlap.errors import HubUnavailableError, InputError
from overlap.sources.formats.batches import open_batches
from overlap.sources.load import load_dataset
from overlap.sources.places.files import HubRepo
from overlap.sources.places.folder_contents import METADATA_NAMES
from overlap.sources.places.hub_cache import missing_shards
from overlap.sources.places.listing import list_files

REBENCH = ("nebius/SWE-rebench", "89cdfbab4ab1bd8f5a658bb212d1b63624f4f881")  # swe-rebench-v1's pin
DOCS = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def _rows(first: int, count: int) -> list[dict]:
    return [{"instance_id": f"o__r-{n}", "repo": "o/r", "base_commit": f"{n:040x}"}
            for n in range(first, first + count)]


def _parquet(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _jsonl(path: Path, rows: list[dict], opener=open) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with opener(path, "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    return path


@pytest.fixture
def rebench_cache(tmp_path, monkeypatch):
    """swe-rebench-v1 at its pinned commit in a Hub cache: two shards of split test, 3 rows each."""
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    files = {f"data/test-0000{i}-of-00002.parquet": _parquet(tmp_path / f"src{i}.parquet", _rows(3 * i, 3))
             for i in range(2)}
    return make_hub_cache(cache, REBENCH[0], files, REBENCH[1])


# --- F1: an incomplete Hub cache ---------------------------------------------------------------------


def test_a_whole_hub_cache_reads_every_shard(rebench_cache):
    assert len(load_dataset("swe-rebench-v1").items) == 6


def test_a_hub_cache_link_to_a_deleted_blob_is_refused(rebench_cache):
    os.remove(os.path.realpath(rebench_cache / "data" / "test-00000-of-00002.parquet"))
    with pytest.raises(HubUnavailableError, match=r"Hub cache is incomplete \(data/test-00000-of-00002\.parquet "
                                                  r"links to a blob that is not there.*with internet"):
        load_dataset("swe-rebench-v1")


def test_a_hub_cache_missing_a_shard_of_its_set_is_refused(rebench_cache):
    os.remove(rebench_cache / "data" / "test-00001-of-00002.parquet")  # the snapshot link never made
    with pytest.raises(HubUnavailableError, match=r"data/test-00001-of-00002\.parquet is not cached beside the "
                                                  r"other shards of its set"):
        load_dataset("swe-rebench-v1")
    with pytest.raises(HubUnavailableError, match="test-00001-of-00002"):
        open_batches(f"{REBENCH[0]}@{REBENCH[1]}", ["instance_id"], split="test")


def test_a_listed_hub_cache_is_checked_too(rebench_cache):
    source = HubRepo(origin="hub", repo_id=REBENCH[0], revision=REBENCH[1])
    assert list_files(source, ".parquet") == ["data/test-00000-of-00002.parquet", "data/test-00001-of-00002.parquet"]
    os.remove(rebench_cache / "data" / "test-00000-of-00002.parquet")
    with pytest.raises(HubUnavailableError, match="test-00000-of-00002.parquet is not cached"):
        list_files(source, ".parquet")


def test_the_cli_exits_2_naming_the_missing_shard(rebench_cache, tmp_path):
    os.remove(os.path.realpath(rebench_cache / "data" / "test-00001-of-00002.parquet"))
    bench = _jsonl(tmp_path / "bench.jsonl", _rows(0, 2))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "overlap.cli", "compare", "swe-rebench-v1", str(bench),
                           "--id-column", "instance_id", "--no-report"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "test-00001-of-00002.parquet" in done.stderr, done.stderr


def test_missing_shards_are_named_as_the_present_ones():
    assert missing_shards(["d/train-00001-of-00003-ab.parquet", "d/train-00002-of-00003-cd.parquet"]) == \
        ["d/train-00000-of-00003*.parquet"]
    assert missing_shards(["a-0-of-1.json", "b-00000-of-00002.csv", "b-00001-of-00002.csv", "x.parquet"]) == []
    many = missing_shards(["x-00000000003-of-99999999999.jsonl"])  # a hostile count costs no walk as long as it
    assert many[:2] == ["x-00000000000-of-99999999999.jsonl", "x-00000000001-of-99999999999.jsonl"]
    assert many[-1] == "99,999,999,993 more shards of x-*-of-99999999999"
    # numbered from 1 (shard `total` is there): whole; names that only look like shards are no set
    assert missing_shards(["d/train-00001-of-00002.parquet", "d/train-00002-of-00002.parquet"]) == []
    assert missing_shards(["d/train-00002-of-00003.parquet", "d/train-00003-of-00003.parquet"]) == \
        ["d/train-00001-of-00003.parquet"]
    assert missing_shards(["pass-1-of-5.jsonl", "top-10-of-100.jsonl", "x-00001-of-2.json"]) == []


# --- F2: what a folder holds besides its data files ----------------------------------------------------


def test_an_arrow_file_in_a_folder_is_refused_naming_it(tmp_path):
    _jsonl(tmp_path / "set" / "a.jsonl", _rows(0, 3))
    table = pa.Table.from_pylist(_rows(3, 3))
    with ipc.new_file(tmp_path / "set" / "b.arrow", table.schema) as writer:
        writer.write_table(table)
    with pytest.raises(InputError, match=r"set/b\.arrow: overlap does not read this type of file, so its rows would "
                                         r"be left out; it reads \.parquet, \.jsonl.*to_parquet"):
        open_batches(tmp_path / "set", ["instance_id"])


def test_a_link_to_nothing_in_a_folder_or_glob_is_refused(tmp_path):
    _jsonl(tmp_path / "set" / "a.jsonl", _rows(0, 3))
    os.symlink(tmp_path / "gone.jsonl", tmp_path / "set" / "b.jsonl")
    for where in (tmp_path / "set", str(tmp_path / "set" / "*.jsonl")):
        with pytest.raises(InputError, match=r"set/b\.jsonl: a link to .*gone\.jsonl, which does not exist"):
            open_batches(where, ["instance_id"])


def test_files_that_are_no_data_are_left_out(tmp_path):
    folder = tmp_path / "saved"
    _jsonl(folder / "train" / "a.jsonl", _rows(0, 3))
    for name in ("README.md", "LICENSE", "LICENSE-MIT", "requirements.txt", ".gitattributes", "NOTES.md", "_SUCCESS",
                 "_common_metadata", "swe_gym.py", "config.yaml", "figure.png", *METADATA_NAMES):
        (folder / name).write_text('{"builder_name": "x"}\n')
    (folder / "test").mkdir()
    (folder / "test" / "b.arrow").write_bytes(b"not read: another split")
    source = open_batches(folder, ["instance_id"], split="train")
    assert sum(b.num_rows for b in source) == 3
    assert [f.path for f in source.provenance.files] == ["train/a.jsonl"]
    with pytest.raises(InputError, match=r"test/b\.arrow"):
        open_batches(folder, ["instance_id"])  # without --split the other split's file is read, so refused


def test_the_docs_name_every_file_left_out():
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Which files are read"):]
    for name in (*METADATA_NAMES, "README*", "LICENSE*", ".gitattributes", "*.md", ".arrow", "_SUCCESS"):
        assert f"`{name}" in section, name


# --- F3: compressed files in a registered layout -------------------------------------------------------


def _msb_row(org: str, repo: str, number: int) -> dict:
    return {"org": org, "repo": repo, "number": number, "instance_id": f"{org}__{repo}-{number}",
            "base": {"sha": f"{number:040x}"}, "resolved_issues": [{"title": "t", "body": "b"}], "fix_patch": "d"}


def test_a_registered_layout_reads_its_compressed_files(tmp_path):
    root = tmp_path / "rl" / "data_20240601_20250331"
    _jsonl(root / "go" / "a__b_dataset.jsonl", [_msb_row("a", "b", 1)])
    _jsonl(root / "rust" / "c__d_dataset.jsonl.gz", [_msb_row("c", "d", 2), _msb_row("c", "d", 3)], gzip.open)
    dataset = load_dataset("multi-swe-rl", {"multi-swe-rl": tmp_path / "rl"})
    assert sorted(dataset.items["item_id"]) == ["a__b-1", "c__d-2", "c__d-3"]
    assert dict(zip(dataset.items["item_id"], dataset.items["subset"], strict=True))["c__d-2"] == "rust"
    assert [f.path for f in dataset.provenance.files][-1] == "data_20240601_20250331/rust/c__d_dataset.jsonl.gz"
    # a side file the layout never reads (outside the subset folders) stops nothing, even a link to nothing
    os.symlink(tmp_path / "gone.jsonl", tmp_path / "rl" / "discarded_instances.jsonl")
    assert len(load_dataset("multi-swe-rl", {"multi-swe-rl": tmp_path / "rl"}).items) == 3


def test_a_registered_layout_filters_its_compressed_files(tmp_path):
    train = tmp_path / "rl" / "data_20240601_20250331"
    _jsonl(train / "go" / "a__b_dataset.jsonl", [_msb_row("a", "b", 1)])
    _jsonl(train / "rust" / "c__d_dataset.jsonl.gz", [_msb_row("c", "d", 2), _msb_row("c", "d", 3)], gzip.open)
    _jsonl(tmp_path / "bench" / "rust" / "c__d_dataset.jsonl", [_msb_row("c", "d", 3)])
    _, decision, report = filter_train("multi-swe-rl", ["multi-swe-bench"], tmp_path / "out",
                                       data={"multi-swe-rl": tmp_path / "rl", "multi-swe-bench": tmp_path / "bench"})
    assert decision.removed["item_id"].tolist() == ["c__d-3"]
    shard = tmp_path / "out" / "data" / "data_20240601_20250331" / "rust" / "c__d_dataset.jsonl.gz"
    assert [json.loads(line)["number"] for line in gzip.decompress(shard.read_bytes()).splitlines()] == [2]
    assert report.verification["removed_ids_confirmed"] is True


# --- F8: a shard without the id column, a CSV that is not UTF-8 ----------------------------------------


def test_a_shard_without_the_id_column_is_an_error_saying_what_to_do(tmp_path):
    _parquet(tmp_path / "set" / "data" / "test-00000-of-00002.parquet", _rows(0, 3))
    _parquet(tmp_path / "set" / "data" / "test-00001-of-00002.parquet", [{"repo": "o/r"}])
    with pytest.raises(InputError, match=r"test-00001-of-00002\.parquet: no column 'instance_id'.*every file read "
                                         r"must have it"):
        load_dataset("swe-rebench-v1", {"swe-rebench-v1": tmp_path / "set"})
    text = DOCS.read_text(encoding="utf-8")
    assert "A file without the id column is an error naming the file" in text


@pytest.mark.parametrize("where,line", [("cell", 3), ("header", 1)])
def test_a_latin1_csv_names_the_file_and_line_and_says_to_re_encode(tmp_path, where, line):
    path = tmp_path / "test.csv"
    header = "instance_id,repo,title\n" if where == "cell" else "instance_id,repo,titl\xe9\n"
    body = "o__r-1,o/r,plain\no__r-2,o/r,caf\xe9\n"
    path.write_bytes((header + body).encode("latin-1"))
    with pytest.raises(InputError, match=rf"test\.csv: line {line}: not UTF-8 text .*re-encode the file as UTF-8"):
        list(open_batches(path, ["instance_id"], optional=["title" if where == "cell" else "repo"]))
    assert re.search(r"re-encode it as UTF-8\)?", DOCS.read_text(encoding="utf-8"))


def test_a_card_split_with_no_cached_file_is_an_incomplete_cache():
    """Offline, the snapshot lists what was downloaded: a split the card declares with no file there was never
    fetched (its rows would be left out), while online a listing is whole and the card's split is only empty."""
    from overlap.sources.places.card import choose_files

    card = {"configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"},
                                                                  {"split": "test", "path": "data/test-*"}]}]}
    names = ["README.md", "data/test-00000-of-00001.parquet"]
    with pytest.raises(HubUnavailableError, match=r"reads data/train-\*, and no file of it is in the Hub cache"):
        choose_files(names, card, None, None, "o/card@abc", cached=True)
    assert choose_files(names, card, None, "test", "o/card@abc", cached=True) == ["data/test-00000-of-00001.parquet"]
    assert choose_files(names, card, None, None, "o/card@abc") == ["data/test-00000-of-00001.parquet"]


def test_a_delta_table_is_refused_with_how_to_export_its_current_version(tmp_path):
    """A Delta table's folder holds every version's parquet files (a removed row's file stays): reading them
    all would count rows the table no longer has, so the folder is refused, saying how to export it."""
    table = tmp_path / "table"
    (table / "_delta_log").mkdir(parents=True)
    _parquet(table / "part-00000-a.snappy.parquet", _rows(0, 3))
    _parquet(table / "part-00001-b.snappy.parquet", _rows(0, 2))  # a rewrite of the first file
    log = table / "_delta_log" / "00000000000000000000.json"
    log.write_text('{"add": {"path": "part-00000-a.snappy.parquet"}}\n')
    with pytest.raises(InputError, match=r"table: a Delta table.*to_pyarrow_table"):
        open_batches(str(table), ["instance_id"])
