"""`filter` reads its input files as `compare` read them and names the input, not the output folder, when one
cannot be read again: a `.jsonl.gz` whose bytes are plain text, a corrupt compressed file, and two input files
that would be written to one shard (refused before anything is written)."""

from __future__ import annotations

import gzip
import json

import pyarrow.parquet as pq
import pytest

from overlap.api import filter_train
from overlap.api.demo import DEMO_ROOT, demo_data
from overlap.errors import InputError
from overlap.outputs.ship.split_files import Shard, write_shard

CONTAMINATED = 8  # demo MiMo rows dropped for CyberGym


def _records() -> list[dict]:
    rows = pq.read_table(DEMO_ROOT / "mimo-cyber" / "cyber.parquet").to_pylist()
    return [{"id": r["extra_info"]["instance_id"]} for r in rows]


def _lines(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_a_gz_name_over_plain_text_is_filtered_as_compare_reads_it(tmp_path):
    train = tmp_path / "mix.jsonl.gz"
    train.write_bytes(_lines(_records()))  # named .gz, never compressed
    _, decision, report = filter_train(str(train), ["cybergym"], tmp_path / "out", data=demo_data(), id_column="id")
    assert decision.source_rows == 11 and len(decision.removed) == CONTAMINATED
    assert report.shards == ["data/mix.jsonl.gz"]
    kept = gzip.decompress((tmp_path / "out" / "data" / "mix.jsonl.gz").read_bytes()).splitlines()
    assert len(kept) == 11 - CONTAMINATED and all(line + b"\n" in train.read_bytes() for line in kept)


def test_an_input_that_cannot_be_read_again_is_named_not_the_output(tmp_path):
    broken = tmp_path / "rows.jsonl.gz"
    broken.write_bytes(gzip.compress(_lines(_records()))[:40])  # cut short
    with pytest.raises(InputError, match=rf"^{broken}: cannot read the file again to write its shard"):
        write_shard(Shard("rows.jsonl.gz", broken, "data/rows.jsonl.gz"), tmp_path / "out", set(), False, None)


def test_two_inputs_written_to_one_shard_are_refused_naming_both(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    records = _records()
    (folder / "a.json").write_text(json.dumps(records[:5]))  # an array: written as data/a.jsonl
    (folder / "a.jsonl").write_bytes(_lines(records[5:]))
    with pytest.raises(InputError, match=r"^a\.json and a\.jsonl would both be written as data/a\.jsonl .*rename "
                                         r"one of them"):
        filter_train(str(folder), ["cybergym"], tmp_path / "out", data=demo_data(), id_column="id")
    assert not (tmp_path / "out").exists()
