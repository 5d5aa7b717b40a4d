"""The streamed key join gives a compare's every output byte for byte as the training set held row by row
does (pairs.csv, related.csv, duplicates.csv, summary.json, the id lists, pair_items.parquet), on generated
training mixes (every id spelling, blanks, repeated rows, PR columns) against CyberGym, an OSS-Fuzz/CVE and an
SWE benchmark; with batches of a few rows and the spill forced to disk, so repeats across batches and the
partitioned counts are exercised. And its whole-side counts are a plain oracle's."""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_oracle import TASK_KINDS, Columns, Data, counted_pairs  # noqa: E402
from mix_strategies import DATA, PR_TASKS, MixCase, forced_cases, mix_cases, row  # noqa: E402
from stream_check import both_ways, differences  # noqa: E402

import overlap.keyjoin.scan as scan  # noqa: E402

# No shrinking: a failing mix is printed whole, and shrinking one takes minutes.
SETTINGS = {"deadline": None, "database": None, "derandomize": True, "phases": [Phase.explicit, Phase.generate],
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
REPEATS_AND_GROUPS = MixCase(
    Columns(base="base_commit"),
    [row("arvo:10055"), row(None), row("arvo:10055", note="other"), row("https://github.com/Owner/Repo/pull/12"),
     row("Owner/Repo#13", base=PR_TASKS[3].base), row("someone__ripgrep-fork-1234", base=PR_TASKS[1].base),
     row("jq.cve-2023-50246"), row("x.cve-2023-50246"), row("  "), row("owner__repo-12")], "parquet",
    [("cybergym", None, None), ("swe", [row("owner__repo-12", "owner/repo", 12, PR_TASKS[3].base),
                                        row("burntsushi__ripgrep-1234", "burntsushi/ripgrep", 1234,
                                            PR_TASKS[1].base)], "jsonl")])


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of three rows and a spill that goes to disk past four rows, in eight partitions."""
    monkeypatch.setattr(scan, "BATCH_ROWS", 3)
    monkeypatch.setattr(scan, "SPILL_ROWS", 4)
    monkeypatch.setattr("overlap.keyjoin.spill.PARTITIONS", 8)


def oracle_counts(train: Data) -> dict:
    """What the summary counts of the whole side, in a few lines of plain Python."""
    items = train.items()
    holders: dict[tuple[str, str], set[str]] = {}
    for item in items.values():
        for key in item.keys:
            if key[0] in TASK_KINDS:
                holders.setdefault(key, set()).add(item.item_id)
    return {"items": len(items), "repeats": sum(len(i.rows) - 1 for i in items.values()),
            "missing": len(train.rows_without_item()),
            "groups": {k: v for k, v in holders.items() if len(v) > 1}}


def _check(case: MixCase, folder: Path, evidence: bool) -> None:
    written = case.write(folder / "in")
    streamed, held = both_ways(str(written.train_path), written.bench_args, folder, columns=case.columns.options(),
                               data=DATA, pool=None, evidence=evidence, text=None)
    assert streamed.train.totals is not None and held.train.totals is None
    found = differences(folder)
    assert not found, f"{case!r}\n" + "\n".join(found)
    expected = oracle_counts(written.train)
    summary = streamed.summary()["train"]
    problems = {p["what"]: p["count"] for p in summary["problems"]}
    assert summary["items"] == expected["items"], case
    assert problems.get("duplicate_id", 0) == expected["repeats"], case
    assert problems.get("missing_id", 0) == expected["missing"], case
    groups = {(r.kind, r.value): set(r.item_ids.split(";")) for r in streamed.train_duplicates.itertuples()}
    assert groups == expected["groups"], case
    for comp, bench in zip(streamed.benches, written.benches, strict=True):
        pairs = set(zip(comp.pairs["train_id"], comp.pairs["bench_id"], strict=True))
        assert pairs == counted_pairs(written.train, bench), case
    assert Counter(streamed.train_clean_ids()) == Counter(
        i for i in written.train.items() if i not in set(streamed.pairs["train_id"]))


@settings(max_examples=25, **SETTINGS)
@example(REPEATS_AND_GROUPS)
@given(mix_cases())
def test_streamed_compare_writes_the_held_compare_folder(tmp_path_factory, small_batches, case):
    _check(case, tmp_path_factory.mktemp("stream"), evidence=False)


@settings(max_examples=25, **SETTINGS)
@given(mix_cases())
def test_streamed_compare_on_id_columns_alone_is_the_held_one(tmp_path_factory, small_batches, case):
    case.columns = dataclasses.replace(case.columns, repo=None, pr=None, base=None)  # every case streams
    _check(case, tmp_path_factory.mktemp("stream"), evidence=False)


@settings(max_examples=8, **SETTINGS)
@example(REPEATS_AND_GROUPS)
@given(mix_cases(kinds=("cybergym", "sec")))
def test_streamed_compare_with_evidence_is_the_held_one(tmp_path_factory, small_batches, case):
    _check(case, tmp_path_factory.mktemp("stream"), evidence=True)


@settings(max_examples=8, **SETTINGS)
@given(forced_cases())
def test_streamed_compare_under_a_forced_scheme_is_the_held_one(tmp_path_factory, small_batches, case):
    _check(case, tmp_path_factory.mktemp("stream"), evidence=False)


@pytest.fixture
def colliding_hash(monkeypatch):
    """A hash that puts most different strings together (by length, mod 3): the whole-side passes must then
    tell ids and keys apart on the strings alone."""
    import numpy as np
    import pyarrow.compute as pc

    def crowded(values):
        lengths = pc.fill_null(pc.utf8_length(values), 0).to_numpy(zero_copy_only=False)
        return (lengths % 3).astype(np.uint64)

    monkeypatch.setattr("overlap.keyjoin.batch.hash64", crowded)


@settings(max_examples=25, **SETTINGS)
@example(REPEATS_AND_GROUPS)
@given(mix_cases())
def test_streamed_compare_is_exact_when_hashes_collide(tmp_path_factory, small_batches, colliding_hash, case):
    _check(case, tmp_path_factory.mktemp("stream"), evidence=False)  # repo, PR and base columns as generated


@pytest.fixture
def compiled_everywhere(monkeypatch):
    """The compiled recognisers and hash on every batch, however small (numba is a dependency)."""
    pytest.importorskip("numba")
    monkeypatch.setattr("overlap.ids.compiled.COMPILED_FROM", 0)
    monkeypatch.setattr("overlap.keyjoin.hashing.COMPILED_FROM", 0)


@settings(max_examples=10, **SETTINGS)
@example(REPEATS_AND_GROUPS)
@given(mix_cases())
def test_streamed_compare_with_the_compiled_loops_is_the_held_one(tmp_path_factory, small_batches,
                                                                 compiled_everywhere, case):
    _check(case, tmp_path_factory.mktemp("stream"), evidence=False)


def test_a_missing_training_file_is_named_before_anything_is_fetched(tmp_path):
    """Offline and without the OSS-Fuzz mapping at hand, a wrong training path is what the error says."""
    from overlap.api import compare
    from overlap.errors import InputError

    with pytest.raises(InputError, match="no-such.csv: no such file"):
        compare(str(tmp_path / "no-such.csv"), ["cybergym"], columns={"id": "task"},
                data={"cybergym": DATA["cybergym"]}, pool=None)
