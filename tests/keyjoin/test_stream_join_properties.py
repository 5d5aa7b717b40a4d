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
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_oracle import Columns, counted_pairs, whole_side_counts  # noqa: E402
from mix_strategies import DATA, PR_TASKS, MixCase, forced_cases, mix_cases, row  # noqa: E402
from stream_check import assert_whole_side, both_ways, differences  # noqa: E402

import overlap.keyjoin.items_pass as items_pass  # noqa: E402
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
    """Batches of three rows and a spill that goes to disk past four rows, in eight partitions; the rows kept
    by id (OSS-Fuzz keys, matched items) compacted past two."""
    monkeypatch.setattr(scan, "BATCH_ROWS", 3)
    monkeypatch.setattr("overlap.keyjoin.first_rows.COMPACT_FROM", 2)
    monkeypatch.setattr(scan, "SPILL_ROWS", 4)
    monkeypatch.setattr("overlap.keyjoin.spill.PARTITIONS", 8)


def _check(case: MixCase, folder: Path, evidence: bool) -> None:
    written = case.write(folder / "in")
    streamed, held = both_ways(str(written.train_path), written.bench_args, folder, columns=case.columns.options(),
                               data=DATA, pool=None, evidence=evidence, text=None)
    assert streamed.train.totals is not None and held.train.totals is None
    found = differences(folder)
    assert not found, f"{case!r}\n" + "\n".join(found)
    assert_whole_side(streamed, whole_side_counts(written.train), case)
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
    monkeypatch.setattr("overlap.keyjoin.bench_lookup.hash64", crowded)


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


def test_the_clean_ids_of_a_streamed_side_are_written_a_batch_at_a_time(tmp_path, monkeypatch):
    """train_clean_ids.txt of a streamed side comes from the source read again a batch at a time, never from
    one list of every id (a side of 100M ids would need gigabytes for it): its lines are the oracle's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from overlap.api import compare
    from overlap.outputs.report.result_folders import write_compare_report
    from overlap.results import CompareResult

    monkeypatch.setattr(scan, "BATCH_ROWS", 7)
    ids = [f"owner__repo-{i % 40}" if i % 9 else None for i in range(100)] + ["arvo:10055", " é "]
    pq.write_table(pa.table({"id": pa.array(ids, pa.string())}), tmp_path / "train.parquet")
    pq.write_table(pa.table({"id": pa.array(["owner__repo-3", "owner__repo-5"])}), tmp_path / "bench.parquet")
    result = compare(str(tmp_path / "train.parquet"), [str(tmp_path / "bench.parquet")], columns={"id": "id"},
                     data=DATA, pool=None, evidence=False, text=[])
    batches = list(result.train_clean_id_batches())
    assert len(batches) == 15  # one per batch read

    def whole_list(self):
        raise AssertionError("the clean ids were gathered into one list")

    monkeypatch.setattr(CompareResult, "train_clean_ids", whole_list)
    write_compare_report(result, tmp_path / "out", reports=False)
    firsts = dict.fromkeys(i for i in ids if i is not None and i.strip())  # first copy of each id, in order
    expected = [i for i in firsts if i not in ("owner__repo-3", "owner__repo-5")]
    assert (tmp_path / "out" / "train_clean_ids.txt").read_text(encoding="utf-8") == "".join(f"{i}\n" for i in expected)


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["arvo:10055", "owner__repo-12", "owner__repo-123", "x", None]),
                          st.sampled_from(["a" * 40, "b" * 40, None])), min_size=1, max_size=40),
       st.booleans())
def test_repeats_read_back_a_chunk_at_a_time_are_the_oracles(tmp_path_factory, small_batches, monkeypatch, rows,
                                                             collide):
    """Ids repeated across many read-back chunks (a spill of four rows), at their first row's base commit or
    another, with every hash equal or not: the items, the repeats and the repeats at another base are what a
    plain pass over the rows in order gives."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from overlap.api import compare

    if collide:
        import numpy as np

        for module in ("batch", "bench_lookup"):
            monkeypatch.setattr(f"overlap.keyjoin.{module}.hash64", lambda values: np.zeros(len(values), np.uint64))
    folder = tmp_path_factory.mktemp("repeats")
    pq.write_table(pa.table({"id": pa.array([i for i, _ in rows], pa.string()),
                             "base": pa.array([b for _, b in rows], pa.string())}), folder / "train.parquet")
    first_base, repeats, other, first_repeat, first_other = {}, 0, 0, None, None
    for item, base in rows:  # the oracle: the first row of an id is its item, a later one a repeat
        if item is None:
            continue
        if item not in first_base:
            first_base[item] = base
            continue
        repeats += 1
        first_repeat = first_repeat or item
        if first_base[item] != base:
            other += 1
            first_other = first_other or item
    if not first_base:
        return
    result = compare(str(folder / "train.parquet"), ["cybergym"], columns={"id": "id", "base": "base"},
                     data=DATA, pool=None, evidence=False, text=[])
    summary = result.summary()["train"]
    problems = {p["what"]: (p["count"], p["example"]) for p in summary["problems"]}
    assert summary["items"] == len(first_base)
    assert problems.get("duplicate_id") == ((repeats, first_repeat) if repeats else None)
    assert problems.get("duplicate_id_other_base") == ((other, first_other) if other else None)


def test_a_row_named_by_its_repo_and_pr_cells_is_a_clean_id_streamed_as_held(tmp_path):
    """A row with no id but repo and PR cells is the item `owner__name-N`: the streamed side's clean ids (its id
    column read again) name it as the held side's do."""
    from overlap.api import compare

    (tmp_path / "train.csv").write_text("id,repo,pr\n,owner/repo,12\nowner__repo-13,owner/repo,13\n,other/x,5\n"
                                        ",owner/repo,12\n")
    (tmp_path / "bench.csv").write_text("id,repo,pr\nowner__repo-13,owner/repo,13\n")
    lists = [compare(str(tmp_path / "train.csv"), [str(tmp_path / "bench.csv")],
                     columns={"id": "id", "repo": "repo", "pr": "pr"}, pool=None, stream=stream).train_clean_ids()
             for stream in (True, False)]
    assert lists == [["owner__repo-12", "other__x-5"]] * 2


def test_repeated_ids_scattered_over_the_side_are_read_back_once(tmp_path, small_batches, monkeypatch):
    """An RL set repeats each task in rows spread over the whole side: its ids are read back from the store in
    one pass, however many spill-sized chunks the repeats make (a read of every id per chunk grew with the
    square of the side), and the counts are a plain pass's."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    from overlap.api import compare
    from overlap.keyjoin.batch import ID_STRING_SCHEMA
    from overlap.keyjoin.spill import RowStore

    ids = [f"owner__repo-{n}" for n in range(60) for _ in range(4)]
    random.Random(0).shuffle(ids)
    pq.write_table(pa.table({"id": ids}), tmp_path / "train.parquet")
    read, tables = [0], RowStore.tables

    def counted(self, which=None):
        for table in tables(self, which):
            read[0] += table.num_rows if self.schema == ID_STRING_SCHEMA else 0
            yield table

    monkeypatch.setattr(RowStore, "tables", counted)
    result = compare(str(tmp_path / "train.parquet"), ["cybergym"], columns={"id": "id"}, data=DATA, pool=None,
                     evidence=False, text=[])
    summary = result.summary()["train"]
    assert summary["items"] == 60
    assert {p["what"]: p["count"] for p in summary["problems"]}["duplicate_id"] == 180
    assert read[0] <= 2 * len(ids)  # one pass, and the few rows the duplicate keys name


def test_one_id_on_most_rows_is_counted_a_piece_at_a_time(tmp_path, small_batches, monkeypatch):
    """One id on hundreds of spill-sized pieces fills one partition: its hashes are counted, then its rows read
    a piece at a time (never the partition at once), and the counts are a plain pass's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from overlap.api import compare

    ids = ["owner__repo-1"] * 300 + ["arvo:10055", "owner__repo-2", "owner__repo-1", None]
    pq.write_table(pa.table({"id": pa.array(ids, pa.string())}), tmp_path / "train.parquet")
    counted, largest, pieces = [], [0], scan.Spill.by_partition

    def spied(self):
        for read in pieces(self):
            def again(read=read):
                for piece in read():
                    largest[0] = max(largest[0], piece.num_rows)
                    yield piece
            yield again

    monkeypatch.setattr(scan.Spill, "by_partition", spied)
    monkeypatch.setattr(items_pass, "_own_rows_counted",
                        lambda *a, f=items_pass._own_rows_counted: counted.append(1) or f(*a))
    result = compare(str(tmp_path / "train.parquet"), ["cybergym"], columns={"id": "id"}, data=DATA, pool=None,
                     evidence=False, text=[])
    summary = result.summary()["train"]
    assert summary["items"] == 3 and counted
    assert {p["what"]: p["count"] for p in summary["problems"]}["duplicate_id"] == 300
    assert largest[0] <= 4 + 3  # a spill's bound and a batch
