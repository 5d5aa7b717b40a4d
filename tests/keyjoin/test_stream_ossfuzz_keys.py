"""A streamed side's OSS-Fuzz keys wait on disk and are read back a frame at a time: the outputs that read every
one of them (the id description, the chance baselines against a pool, the related bugs) are the held path's
byte for byte, the keys read back are a plain oracle's (the first row of each id, in row order, made canonical),
and what is held of them in memory stays within a spill's rows however large the side."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_oracle import DEMO, arvo_mapping  # noqa: E402
from stream_check import both_ways, differences  # noqa: E402

import overlap.keyjoin.scan as scan  # noqa: E402
from overlap.api import compare  # noqa: E402

DATA = {"cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo", "arvo-meta": DEMO / "arvo-meta"}
POOL_NUMBERS = sorted(int(p.stem) for p in (DEMO / "arvo-meta" / "archive_data" / "meta").glob("*.json"))
SPILL, BATCH = 16, 5


@pytest.fixture
def small_spills(monkeypatch):
    monkeypatch.setattr(scan, "BATCH_ROWS", BATCH)
    monkeypatch.setattr(scan, "SPILL_ROWS", SPILL)
    monkeypatch.setattr("overlap.keyjoin.spill.PARTITIONS", 8)


def _ids(rows: int) -> list[str | None]:
    """OSS-Fuzz ids in the pool (old ids the mapping renames among them) and outside it, in two spellings,
    every seventh row repeating an earlier id, PR ids and blanks between them."""
    out: list[str | None] = []
    for i in range(rows):
        if i % 7 == 6:
            out.append(out[i // 2])
        elif i % 5 == 4:
            out.append(f"owner__repo-{i}" if i % 10 else None)
        else:
            number = POOL_NUMBERS[i % len(POOL_NUMBERS)] if i % 3 else 900_000 + i
            out.append(f"arvo:{number}" if i % 2 else f"arvo_{number}")
    return out


def _write(folder: Path, ids: list[str | None]) -> Path:
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.string())}), folder / "train.parquet")
    return folder


def _oracle_keys(ids: list[str | None]) -> list[tuple[str, str, str]]:
    """(item_id, canonical value, raw) of the first row of each id that is an OSS-Fuzz id, in row order."""
    mapping, seen, out = arvo_mapping(), set(), []
    for item_id in ids:
        if item_id is None or item_id in seen:
            continue
        seen.add(item_id)
        if item_id.startswith("arvo"):
            raw = int(item_id[5:])
            out.append((item_id, str(mapping.get(raw, raw)), str(raw)))
    return out


def test_baselines_related_bugs_and_id_description_are_the_held_paths(tmp_path, small_spills):
    ids = _ids(300)
    train = _write(tmp_path / "train", ids)
    streamed, held = both_ways(str(train), ["cybergym"], tmp_path / "out", data=DATA, pool="arvo-meta",
                               permutations=200, columns={"id": "id"}, text=None)
    assert streamed.train.totals is not None and held.train.totals is None
    found = differences(tmp_path / "out")
    assert not found, "\n".join(found)
    summary = json.loads((tmp_path / "out" / "streamed" / "summary.json").read_text())
    keys = _oracle_keys(ids)
    in_pool = {k for k in keys if int(k[2]) in POOL_NUMBERS}
    # the baselines ran on the pool and the id description counted every key (not a vacuous comparison)
    assert summary["train"]["ossfuzz_ids"]["ossfuzz_ids"] == len(keys)
    assert summary["baselines"]["train"]["ids"] == len({value for _, value, _ in keys})
    assert summary["baselines"]["train"]["items_in_pool"] == len(in_pool) > 0


@pytest.mark.parametrize("rows", [100, 1_000])
def test_the_keys_read_back_are_the_oracles_and_what_is_held_does_not_grow(tmp_path, small_spills, rows):
    ids = _ids(rows)
    result = compare(str(_write(tmp_path / "train", ids)), ["cybergym"], data=DATA, pool=None, evidence=False,
                     columns={"id": "id"}, text=None)
    kept = result.train.totals.ossfuzz_keys
    frames = list(result.train.ossfuzz_key_frames())
    read = [(i, v, r) for frame in frames for i, v, r in zip(frame["item_id"], frame["value"], frame["raw"],
                                                               strict=True)]
    expected = _oracle_keys(ids)
    assert read == expected
    assert kept.distinct_values() == len({value for _, value, _ in expected})
    # past a spill's worth the keys are in the file: what is held is bounded by the spill, not by the side,
    # and each frame read back is at most a batch's keys
    assert kept.held_rows() <= SPILL
    assert rows < 300 or kept.held_rows() == 0
    assert max(len(frame) for frame in frames) <= BATCH
