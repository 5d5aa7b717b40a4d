# ruff: noqa: F811  (pytest fixtures imported from swe_fixtures are test arguments of the same name)
"""SWE adapters on hand-made Hub-like folders: items, keys, counted bad input, lazy columns, Hub cache."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from swe_fixtures import A, B, offline_hub, prs_folder, swe_data, write_msb, write_parquet  # noqa: F401

from overlap.errors import InputError
from overlap.sources.load import load_dataset
from overlap.sources.registry.swe import ensure_columns, fetch_columns


def problems(dataset) -> dict[str, int]:
    return {p.what: p.count for p in dataset.problems}


def keys_of(dataset, item_id) -> dict[str, str]:
    keys = dataset.keys[dataset.keys["item_id"] == item_id]
    return dict(zip(keys["kind"], keys["value"], strict=True))


def row(dataset, item_id) -> dict:
    return dataset.items.set_index("item_id").loc[item_id].to_dict()


def test_rebench_v2_key_scan(swe_data):
    ds = load_dataset("swe-rebench-v2", swe_data)
    assert len(ds.items) == 16
    assert problems(ds) == {"duplicate_id": 1, "malformed_id": 1, "missing_base_commit": 1}
    assert "patch" not in ds.items.columns and "text_problem_statement" not in ds.items.columns
    clap = row(ds, "kbknapp__clap-rs-941")
    assert (clap["project"], clap["repo"], clap["pr"], clap["base_commit"]) == (
        "clap-rs/clap", "kbknapp/clap-rs", 941, A[1])
    assert keys_of(ds, "kbknapp__clap-rs-941") == {
        "repo_pr": "clap-rs/clap#941", "repo_pr_exact": "kbknapp/clap-rs#941", "base_pr": f"{A[1]}#941",
        "base": A[1]}
    assert keys_of(ds, "sharkdp__bat-1000") == {"repo_pr": "sharkdp/bat#1000", "repo_pr_exact": "sharkdp/bat#1000"}
    assert keys_of(ds, "not-an-id") == {"base": A[14]}
    assert ds.provenance.origin == "local-folder"
    assert [f.path for f in ds.provenance.files] == ["data/train-00000-of-00001.parquet"]


def test_rebench_v2_texts_fetched_later_for_given_items_only(swe_data):
    ds = load_dataset("swe-rebench-v2", swe_data)
    frame = fetch_columns(ds, ["tokio-rs__tokio-2145", "sharkdp__bat-1000", "no-such-id"])
    assert list(frame.index) == ["sharkdp__bat-1000", "tokio-rs__tokio-2145"]
    assert frame.loc["tokio-rs__tokio-2145", "text_problem_statement"] == "Issue text of tokio-rs__tokio-2145"
    assert "tokio/src/runtime.rs" in frame.loc["tokio-rs__tokio-2145", "patch"]
    assert ensure_columns(ds, ["tokio-rs__tokio-2145"], ("patch",)) == 1
    items = ds.items.set_index("item_id")
    assert "tokio/src/runtime.rs" in items.loc["tokio-rs__tokio-2145", "patch"]
    assert items["patch"].notna().sum() == 1
    assert ensure_columns(ds, ["tokio-rs__tokio-2145"], ("patch",)) == 0  # already there
    with pytest.raises(InputError, match="cannot be fetched"):
        fetch_columns(ds, ["x"], ("crash_report",))


def test_rebench_v2_single_file(swe_data, tmp_path):
    single = tmp_path / "train.parquet"
    shutil.copy(swe_data["swe-rebench-v2"] / "data" / "train-00000-of-00001.parquet", single)
    ds = load_dataset("swe-rebench-v2", {"swe-rebench-v2": single})
    assert len(ds.items) == 16 and ds.provenance.origin == "local-file"
    assert fetch_columns(ds, ["kbknapp__clap-rs-941"]).shape == (1, 2)


def test_rebench_v2_prs_streams_files_and_counts_bad_input(prs_folder):
    ds = load_dataset("swe-rebench-v2-prs", {"swe-rebench-v2-prs": prs_folder})
    assert ds.items["item_id"].tolist() == ["kbknapp__clap-rs-941", "burntsushi__ripgrep-1367",
                                            "tokio-rs__tokio-2145", "x__y-5", "mui__material-ui-33000",
                                            "alibaba__fastjson2-2775"]
    assert problems(ds) == {"duplicate_id": 2, "duplicate_id_other_base": 1, "missing_base_commit": 1,
                            "missing_column": 5, "non_numeric_pr": 1, "unusable_file": 1}
    assert keys_of(ds, "x__y-5") == {"base": keys_of(ds, "x__y-5")["base"]}  # non-numeric PR: base only
    assert keys_of(ds, "alibaba__fastjson2-2775") == {"repo_pr": "alibaba/fastjson2#2775",
                                                       "repo_pr_exact": "alibaba/fastjson2#2775"}
    assert row(ds, "mui__material-ui-33000")["pr"] == 33000  # pull_number stored as text in that file
    assert [f.path for f in ds.provenance.files] == [
        "data/train-00000-of-00003.parquet", "data/train-00001-of-00003.parquet",
        "data/train-00002-of-00003.parquet", "extra/texts-only.parquet"]


def test_rebench_v2_prs_fetch_takes_the_first_row_of_a_repeated_id(prs_folder):
    ds = load_dataset("swe-rebench-v2-prs", {"swe-rebench-v2-prs": prs_folder})
    frame = fetch_columns(ds, ["burntsushi__ripgrep-1367", "alibaba__fastjson2-2775", "tokio-rs__tokio-2145"])
    assert frame.loc["burntsushi__ripgrep-1367", "text_problem_statement"] == "LLM text ripgrep (first)"
    assert frame.loc["alibaba__fastjson2-2775", "text_problem_statement"] == "LLM text fastjson2"
    assert frame.loc["tokio-rs__tokio-2145", "text_problem_statement"] == "LLM text tokio"


def test_nothing_usable_is_an_input_error(tmp_path):
    folder = tmp_path / "prs"
    write_parquet(folder / "data" / "a.parquet", [{"problem_statement": "x", "patch": "y"}])
    with pytest.raises(InputError, match="no usable rows.*unusable_file"):
        load_dataset("swe-rebench-v2-prs", {"swe-rebench-v2-prs": folder})
    v2 = tmp_path / "v2"
    write_parquet(v2 / "data" / "train-00000-of-00001.parquet", [{"repo": "a/b", "base_commit": A[1]}])
    with pytest.raises(InputError, match="missing_column: data/train-00000-of-00001.parquet: instance_id"):
        load_dataset("swe-rebench-v2", {"swe-rebench-v2": v2})
    broken = tmp_path / "broken"
    (broken / "data").mkdir(parents=True)
    (broken / "data" / "train-00000-of-00001.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="unreadable_file"):
        load_dataset("swe-rebench-v2", {"swe-rebench-v2": broken})


def test_a_parquet_missing_a_column_still_loads(tmp_path):
    folder = tmp_path / "ml"
    table = pa.table({"instance_id": ["burntsushi__ripgrep-1367"], "repo": ["burntsushi/ripgrep"]})
    (folder / "data").mkdir(parents=True)
    pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet")
    ds = load_dataset("swe-bench-multilingual", {"swe-bench-multilingual": folder})
    assert problems(ds) == {"missing_base_commit": 1, "missing_column": 3}
    assert keys_of(ds, "burntsushi__ripgrep-1367") == {"repo_pr": "burntsushi/ripgrep#1367",
                                                        "repo_pr_exact": "burntsushi/ripgrep#1367"}


def test_multi_swe_bench_languages_kotlin_subset_and_python_left_out(swe_data):
    ds = load_dataset("multi-swe-bench", swe_data)
    assert len(ds.items) == 8
    assert "django__django-11099" not in set(ds.items["item_id"])
    subsets = ds.items.set_index("item_id")["subset"]
    assert subsets["Kotlin__kotlinx.coroutines-3000"] == "kotlin_ext"
    assert sorted(ds.subsets()) == ["java", "kotlin_ext", "rust", "ts"]
    assert problems(ds) == {"malformed_line": 1, "missing_pr": 1}
    futures = row(ds, "rust-lang__futures-rs-1800")  # no instance_id in the row: made from org/repo/number
    assert (futures["repo"], futures["pr"]) == ("rust-lang/futures-rs", 1800)
    assert row(ds, "clap-rs__clap-941")["text_problem_statement"] == "Bug report\nBug report body"
    assert keys_of(ds, "alibaba__fastjson2-2800") == {"base": keys_of(ds, "alibaba__fastjson2-2800")["base"]}
    kotlin = load_dataset("multi-swe-bench:kotlin_ext", swe_data)
    assert kotlin.items["item_id"].tolist() == ["Kotlin__kotlinx.coroutines-3000"]
    with pytest.raises(InputError, match="unknown subset 'python'"):
        load_dataset("multi-swe-bench:python", swe_data)


def test_multi_swe_bench_from_an_offline_hub_cache(tmp_path, monkeypatch):
    revision = "56ff018c04a38e27ada1e9d0a6d5839a51f88f0d"
    write_msb(tmp_path / "hub" / "datasets--ByteDance-Seed--Multi-SWE-bench" / "snapshots" / revision)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    ds = load_dataset("multi-swe-bench")
    assert len(ds.items) == 8
    assert (ds.provenance.origin, ds.provenance.revision) == ("hub-cache", revision)
    assert all(len(f.sha256) == 64 for f in ds.provenance.files)


def test_multi_swe_rl_discarded(swe_data):
    ds = load_dataset("multi-swe-rl-discarded", swe_data)
    assert ds.items["item_id"].tolist() == ["BurntSushi__ripgrep-1368", "tokio-rs__tokio-2145"]
    assert problems(ds) == {}  # the set has no base commits: not a problem of its rows
    assert set(ds.keys["kind"]) == {"repo_pr", "repo_pr_exact"}


def test_polybench_float_prs_missing_repo_non_numeric_pr_and_verified(swe_data):
    ds = load_dataset("swe-polybench", swe_data)
    assert len(ds.items) == 6
    assert row(ds, "keras-team__keras-19284")["pr"] == 19284
    assert row(ds, "keras-team__keras-19284")["base_commit"] == A[5]  # written upper case
    assert problems(ds) == {"missing_base_commit": 1, "missing_repo": 1, "non_numeric_pr": 1}
    assert keys_of(ds, "microsoft__vscode-100") == {"base_pr": f"{A[16]}#100", "base": A[16]}
    verified = ds.items.set_index("item_id")["in_verified"]
    assert verified[verified].index.tolist() == ["keras-team__keras-19284", "huggingface__transformers-500"]
    assert any(f.path.startswith("AmazonScience/SWE-PolyBench_Verified@") for f in ds.provenance.files)


def test_polybench_without_its_verified_folder_reports_it(swe_data, tmp_path):
    alone = tmp_path / "alone" / "SWE-PolyBench"
    shutil.copytree(swe_data["swe-polybench"], alone)
    ds = load_dataset("swe-polybench", {"swe-polybench": alone})
    assert "in_verified" not in ds.items.columns
    assert problems(ds)["subset_unavailable"] == 1


def test_multilingual_lowercase_repos_and_duplicate_ids(swe_data):
    ds = load_dataset("swe-bench-multilingual", swe_data)
    assert len(ds.items) == 5
    assert problems(ds) == {"duplicate_id": 1}
    assert row(ds, "burntsushi__ripgrep-1367")["repo"] == "burntsushi/ripgrep"
    assert keys_of(ds, "tokio-rs__tokio-2145")["base_pr"] == f"{B[4]}#2145"


def test_swe_bench_test_by_default_dev_selectable_verified_flag(swe_data):
    ds = load_dataset("swe-bench", swe_data)
    assert ds.items["item_id"].tolist() == ["django__django-11099", "psf__requests-2317", "keras-team__keras-19284"]
    assert ds.items.set_index("item_id")["in_verified"].to_dict() == {
        "django__django-11099": True, "psf__requests-2317": False, "keras-team__keras-19284": False}
    dev = load_dataset("swe-bench:dev", swe_data)
    assert dev.items["item_id"].tolist() == ["sqlfluff__sqlfluff-4764"]
    both = load_dataset("swe-bench:test,dev", swe_data)
    assert both.subsets() == ["dev", "test"] and len(both.items) == 4
    verified = load_dataset("swe-bench-verified", swe_data)
    assert verified.items["item_id"].tolist() == ["django__django-11099"]


def test_swe_bench_pro_merges_configs_without_pr_keys(swe_data):
    ds = load_dataset("swe-bench-pro", swe_data)
    assert len(ds.items) == 3
    assert problems(ds) == {}
    assert set(ds.keys["kind"]) == {"base"}
    assert ds.items["pr"].isna().all()
    flags = ds.items[["in_default", "in_hard", "in_v1"]].sum().to_dict()
    assert flags == {"in_default": 3, "in_hard": 1, "in_v1": 3}
    hard = load_dataset("swe-bench-pro:hard", swe_data)
    assert len(hard.items) == 1 and hard.items["subset"].tolist() == ["hard"]
