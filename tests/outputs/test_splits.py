import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures import write_all

from overlap.api import compare
from overlap.errors import InputError, OverlapError
from overlap.outputs.ship import splits
from overlap.outputs.ship.splits import bench_lists, filter_split, push_split, write_split


def read_out(out):
    """The kept rows of every shard under data/ (parquet or JSON lines, in shard order) and removed.csv."""
    tables = []
    for path in sorted(p for p in (out / "data").rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            tables.append(pq.read_table(path))
        else:
            tables.append(pa.Table.from_pylist([json.loads(line) for line in path.read_text().splitlines()]))
    kept = pa.concat_tables(tables, promote_options="default")
    return kept, pd.read_csv(out / "removed.csv", dtype=str, keep_default_na=False)


def test_kept_plus_removed_is_input_and_every_removed_row_has_a_reason(demo_result, tmp_path):
    filtered = filter_split(demo_result)
    write_split(demo_result, filtered, tmp_path / "out")
    kept, removed = read_out(tmp_path / "out")
    source = pq.read_table(demo_result.train.provenance.location + "/cyber.parquet")
    assert kept.num_rows + len(removed) == source.num_rows == 11
    assert (removed["reasons"].str.len() > 0).all()
    assert kept.column_names == source.column_names  # all original columns
    kept_ids = [r["instance_id"] for r in kept.column("extra_info").to_pylist()]
    assert kept_ids == ["arvo_99999", "arvo_20001", "arvo_401234567"]
    assert kept_ids == demo_result.train_clean_ids()
    # The bug listed twice (rows 1 and 2): both copies match the bench, the second also carries dup.
    assert removed.set_index("item_id").loc["arvo_10102", "reasons"] == "dup:ossfuzz;id:ossfuzz"
    assert removed.set_index("item_id").loc["arvo_42471002", "bench_ids"] == "arvo:10102"
    info = json.loads((tmp_path / "out" / "filter.json").read_text())
    assert info["removed_by_reason"] == {"dup:ossfuzz": 1, "id:ossfuzz": 8}
    assert info["kept_rows"] == 3 and info["provenance"]["files"][0]["rows"] == 11


def test_dup_alone_keeps_the_first_copy(demo_result):
    removed = filter_split(demo_result, ["dup"]).removed
    assert removed[["row", "item_id", "reasons"]].values.tolist() == [[2, "arvo_10102", "dup:ossfuzz"]]


def test_reasons_choose_what_drops(demo_result):
    assert filter_split(demo_result, ["id:cve"]).removed.empty  # the demo only has OSS-Fuzz keys
    assert len(filter_split(demo_result, ["id:ossfuzz"]).removed) == 8
    for reason in ("bogus", "id:nosuchkind", "ngram:0", "ngram:65", "ngram:１３"):
        with pytest.raises(InputError, match=f"unknown drop reason '{reason}'"):
            filter_split(demo_result, [reason])
    with pytest.raises(InputError, match="no 'ngram_13' column"):
        filter_split(demo_result, ["ngram:13"])


def test_fix_relation_and_flag_columns(demo_result):
    pairs = demo_result.benches[0].pairs
    pairs["fix_relation"] = ["identical", "different", "not_comparable", "contains", "different", "different",
                            "different", "different"]
    removed = filter_split(demo_result, ["fix"]).removed
    assert removed["item_id"].tolist() == ["arvo_10055", "arvo_42471005"]
    assert set(removed["reasons"]) == {"fix"}
    demo_result.train.items["spec_harness"] = demo_result.train.items["item_id"] == "arvo_99999"
    flagged = filter_split(demo_result, ["spec:harness", "ngram:13"], flagged={"ngram:13": ["arvo_20001"]})
    assert flagged.removed[["item_id", "reasons"]].values.tolist() == [
        ["arvo_99999", "spec:harness"], ["arvo_20001", "ngram:13"]]


def test_rows_without_an_id_are_kept_and_counted(tmp_path):
    paths = write_all(tmp_path / "data")
    from fixtures import write_mimo

    write_mimo(paths["mimo-cyber"], ids=["arvo_10288", None, "arvo_10400", "arvo_42470443"])
    result = compare("mimo-cyber", ["cybergym"], data=paths)
    filtered = filter_split(result)
    assert (filtered.source_rows, filtered.items, filtered.rows_without_item) == (4, 3, 1)
    write_split(result, filtered, tmp_path / "out")
    kept, removed = read_out(tmp_path / "out")
    assert kept.num_rows + len(removed) == 4
    assert [r["instance_id"] for r in kept.column("extra_info").to_pylist()] == [None]


def test_rows_are_taken_across_several_jsonl_files(tmp_path):
    paths = write_all(tmp_path / "data")
    result = compare("sec-bench", ["cybergym"], data=paths)
    filtered = filter_split(result)
    write_split(result, filtered, tmp_path / "out")
    kept, removed = read_out(tmp_path / "out")
    assert kept.num_rows + len(removed) == 5  # 3 rows in eval-oss.jsonl + 2 in eval-cve.jsonl
    assert set(removed["item_id"]) == {"php.ossfuzz-42491394", "php.ossfuzz-42537168"}
    assert "jq.cve-2023-50246" in kept.column("instance_id").to_pylist()
    assert "sanitizer_report" in kept.column_names  # columns the adapter never read are kept too


def test_changed_source_is_refused(demo_copy, tmp_path):
    result = compare("mimo-cyber", ["cybergym"], data=demo_copy)
    result.train.source = None  # rebuilt from the provenance through the registry
    path = demo_copy["mimo-cyber"] / "cyber.parquet"
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(InputError, match="changed since it was compared"):
        write_split(result, filter_split(result), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_outputs_are_byte_identical_on_rerun(demo_result, tmp_path):
    filtered = filter_split(demo_result)
    for name in ("a", "b"):
        write_split(demo_result, filtered, tmp_path / name)
    for name in ("data/cyber.parquet", "removed.csv", "filter.json", "cybergym_clean_ids.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_bench_lists_partition_the_benchmark(demo_result):
    lists = bench_lists(demo_result)
    clean = lists["cybergym_clean_ids.txt"].split()
    dirty = lists["cybergym_contaminated_ids.txt"].split()
    assert len(clean) + len(dirty) == 10 and not set(clean) & set(dirty)
    assert set(dirty) == set(demo_result.benches[0].pairs["bench_id"])


def test_push_opens_a_pr_through_datasets(demo_result, fake_api, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(splits, "_push_with_datasets",
                        lambda table, repo, config, token, description: calls.append(
                            (table.num_rows, repo, config, token, description)) or "https://hf.test/pr/1")
    filtered = filter_split(demo_result)
    write_split(demo_result, filtered, tmp_path / "split")
    url = push_split(demo_result, filtered, "me/mimo", "minus-cybergym", split=tmp_path / "split", api=fake_api)
    assert url == "https://hf.test/pr/1"
    rows, repo, config, token, description = calls[0]
    assert (rows, repo, config, token) == (3, "me/mimo", "minus-cybergym", "hf_test")
    assert "XiaomiMiMo/MiMo-V2.6-RL-oss" in description and '"removed_rows": 8' in description


@pytest.mark.parametrize(("api_args", "message"), [
    ({"token": None}, "no Hugging Face token"),
    ({"role": "read"}, "read-only"),
    ({"repo_exists": False}, "no such Hub dataset repo"),
])
def test_push_refused_before_anything_is_sent(demo_result, monkeypatch, api_args, message):
    from outputs_helpers import FakeHfApi

    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    monkeypatch.setattr(splits, "_push_with_datasets", lambda *a: pytest.fail("must not push"))
    with pytest.raises(OverlapError, match=message):
        push_split(demo_result, filter_split(demo_result), "me/mimo", "minus-cybergym", split=Path("unused"),
                   api=FakeHfApi(**api_args))


def test_rows_come_back_from_a_hub_cache_and_from_a_single_file(tmp_path, monkeypatch):
    from test_sources import _fake_hub_cache

    from overlap.sources.registry.registry import get_spec

    paths = write_all(tmp_path / "data")
    spec = get_spec("mimo-cyber")
    cache = tmp_path / "hfcache"
    _fake_hub_cache(cache, spec.hub_repo, spec.revision, {"cyber.parquet": paths["mimo-cyber"] / "cyber.parquet"})
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    hub_paths = {k: v for k, v in paths.items() if k != "mimo-cyber"}
    single = dict(paths, **{"mimo-cyber": paths["mimo-cyber"] / "cyber.parquet"})
    for data in (hub_paths, single):
        result = compare("mimo-cyber", ["cybergym"], data=data)
        result.train.source = None  # rebuilt from the provenance: Hub cache at the pinned revision, or the file
        filtered = filter_split(result)
        write_split(result, filtered, tmp_path / result.train.provenance.origin)
        kept, removed = read_out(tmp_path / result.train.provenance.origin)
        assert kept.num_rows + len(removed) == 7 and len(removed) == 5
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("hub", "local"))) == [
        "hub-cache", "local-file"]


def test_the_filtered_folder_loads_with_the_datasets_client(demo_result, tmp_path):
    """`datasets.load_dataset(<filter output>)` reads the kept rows (its README's configs name the shards; without
    them it read the id lists), the same rows and columns as the shards."""
    import datasets

    filtered = filter_split(demo_result)
    write_split(demo_result, filtered, tmp_path / "out")
    kept, _ = read_out(tmp_path / "out")
    loaded = datasets.load_dataset(str(tmp_path / "out"), split="train", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == kept.num_rows and loaded.column_names == kept.column_names
    assert loaded.to_pandas().astype(str).equals(kept.to_pandas().astype(str))


def test_a_split_of_mixed_formats_gets_no_loading_card():
    assert splits.loading_card(["data/a.parquet", "data/b.jsonl"]) is None
    card = splits.loading_card(["data/a.jsonl.gz", "data/b c.jsonl"])
    assert '- "data/b c.jsonl"' in card and card.startswith("---\nconfigs:\n")
