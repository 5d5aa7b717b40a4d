"""`filter` of a compressed parquet file (`x.parquet.zst`, `x.parquet.gz`), which a compare reads: the kept
split is written in the same format (the shard compressed as its input), holding exactly the input rows whose
id the benchmark lacks. The oracle decompresses with the stdlib / zstandard and reads plain parquet."""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from corpus_contract import run_checked

TRAIN_IDS = [f"CVE-2020-{i:04d}" for i in range(12)]
BENCH_IDS = ["CVE-2020-0001", "CVE-2020-0004", "CVE-2020-0005", "CVE-2020-0011", "CVE-2019-9999"]

COMPRESS = {".zst": lambda data: zstandard.ZstdCompressor().compress(data), ".gz": gzip.compress}
DECOMPRESS = {".zst": lambda data: zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read(),
              ".gz": gzip.decompress}


def _parquet_bytes(table: pa.Table, row_group_size: int) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group_size)
    return sink.getvalue()


@pytest.mark.parametrize("row_group_size", [1, 5, 100])
@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_filter_of_a_compressed_parquet_writes_it_compressed(suffix, row_group_size, tmp_path):
    table = pa.table({"id": TRAIN_IDS, "n": list(range(len(TRAIN_IDS))),
                      "note": [None if i % 3 else f"row {i}" for i in range(len(TRAIN_IDS))]})
    name = f"train.parquet{suffix}"
    (tmp_path / name).write_bytes(COMPRESS[suffix](_parquet_bytes(table, row_group_size)))
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in BENCH_IDS))
    run_checked(f"filter:{name}", ["filter", name, "bench.jsonl", "--id-column", "id", "--out", "out"],
                root=tmp_path, expect=0)
    shard = tmp_path / "out" / "data" / name
    assert sorted(p.name for p in (tmp_path / "out" / "data").iterdir()) == [name]
    kept = pq.read_table(io.BytesIO(DECOMPRESS[suffix](shard.read_bytes())))
    expected = [row for row in table.to_pylist() if row["id"] not in set(BENCH_IDS)]
    assert kept.to_pylist() == expected
    assert kept.schema == table.schema
    summary = json.loads((tmp_path / "out" / "filter.json").read_text())
    assert summary["verification"]["status"] == "passed"
    assert (summary["kept_rows"], summary["removed_rows"]) == (len(expected), len(TRAIN_IDS) - len(expected))


def test_filter_of_a_parquet_named_zst_but_not_compressed(tmp_path):
    """A `.parquet.zst` holding plain parquet is read as its bytes are (as a compare reads it)."""
    table = pa.table({"id": TRAIN_IDS})
    (tmp_path / "train.parquet.zst").write_bytes(_parquet_bytes(table, 4))
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in BENCH_IDS))
    run_checked("filter:plain-zst", ["filter", "train.parquet.zst", "bench.jsonl", "--id-column", "id", "--out",
                                     "out"], root=tmp_path, expect=0)
    data = (tmp_path / "out" / "data" / "train.parquet.zst").read_bytes()
    kept = pq.read_table(io.BytesIO(DECOMPRESS[".zst"](data)))
    assert kept.column("id").to_pylist() == [i for i in TRAIN_IDS if i not in set(BENCH_IDS)]


def test_filter_of_a_damaged_compressed_parquet_is_one_line(tmp_path):
    (tmp_path / "train.parquet.zst").write_bytes(COMPRESS[".zst"](b"PAR1" + b"\0" * 64))
    (tmp_path / "bench.jsonl").write_text(json.dumps({"id": BENCH_IDS[0]}) + "\n")
    run = run_checked("filter:damaged-zst", ["filter", "train.parquet.zst", "bench.jsonl", "--id-column", "id",
                                             "--out", "out"], root=tmp_path, expect=2)
    assert "train.parquet.zst" in run.first_line
