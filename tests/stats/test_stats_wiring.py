"""`cyber_baselines` / `swe_inclusion` on a compare result: placement in the pool, outside counts, JSON."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from scipy.stats import hypergeom

from overlap.api import compare
from overlap.errors import InputError
from overlap.ids.ossfuzz import OssFuzzMapping
from overlap.model import Dataset, Provenance
from overlap.outputs.report.table_rows import _chance_rows as table_rows  # the printed rows of a baselines block
from overlap.sources.load import load_pool
from overlap.stats.wiring import cyber_baselines, pool_for, swe_inclusion

MAPPING = OssFuzzMapping({100: 42000100, 101: 42000101, 102: 42000102, 103: 42000103, 104: 42000104})


def dataset(name: str, ids: list[tuple[str, str | None]], kind: str = "ossfuzz") -> Dataset:
    """Items with one key each (None = no key of that kind); raw = value as written."""
    items = pd.DataFrame({"item_id": [i for i, _ in ids], "row": range(len(ids))})
    keys = pd.DataFrame([{"item_id": i, "kind": kind, "value": k, "raw": k} for i, k in ids if k is not None],
                        columns=["item_id", "kind", "value", "raw"])
    return Dataset(name, items, keys, Provenance(name=name, origin="builtin"))


@pytest.fixture
def result():
    train = dataset("train", [
        ("arvo_100", "100"), ("arvo_42000100", "42000100"),  # one bug under both ids: counts once
        ("arvo_101", "101"), ("arvo_104", "104"), ("arvo_42000200", "42000200"),
        ("arvo_999", "999"),  # outside the pool
        ("arvo_555", "555"),  # outside the pool, and the bench has it too
    ])
    bench = dataset("bench", [
        ("arvo:100", "100"), ("arvo:102", "102"), ("oss-fuzz:42000200", "42000200"), ("arvo:103", "103"),
        ("oss-fuzz:555", "555"),
        ("x.cve-2020-1", None),  # no OSS-Fuzz id
    ])
    return compare(train, [bench], mapping=MAPPING)


@pytest.fixture
def pool_file(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text("id,project\narvo:100,p\n101,p\n102,q\n103,\n104,q\n42000200,q\n")
    return path


def test_placement_and_outside_counts(result, pool_file):
    assert pool_for(result) == "arvo-meta"
    out = cyber_baselines(result, load_pool(pool_file), permutations=2_000, seed=0)
    json.dumps(out, allow_nan=False)  # JSON-ready: no numpy scalars, no NaN
    train = out["train"]
    assert (train["ids"], train["ids_in_pool"], train["ids_outside_pool"]) == (6, 4, 2)
    assert (train["items_in_pool"], train["items_outside_pool"], train["items_without_ossfuzz_id"]) == (5, 2, 0)
    block = out["benches"]["bench"]
    bench = block["bench"]
    assert (bench["ids_in_pool"], bench["ids_outside_pool"], bench["items_without_ossfuzz_id"]) == (4, 1, 1)
    assert (block["shared_ids"], block["shared_in_pool"], block["shared_outside_pool"]) == (3, 2, 1)
    uniform = block["uniform"]
    assert (uniform["pool"], uniform["bench_in_pool"], uniform["train_in_pool"], uniform["observed"]) == (6, 4, 4, 2)
    assert uniform["p_upper"] == pytest.approx(float(hypergeom.sf(1, 6, 4, 4)))
    # strata: p = {100, 101}, q = {102, 104, 200}, unknown = {103}
    strat = block["stratified"]
    table = {row["stratum"]: row for row in strat["strata"]}
    assert {k: table["p"][k] for k in ("pool", "bench", "train", "shared")} == {"pool": 2, "bench": 1, "train": 2,
                                                                                 "shared": 1}
    assert {k: table["q"][k] for k in ("pool", "bench", "train", "shared")} == {"pool": 3, "bench": 2, "train": 2,
                                                                                 "shared": 1}
    assert table["unknown"]["pool"] == 1 and table["unknown"]["in_null"] is False
    assert strat["by"] == "project"
    # p is forced (n = N: X = K = 1); q: X ~ H(3, 2, 2) ∈ {1, 2}, P(2) = 1/3 → P(total ≥ 2) = 1
    assert strat["p_upper"] == pytest.approx(1.0)
    assert strat["p_lower"] == pytest.approx(2 / 3)
    check = block["permutation"]
    assert check["draws"] == 2_000 and check["seed"] == 0 and check["null"] == "stratified"
    assert check["agrees_with_exact"] is True
    labels = [label for label, _ in table_rows(block)]
    assert "chance, uniform" in labels and "chance, within project" in labels


def test_pool_canonicalised_with_the_results_mapping(result, pool_file):
    unmapped = load_pool(pool_file)
    assert not unmapped.mapped and 100 in unmapped.table["canonical_id"].tolist()
    out = cyber_baselines(result, unmapped, permutations=0)
    assert out["pool"]["canonical_ids_mapped"] is True
    assert out["benches"]["bench"]["shared_in_pool"] == 2


def test_uniform_only_other_strata_and_errors(result, pool_file):
    pool = load_pool(pool_file, mapping=MAPPING)
    uniform_only = cyber_baselines(result, pool, strata=None, permutations=1_000)
    block = uniform_only["benches"]["bench"]
    assert block["stratified"] is None and block["permutation"]["null"] == "uniform"
    assert block["permutation"]["agrees_with_exact"] is True
    assert [label for label, _ in table_rows(block)][-1] == "  permutation check"
    by_sanitizer = cyber_baselines(result, pool, strata="sanitizer", permutations=0)
    strat = by_sanitizer["benches"]["bench"]["stratified"]
    assert [row["stratum"] for row in strat["strata"]] == ["unknown"]  # the file has no sanitizer column
    with pytest.raises(InputError, match="no such column"):
        cyber_baselines(result, pool, strata="nope")


def test_demo_like_meta_clone_pool(meta_clone, no_network):
    train = dataset("train", [("arvo_10288", "10288"), ("arvo_11500", "11500"), ("arvo_10055", "10055")])
    bench = dataset("bench", [("arvo:10288", "10288"), ("arvo:10400", "10400"), ("oss-fuzz:42537168", "42537168")])
    mapping = OssFuzzMapping({10288: 40643631, 10400: 42470443, 11500: 42470500})
    res = compare(train, [bench], mapping=mapping)
    pool = load_pool("arvo-meta", data={"arvo-meta": meta_clone}, mapping=mapping)
    out = cyber_baselines(res, pool, permutations=1_000)
    block = out["benches"]["bench"]
    assert block["uniform"]["pool"] == 5 and block["shared_in_pool"] == 1
    assert block["bench"]["ids_outside_pool"] == 1
    assert out["pool"]["name"] == "arvo-meta" and out["pool"]["provenance"]["origin"] == "local-folder"


# --- SWE --------------------------------------------------------------------------------------------


def test_swe_inclusion():
    train = dataset("train", [("t1", "o/r1#10"), ("t2", "o/r1#20"), ("t3", "o/r1#30"), ("t4", "o/r1#50"),
                              ("t5", "o/r9#1"), ("t6", None)], kind="repo_pr")
    bench = dataset("bench", [("b1", "o/r1#10"), ("b2", "o/r1#20"), ("b3", "o/r1#30"), ("b4", "o/r1#40"),
                              ("b5", "o/r2#5")], kind="repo_pr")
    reference = dataset("discarded", [("d1", "o/r1#50"), ("d2", "o/r1#60"), ("d3", "o/r1#70"), ("d4", "o/r1#80"),
                                      ("d5", "o/r2#6"), ("d6", "o/r1#40")], kind="repo_pr")
    res = compare(train, [bench])
    out = swe_inclusion(res, reference, permutations=5_000)
    json.dumps(out, allow_nan=False)
    block = out["benches"]["bench"]
    assert (block["bench_prs"], block["reference_prs"], block["reference_also_in_bench"]) == (5, 5, 1)
    test = block["inclusion"]
    assert test["p_upper"] == pytest.approx(17 / 70)  # as tests/stats/test_stats_inclusion.py by hand
    assert test["bench_rate"] == pytest.approx(3 / 5)
    assert block["permutation"]["agrees_with_exact"] is True
    assert out["train"]["items_without_key"] == 1
    restricted = swe_inclusion(res, reference, restrict_to_train_range=True, permutations=0)
    test = restricted["benches"]["bench"]["inclusion"]
    assert test["pool"] == 5 and test["p_lower"] == pytest.approx(4 / 5)
    assert restricted["restricted_to_train_range"] is True
    assert [label for label, _ in table_rows(restricted["benches"]["bench"])][0].startswith("inclusion")
