import json
import shutil

import pytest
from fixtures import SECBENCH_CVE, SECBENCH_OSS, write_cybergym, write_mapping, write_mimo, write_secbench

from overlap.errors import HubUnavailableError, InputError, UnknownDatasetError
from overlap.sources.load import load_dataset, load_identity, parse_data_options
from overlap.sources.registry.registry import all_specs, get_spec, parse_selection


def test_mimo_local_folder_reads_ids_texts_and_counts_malformed(tmp_path):
    root = write_mimo(tmp_path / "mimo")
    ds = load_dataset("mimo-cyber", {"mimo-cyber": root})
    assert len(ds.items) == 7
    assert ds.items.loc[0, "text_prompt"].startswith("AddressSanitizer: heap-buffer-overflow in function")
    assert ds.items.loc[0, "text_problem_statement"].startswith("Fix the crash")
    # The malformed id is kept as an item, has no key, and is counted.
    assert "arvo_badid" in set(ds.items["item_id"])
    assert "arvo_badid" not in set(ds.keys["item_id"])
    assert [(p.what, p.count, p.example) for p in ds.problems] == [("malformed_id", 1, "arvo_badid")]
    assert ds.provenance.origin == "local-folder"
    assert ds.provenance.files[0].path == "cyber.parquet" and ds.provenance.files[0].rows == 7
    assert len(ds.provenance.files[0].sha256) == 64


def test_cybergym_subsets_and_subset_selection(tmp_path):
    root = write_cybergym(tmp_path / "cg")
    ds = load_dataset("cybergym", {"cybergym": root})
    assert ds.subsets() == ["arvo", "oss-fuzz"]
    assert (ds.items["project"] == "libxml2").sum() == 1
    only = load_dataset("cybergym:oss-fuzz", {"cybergym": root})
    assert sorted(only.items["item_id"]) == ["oss-fuzz:386128948", "oss-fuzz:42537168"]


def test_secbench_two_files_give_subsets_and_cve_keys(tmp_path):
    root = write_secbench(tmp_path / "sb")
    ds = load_dataset("sec-bench", {"sec-bench": root})
    assert ds.items["subset"].value_counts().to_dict() == {"oss": 3, "cve": 2}
    cve = ds.keys[ds.keys["kind"] == "cve"]
    assert sorted(cve["value"]) == ["CVE-2022-40303", "CVE-2023-50246"]
    assert sorted(cve["raw"]) == ["cve-2022-40303", "cve-2023-50246"]
    assert ds.items.loc[0, "project"] == "php"
    assert ds.items.loc[0, "base_commit"] == "abcdef0123456789abcdef0123456789abcdef01"  # lowercased
    oss_only = load_dataset("sec-bench:oss", {"sec-bench": root})
    assert len(oss_only.items) == 3 and [f.path for f in oss_only.provenance.files] == ["data/eval-oss.jsonl"]


def test_single_local_file_is_detected_and_subsets_come_from_ids(tmp_path):
    root = write_secbench(tmp_path / "sb")
    merged = tmp_path / "secbench-all.jsonl"
    merged.write_text((root / "data/eval-oss.jsonl").read_text() + (root / "data/eval-cve.jsonl").read_text())
    ds = load_dataset(str(merged))
    assert ds.name == "secbench-all"
    assert ds.provenance.adapter == "sec-bench" and ds.provenance.origin == "local-file"
    assert ds.items["subset"].value_counts().to_dict() == {"oss": len(SECBENCH_OSS), "cve": len(SECBENCH_CVE)}
    # The same file through --data NAME=FILE
    same = load_dataset("sec-bench", {"sec-bench": merged})
    assert list(same.items["item_id"]) == list(ds.items["item_id"])


def _fake_hub_cache(cache, repo_id, revision, files):
    repo = cache / f"datasets--{repo_id.replace('/', '--')}"
    snap = repo / "snapshots" / revision
    for rel, src in files.items():
        (snap / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, snap / rel)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)


def test_hub_cache_offline_at_pinned_revision(tmp_path, monkeypatch):
    spec = get_spec("sec-bench")
    root = write_secbench(tmp_path / "sb")
    cache = tmp_path / "hfcache"
    _fake_hub_cache(cache, spec.hub_repo, spec.revision,
                    {rel: root / rel for rel in spec.files.values()})
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = load_dataset("sec-bench")
    assert len(ds.items) == 5
    assert ds.provenance.origin == "hub-cache"
    assert ds.provenance.repo_id == "SEC-bench/SEC-bench"
    assert ds.provenance.revision == spec.revision
    # HF_HOME is honoured too (cache under $HF_HOME/hub)
    monkeypatch.delenv("HF_HUB_CACHE")
    home = tmp_path / "home"
    shutil.copytree(cache, home / "hub")
    monkeypatch.setenv("HF_HOME", str(home))
    assert len(load_dataset("SEC-bench/SEC-bench").items) == 5  # the Hub id is an alias


def test_hub_cache_by_branch_name_resolves_the_commit(tmp_path, monkeypatch):
    spec = get_spec("cybergym")
    root = write_cybergym(tmp_path / "cg")
    cache = tmp_path / "hfcache"
    sha = "1" * 40
    _fake_hub_cache(cache, spec.hub_repo, sha, {"tasks.json": root / "tasks.json"})
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    ds = load_dataset("cybergym@main")
    assert ds.provenance.revision == sha


def test_hub_unreachable_without_cache_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(HubUnavailableError) as info:
        load_dataset("cybergym")
    message = str(info.value)
    assert "sunblaze-ucb/cybergym" in message and "--data" in message and "tasks.json" in message


def test_arvo_mapping_from_folder_file_and_cache(tmp_path, monkeypatch):
    folder = write_mapping(tmp_path / "ARVO")
    mapping, prov = load_identity("arvo", {"arvo": folder})
    assert len(mapping) == 5 and prov.files[0].path == "arvo/oss_fuzz_mappings.csv"
    mapping, prov = load_identity("arvo", {"arvo": folder / "arvo" / "oss_fuzz_mappings.csv"})
    assert len(mapping) == 5 and prov.origin == "local-file"
    # A cached download is used offline, and a corrupted cache file is refused.
    spec = get_spec("arvo")
    cached = tmp_path / "cache" / "github" / spec.hub_repo / spec.revision / "arvo" / "oss_fuzz_mappings.csv"
    cached.parent.mkdir(parents=True)
    shutil.copy(folder / "arvo" / "oss_fuzz_mappings.csv", cached)
    import hashlib

    cached.with_name(cached.name + ".sha256").write_text(hashlib.sha256(cached.read_bytes()).hexdigest())
    monkeypatch.setenv("OVERLAP_CACHE", str(tmp_path / "cache"))
    mapping, prov = load_identity("arvo")
    assert len(mapping) == 5 and prov.origin == "github" and prov.revision == spec.revision
    cached.write_text("1,2\n")
    with pytest.raises(InputError, match="sha256"):
        load_identity("arvo")


def test_arvo_mapping_missing_offline(tmp_path):
    with pytest.raises(HubUnavailableError, match="--data"):
        load_identity("arvo")


def test_unknown_dataset_lists_known_names():
    with pytest.raises(UnknownDatasetError) as info:
        parse_selection("cybergymm")
    assert "cybergym" in str(info.value) and "sec-bench" in str(info.value) and "mimo-cyber" in str(info.value)


def test_selection_forms():
    assert parse_selection("cybergym@abc").revision == "abc"
    assert parse_selection("sec-bench:oss").subsets == ("oss",)
    assert parse_selection("sec-bench@abc:cve").subsets == ("cve",)
    assert parse_selection("MIMO").name == "mimo-cyber"
    with pytest.raises(InputError, match="unknown subset 'x'"):
        parse_selection("sec-bench:x")
    with pytest.raises(InputError, match="no such file"):
        parse_selection("./missing.jsonl")


def test_data_option_errors(tmp_path):
    with pytest.raises(InputError, match="NAME=PATH"):
        parse_data_options(["cybergym"])
    with pytest.raises(InputError, match="does not exist"):
        parse_data_options([f"cybergym={tmp_path / 'nope'}"])
    with pytest.raises(UnknownDatasetError):
        parse_data_options([f"nope={tmp_path}"])


def test_missing_id_column_names_file_and_column(tmp_path):
    root = tmp_path / "cg"
    root.mkdir()
    (root / "tasks.json").write_text(json.dumps([{"project_name": "x"}]))
    with pytest.raises(InputError) as info:
        load_dataset("cybergym", {"cybergym": root})
    assert "'task_id'" in str(info.value) and "tasks.json" in str(info.value)


def test_missing_optional_columns_are_null(tmp_path):
    root = tmp_path / "cg"
    root.mkdir()
    (root / "tasks.json").write_text(json.dumps([{"task_id": "arvo:1"}, {"task_id": "oss-fuzz:42000001"}]))
    ds = load_dataset("cybergym", {"cybergym": root})
    assert ds.items["text_description"].isna().all() and ds.items["project"].isna().all()


def test_non_utf8_truncated_parquet_bad_json_and_empty(tmp_path):
    bad = tmp_path / "sb" / "data"
    bad.mkdir(parents=True)
    (bad / "eval-oss.jsonl").write_bytes(b'{"instance_id": "php.ossfuzz-1"}\n{"instance_id": "\xff"}\n')
    (bad / "eval-cve.jsonl").write_text("")
    with pytest.raises(InputError, match=r"eval-oss.jsonl: line 2: not UTF-8"):
        load_dataset("sec-bench", {"sec-bench": tmp_path / "sb"})
    (bad / "eval-oss.jsonl").write_text('{"instance_id": "php.ossfuzz-1"}\n{"instance_id": \n')
    with pytest.raises(InputError, match=r"line 2: invalid JSON"):
        load_dataset("sec-bench", {"sec-bench": tmp_path / "sb"})
    (bad / "eval-oss.jsonl").write_text("")
    with pytest.raises(InputError, match="no usable rows"):
        load_dataset("sec-bench", {"sec-bench": tmp_path / "sb"})
    mimo = write_mimo(tmp_path / "mimo")
    data = (mimo / "cyber.parquet").read_bytes()
    (mimo / "cyber.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot read parquet"):
        load_dataset("mimo-cyber", {"mimo-cyber": mimo})


def test_rows_without_id_and_repeated_ids_are_counted(tmp_path):
    root = tmp_path / "cg"
    root.mkdir()
    rows = [{"task_id": "arvo:1"}, {"task_id": ""}, {"task_id": "arvo:1"}, {"task_id": "arvo:2"}]
    (root / "tasks.json").write_text(json.dumps(rows))
    ds = load_dataset("cybergym", {"cybergym": root})
    assert list(ds.items["item_id"]) == ["arvo:1", "arvo:2"]
    problems = {p.what: (p.count, p.example) for p in ds.problems}
    assert problems == {"missing_id": (1, "tasks.json row 1"), "duplicate_id": (1, "arvo:1")}


def test_cyber_datasets_are_pinned_to_full_revisions():
    import re

    names = {s.name for s in all_specs()}
    assert {"mimo-cyber", "cybergym", "sec-bench", "arvo"} <= names
    for name in ("mimo-cyber", "cybergym", "sec-bench", "arvo"):
        assert re.fullmatch(r"[0-9a-f]{40}", get_spec(name).revision), name
