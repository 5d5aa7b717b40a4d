"""The local engine's inputs and worker count: files read batch by batch with projection (folder, glob,
single file; parquet, jsonl, csv.gz) give what the same rows in a DataFrame give; the pool started part-way
through a stream gives what one process gives; the worker-count rule; the engine errors."""

import json
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.errors import InputError
from overlap.text import text_check
from overlap.text.ngram import build_index, scan
from overlap.text.ngram.engines import (
    POOL_PAYS_OFF_BYTES,
    choose_workers,
    file_batches,
    free_cores,
    input_bytes,
    train_files,
)


def workload(n_train=400, seed=3):
    """(bench frame, train frame, pairs): copies of 20 words (flag at 13), of 9 words (flag at 8 only)."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(800)]
    bench = [" ".join(rng.choice(vocab, 60)) for _ in range(30)]
    train = []
    for r in range(n_train):
        words = list(rng.choice(vocab, 70))
        if r % 7 == 0:
            b = bench[r % 30].split()
            words[10:10] = b[5:25] if r % 2 else b[30:39]
        train.append(" ".join(words) if r % 50 != 3 else None)
    bench_df = pd.DataFrame({"item_id": [f"b{i}" for i in range(30)], "text": bench})
    train_df = pd.DataFrame({"item_id": [f"t{i}" for i in range(n_train)], "text": train,
                             "other": ["x" * 50] * n_train})
    pairs = pd.DataFrame({"train_id": [f"t{r}" for r in range(0, n_train, 14)],
                          "bench_id": [f"b{r % 30}" for r in range(0, n_train, 14)]})
    return bench_df, train_df, pairs


def same(a, b):
    assert a.flags.to_csv(index=False) == b.flags.to_csv(index=False)
    assert a.boilerplate.to_csv(index=False) == b.boilerplate.to_csv(index=False)
    assert a.runs.to_csv(index=False) == b.runs.to_csv(index=False)
    assert a.summary() == b.summary()


@pytest.fixture(scope="module")
def data():
    return workload()


@pytest.fixture(scope="module")
def expected(data):
    bench, train, pairs = data
    return text_check(train, bench, "text", "text", pairs=pairs, workers=1, batch_rows=64)


def test_files_read_in_batches_give_what_a_frame_gives(tmp_path, data, expected):
    bench, train, pairs = data
    table = pa.Table.from_pandas(train, preserve_index=False)
    shards = tmp_path / "shards"
    (shards / "sub").mkdir(parents=True)
    for i, start in enumerate(range(0, len(train), 150)):  # three shards, one in a sub-folder
        folder = shards / "sub" if i == 2 else shards
        pq.write_table(table.slice(start, 150), folder / f"part-{i}.parquet", row_group_size=40)
    files = train_files(shards)
    assert [p.rsplit("/", 1)[1] for p, _ in files.data_files()] == [f"part-{i}.parquet" for i in range(3)]
    assert {fmt for _, fmt in files.data_files()} == {"parquet"} and files.nbytes > 0
    for spec in (shards, str(shards / "**" / "*.parquet")):
        same(text_check(spec, bench, "text", "text", pairs=pairs, workers=1, batch_rows=64), expected)
    renamed = tmp_path / "renamed.parquet"  # another id column, read under the scan's name
    pq.write_table(table.rename_columns(["uid", "text", "other"]), renamed)
    same(text_check(train_files(renamed, id_column="uid"), bench, "text", "text", pairs=pairs, workers=1,
                    batch_rows=64), expected)
    jsonl = tmp_path / "train.jsonl"
    train.to_json(jsonl, orient="records", lines=True)
    same(text_check(jsonl, bench, "text", "text", pairs=pairs, workers=1, batch_rows=64), expected)
    csv = tmp_path / "train.csv.gz"
    train.to_csv(csv, index=False)
    same(text_check(str(csv), bench, "text", "text", pairs=pairs, workers=2, batch_rows=64), expected)


def test_files_are_read_with_projection_and_bounded_batches(tmp_path, data):
    _, train, _ = data
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pandas(train, preserve_index=False), path, row_group_size=100)
    batches = list(file_batches(train_files(path), ["item_id", "text"], 32))
    assert all(b.schema.names == ["item_id", "text"] and b.num_rows <= 32 for b in batches)
    assert sum(b.num_rows for b in batches) == len(train)
    with pytest.raises(InputError, match="prompt"):
        list(file_batches(train_files(path), ["item_id", "prompt"], 32))
    with pytest.raises(InputError, match="no data file"):
        train_files(tmp_path / "nothing-*.parquet")


def test_pool_started_part_way_through_a_stream_gives_the_same_result(data):
    bench, train, _ = data
    index = build_index(pa.array(bench["text"]), bench["item_id"].tolist())
    table = pa.Table.from_pandas(train[["item_id", "text"]], preserve_index=False)
    inline = scan(index, table.to_batches(max_chunksize=50), workers=1, chunk_rows=25)
    part_way = scan(index, iter(table.to_batches(max_chunksize=50)), workers=2, chunk_rows=25,
                    pool_after_bytes=20_000)
    for k in inline.flags:
        assert np.array_equal(inline.flags[k], part_way.flags[k]), k
    assert inline.counts == part_way.counts and inline.short == part_way.short


def test_a_small_input_is_scanned_in_process_with_the_pools_flags(data, tmp_path, monkeypatch):
    """With no worker count given, an input below the pay-off size starts no pool (the pool is made to fail
    if it is started) and flags what a pool of two flags."""
    import overlap.text.ngram.stream as stream

    bench, train, pairs = data
    folder = tmp_path / "shards"
    folder.mkdir()
    for k in range(2):
        pq.write_table(pa.Table.from_pandas(train.iloc[k::2], preserve_index=False), folder / f"part-{k}.parquet")
    pooled = text_check(str(folder), bench, "text", "text", pairs=pairs, workers=2, batch_rows=25)
    monkeypatch.setattr("overlap.text.ngram.engines.free_cores", lambda: 2)  # two idle cores: a pool could start

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for a small input")

    monkeypatch.setattr(stream, "_scan_in_pool", no_pool)
    assert choose_workers(None, input_bytes(train_files(folder))) == (1, 0)
    alone = text_check(str(folder), bench, "text", "text", pairs=pairs, batch_rows=25)
    same(pooled, alone)
    assert len(pooled.flags) > 0


def test_worker_count_follows_the_input_size(monkeypatch):
    monkeypatch.setattr("overlap.text.ngram.engines.free_cores", lambda: 2)
    assert choose_workers(3, None) == (3, 0)  # asked for: as asked
    assert choose_workers(None, 1000) == (1, 0)  # small: one process
    assert choose_workers(None, POOL_PAYS_OFF_BYTES) == (2, 0)  # large: one per core from the start
    assert choose_workers(None, None) == (2, POOL_PAYS_OFF_BYTES)  # unknown: the pool past the threshold
    monkeypatch.setattr("overlap.text.ngram.engines.free_cores", lambda: 1)  # another job holds a core
    assert choose_workers(None, None) == (1, 0)
    monkeypatch.setattr("overlap.text.ngram.engines.usable_cores", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (2.2, 2.0, 2.0))
    assert free_cores() == 1
    monkeypatch.setattr("os.getloadavg", lambda: (1.1, 1.0, 1.0))
    assert free_cores() == 2
    assert input_bytes(pa.table({"a": ["x" * 100]})) >= 100 and input_bytes(iter([])) is None


def test_engine_errors(data, monkeypatch):
    bench, train, _ = data
    with pytest.raises(InputError, match="unknown engine 'spark'"):
        text_check(train, bench, "text", "text", engine="spark")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(InputError, match=r"pip install 'overlap\[ray\]'"):
        text_check(train, bench, "text", "text", engine="ray")


def test_cli_streams_a_folder_of_shards(tmp_path, data):
    from typer.testing import CliRunner

    from overlap.cli import app

    bench, train, pairs = data
    shards = tmp_path / "shards"
    shards.mkdir()
    table = pa.Table.from_pandas(train.rename(columns={"item_id": "uid"}), preserve_index=False)
    for i, start in enumerate(range(0, len(train), 150)):
        pq.write_table(table.slice(start, 150), shards / f"part-{i}.parquet")
    bench_file = tmp_path / "bench.jsonl"
    bench.rename(columns={"item_id": "uid"}).to_json(bench_file, orient="records", lines=True)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["ngram", str(shards), str(bench_file), "--text", "text:text", "--id-column", "uid",
                                   "--workers", "2", "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    alone = text_check(train, bench, "text", "text", workers=1)  # no pairs on the command line
    assert (out / "flags.csv").read_text().count("\n") == len(alone.flags) + 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["train"]["items"] == len(train) and summary["names"]["train"] == "shards"
    bad = CliRunner().invoke(app, ["ngram", str(shards), str(bench_file), "--text", "text:text", "--id-column", "uid",
                                   "--engine", "spark"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("suffix", ["parquet", "jsonl"])
def test_cli_ngram_reads_the_id_column_as_the_text_too(tmp_path, suffix):
    """`--id-column id --text id:…`: a set whose id is its text (a prompt) is read once as both, streamed
    (parquet) or by rows (JSON lines); each copy of the text flags the bench item that holds it."""
    from typer.testing import CliRunner

    from overlap.cli import app

    prompt = "heap buffer overflow in the png chunk reader when a crafted file is read past its end"
    rows = [{"id": prompt, "n": 1}, {"id": "an unrelated short prompt about sorting a list of numbers", "n": 2}]
    train = tmp_path / f"train.{suffix}"
    if suffix == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), train)
    else:
        train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b1", "text": f"the report: {prompt}"}) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--text", "id:text", "--id-column", "id",
                                   "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    flags = pd.read_csv(out / "flags.csv")
    assert set(flags["train_id"]) == {prompt} and set(flags["bench_id"]) == {"b1"}


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_cli_ngram_names_each_row_by_its_id_as_written_and_says_what_it_could_not_check(tmp_path, suffix):
    """A JSON id column of whole numbers of both spellings and one past 2**53 keeps every id as its cell reads
    (pandas made them floats: `1.0`, `1.2345678901234568e+16`); a row without an id is left out, said on
    stderr; text cells that are numbers are said unchecked, not only counted in summary.json."""
    from typer.testing import CliRunner

    from overlap.cli import app

    text = "the quick brown fox jumps over the lazy dog while the cat sleeps under a warm blanket near the fire"
    rows = [{"id": 1, "text": text}, {"id": 2.0, "text": text}, {"id": 12345678901234567, "text": text},
            {"id": None, "text": text}, {"id": 5, "text": 12345}]
    train = tmp_path / f"train.{suffix}"
    if suffix == "parquet":
        pq.write_table(pa.table({"id": pa.array([1, 2, 12345678901234567, None, 5]),
                                 "text": pa.array([text, text, text, text, "12345"])}), train)
    else:
        train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b1", "text": text}) + "\n")
    res = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--text", "text:text", "--id-column", "id",
                                   "--out", str(tmp_path / "out")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    flags = pd.read_csv(tmp_path / "out" / "flags.csv", dtype=str)
    assert set(flags["train_id"]) == {"1", "2", "12345678901234567"}
    if suffix == "jsonl":
        assert "1 row without an id in column 'id' left out" in res.stderr
        assert "1 cell of the text column held no text" in res.stderr
