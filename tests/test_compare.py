"""The normalised vs plain join on hand-made cyber fixtures; expected counts worked out by hand from
tests/fixtures.py."""

from overlap.api import compare


def test_mimo_vs_cybergym_counts(cyber):
    result = compare("mimo-cyber", ["cybergym"], data=cyber)
    pairs = result.benches[0].pairs
    got = sorted(zip(pairs["train_id"], pairs["bench_id"], pairs["match_type"], strict=True))
    assert got == [
        ("arvo_10288", "arvo:10288", "exact"),
        ("arvo_10400", "arvo:10400", "exact"),
        ("arvo_386128948", "oss-fuzz:386128948", "exact"),
        ("arvo_42470443", "arvo:10400", "translated"),
        ("arvo_42470500", "arvo:11500", "translated"),
    ]
    summary = result.summary()
    bench = summary["benches"][0]
    assert bench["bench_items"] == 7
    assert bench["bench_items_matched"] == 4
    assert bench["train_items_matched"] == 5
    assert bench["plain_join"] == {"pairs": 3, "train_items_matched": 3, "bench_items_matched": 3,
                                   "bench_share": round(3 / 7, 4)}
    assert bench["found_only_by_normalisation"] == {"bench_items": 1, "train_items": 2}
    assert bench["pairs_by_match_type"] == {"exact": 3, "translated": 2}
    assert bench["by_subset"]["arvo"] == {"bench_items": 5, "bench_items_matched": 3, "share": 0.6,
                                          "plain_bench_items_matched": 2}
    assert bench["by_subset"]["oss-fuzz"]["bench_items_matched"] == 1
    assert summary["train"]["ossfuzz_ids"] == {
        "ossfuzz_ids": 6, "old_ids": 3, "old_ids_translated": 2, "old_ids_not_in_mapping": 1,
        "new_ids": 3, "new_ids_in_mapping": 2,
    }
    assert result.train_clean_ids() == ["arvo_19999", "arvo_badid"]


def test_one_bug_under_both_ids_is_a_duplicate_with_identical_text(cyber):
    result = compare("mimo-cyber", ["cybergym"], data=cyber)
    dups = result.train_duplicates
    assert len(dups) == 1
    row = dups.iloc[0]
    assert row["item_ids"] == "arvo_10400;arvo_42470443"
    assert row["raw_values"] == "10400;42470443"
    assert row["value"] == "42470443" and bool(row["identical_text"])


def test_secbench_vs_cybergym_per_subset(cyber):
    result = compare("sec-bench", ["cybergym"], data=cyber)
    summary = result.summary()["benches"][0]
    pairs = result.benches[0].pairs
    assert sorted(zip(pairs["train_id"], pairs["bench_id"], pairs["match_type"], strict=True)) == [
        ("php.ossfuzz-42491394", "arvo:12001", "translated"),
        ("php.ossfuzz-42537168", "oss-fuzz:42537168", "exact"),
    ]
    assert summary["train_by_subset"]["oss"] == {"train_items": 3, "train_items_matched": 2, "share": 0.6667,
                                                 "plain_train_items_matched": 1}
    assert summary["train_by_subset"]["cve"]["train_items_matched"] == 0
    assert summary["plain_join"]["bench_items_matched"] == 1


def test_cve_keys_join_across_case(tmp_path):
    import json

    from fixtures import write_secbench

    a = write_secbench(tmp_path / "a", oss=[], cve=["jq.cve-2023-50246"])
    b = tmp_path / "b.jsonl"
    b.write_text(json.dumps({"instance_id": "jq.CVE-2023-50246", "sanitizer_report": ""}) + "\n")
    result = compare("sec-bench", [str(b)], data={"sec-bench": a})
    pairs = result.benches[0].pairs
    assert list(pairs["kinds"]) == ["cve"] and list(pairs["match_type"]) == ["translated"]
    assert result.mapping is None  # no OSS-Fuzz ids: the mapping is not needed


def test_same_dataset_twice_is_refused(cyber):
    import pytest

    from overlap.errors import InputError

    with pytest.raises(InputError, match="named twice"):
        compare("cybergym", ["cybergym"], data=cyber)


def test_demo_compare_carries_both_baselines():
    from overlap.api.demo import demo_data

    result = compare("mimo-cyber", ["cybergym"], data=demo_data(), permutations=2000, seed=3)
    summary = result.summary()
    block = summary["benches"][0]["baselines"]
    assert block["shared_in_pool"] == 6 and block["uniform"]["pool"] == 61
    assert block["stratified"]["by"] == "project"
    assert block["permutation"]["draws"] == 2000 and block["permutation"]["seed"] == 3
    assert summary["baselines"]["status"] == "ran"
    assert summary["parameters"]["permutations"] == 2000


def test_baselines_not_run_when_auto_pool_is_unavailable(cyber):
    result = compare("mimo-cyber", ["cybergym"], data=cyber, permutations=0)
    status = result.summary()["baselines"]
    assert status["status"] == "not_run"
    assert "arvo-meta" in status["reason"] or "ARVO-Meta" in status["reason"]
    # the same keys whether it ran or not: the bench block says not run, with the reason
    assert result.summary()["benches"][0]["baselines"] == {"status": "not_run", "reason": status["reason"]}


def test_explicit_pool_must_load_and_none_skips(cyber, tmp_path):
    import pytest

    from overlap.errors import OverlapError

    with pytest.raises(OverlapError):
        compare("mimo-cyber", ["cybergym"], data=cyber, pool="arvo-meta")
    # a path that is not there is said as a pool, not as an unknown dataset
    with pytest.raises(OverlapError, match=r"pool .*no-such: no such file or folder, and no registered pool"):
        compare("mimo-cyber", ["cybergym"], data=cyber, pool=str(tmp_path / "no-such"))
    assert compare("mimo-cyber", ["cybergym"], data=cyber, pool="none").summary()["baselines"]["status"] == "not_run"
    pool_file = tmp_path / "pool.csv"
    pool_file.write_text("id,project\n10288,libxml2\n10400,libxslt\n11500,harfbuzz\n17777,lcms\n19999,x\n")
    summary = compare("mimo-cyber", ["cybergym"], data=cyber, pool=str(pool_file), permutations=0).summary()
    assert summary["benches"][0]["baselines"]["shared_in_pool"] == 3
