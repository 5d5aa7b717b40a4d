# ruff: noqa: F811  (pytest fixtures imported from swe_fixtures are test arguments of the same name)
"""`overlap compare swe-rebench-v2 multi-swe-bench swe-polybench swe-bench-multilingual` on local Hub-like
folders: the counts per key, pair kinds, subsets, repos and renames, checked by hand against conftest's table."""

from __future__ import annotations

import json

import pytest
from swe_fixtures import A, offline_hub, prs_folder, swe_data, write_parquet  # noqa: F401
from typer.testing import CliRunner

from overlap.api import compare
from overlap.cli import app
from overlap.evidence.swe_pairs import classify_pairs, classify_result
from overlap.join import join
from overlap.outputs.report.result_folders import dumps_json

BENCHES = ["multi-swe-bench", "swe-polybench", "swe-bench-multilingual"]


def data_args(data) -> list[str]:
    return [arg for name, path in data.items() for arg in ("--data", f"{name}={path}")]


def swe_sections(result):
    """The SWE sections compare attached (top level + one block per benchmark), as evidence/swe_pairs builds them."""
    return {**result.sections["swe"], "benches": [c.sections["swe"] for c in result.benches]}


@pytest.fixture(scope="module")
def sections(swe_data):
    result = compare("swe-rebench-v2", BENCHES, data=swe_data)
    return result, swe_sections(result)


def bench(sections, name):
    return next(b for b in sections[1]["benches"] if b["bench"] == name)


def test_cli_compare_runs_on_the_swe_folders(swe_data, tmp_path):
    args = ["compare", "swe-rebench-v2", *BENCHES, *data_args(swe_data), "--format", "json",
            "--out", str(tmp_path / "report")]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert [b["bench"] for b in summary["benches"]] == BENCHES
    # counted pairs only: Multilingual's same-base-other-PR pair is in related.csv, not in the overlap
    assert [b["bench_items_matched"] for b in summary["benches"]] == [6, 4, 3]
    assert (tmp_path / "report" / "related.csv").read_text().count("same_base_other_pr") == 1
    assert (tmp_path / "report" / "pairs.csv").is_file()


def test_cli_compare_exits_2_when_nothing_usable_remains(swe_data, tmp_path):
    folder = tmp_path / "v2"
    write_parquet(folder / "data" / "train-00000-of-00001.parquet", [{"language": "rust"}])
    args = ["compare", "swe-rebench-v2", "swe-bench-multilingual", "--data", f"swe-rebench-v2={folder}",
            "--data", f"swe-bench-multilingual={swe_data['swe-bench-multilingual']}", "--no-report"]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 2
    assert "no usable rows" in run.stderr and "instance_id" in run.stderr


def test_counts_per_key(sections):
    assert bench(sections, "multi-swe-bench")["found_by_key"] == {
        "repo_pr_exact": 4, "repo_pr_casefold": 4, "repo_pr": 5, "base_pr": 6, "base": 6}
    assert bench(sections, "swe-polybench")["found_by_key"] == {
        "repo_pr_exact": 2, "repo_pr_casefold": 2, "repo_pr": 3, "base_pr": 4, "base": 4}
    # lowercase repos: the exact join misses ripgrep, the case-folded one finds it
    assert bench(sections, "swe-bench-multilingual")["found_by_key"] == {
        "repo_pr_exact": 2, "repo_pr_casefold": 3, "repo_pr": 3, "base_pr": 1, "base": 2}
    assert bench(sections, "multi-swe-bench")["found_only_by_known_renames"] == 1  # kbknapp/clap-rs
    assert bench(sections, "swe-polybench")["found_only_by_known_renames"] == 1  # jlongster/prettier


def test_overlap_and_shares(sections):
    msb, poly, ml = (bench(sections, n) for n in BENCHES)
    assert (msb["bench_items"], msb["overlap"]["bench_items"], msb["overlap"]["share"]) == (8, 6, 0.75)
    assert (poly["bench_items"], poly["overlap"]["bench_items"], poly["overlap"]["share"]) == (6, 4, 0.6667)
    assert (ml["bench_items"], ml["overlap"]["bench_items"], ml["overlap"]["share"]) == (5, 3, 0.6)
    assert ml["overlap"]["bench_items_by_kind"] == {
        "same_pr_same_base": 1, "same_pr_other_base": 1, "same_pr_base_unknown": 1,
        "same_base_identical_fix_no_pr": 0}
    assert ml["pair_kinds"]["same_base_other_pr"] == {"pairs": 1, "bench_items": 1, "train_items": 1,
                                                      "counted": False}
    assert ml["fix_relations"] == {"same_pr_base_unknown": {"identical": 1}, "same_pr_other_base": {"identical": 1}}
    assert sections[1]["train_items"] == 16
    assert sections[1]["train_items_in_any_pair"] == 10
    assert sections[1]["train_items_in_any_pair_incl_reported"] == 11


def test_subsets_repos_presence_and_renames(sections):
    msb, poly, ml = (bench(sections, n) for n in BENCHES)
    assert poly["subsets"]["in_verified"] == {"bench_items": 2, "overlap": 1, "share": 0.5, "known": True}
    assert msb["subsets"]["subset:kotlin_ext"]["overlap"] == 1
    assert msb["subsets"]["subset:ts"] == {"bench_items": 1, "overlap": 0, "share": 0.0, "known": True}
    by_repo = {r["repo"]: r for r in ml["by_repo"]}
    assert by_repo["tokio-rs/tokio"] == {"repo": "tokio-rs/tokio", "bench_items": 2, "overlap": 1, "share": 0.5,
                                         "train_items_in_repo": 2}
    assert ml["repo_presence"]["absent_repos"] == ["redis/redis"]
    assert msb["repo_presence"]["present_in_train"] == 6 and msb["repo_presence"]["bench_repos"] == 7
    assert msb["repo_presence"]["absent_but_suggested_rename"] == ["rust-lang/futures-rs"]
    assert poly["repo_presence"]["bench_items_without_repo"] == 1
    assert [(r["train_repo"], r["bench_repo"], r["pairs"]) for r in msb["suggested_renames"]] == [
        ("rust-lang-nursery/futures-rs", "rust-lang/futures-rs", 1)]
    assert poly["suggested_renames"] == [] and ml["suggested_renames"] == []


def test_pairs_get_a_kind_column_and_sections_are_deterministic(swe_data, sections):
    result, first = sections
    pairs = result.pairs
    assert {"pair_kind", "counted", "fix_relation", "fix_reason"} <= set(pairs.columns)
    kinds = pairs.set_index(["bench", "bench_id"])["pair_kind"]
    assert kinds[("swe-bench-multilingual", "tokio-rs__tokio-2145")] == "same_pr_other_base"
    assert kinds[("swe-bench-multilingual", "sharkdp__bat-1000")] == "same_pr_base_unknown"
    assert kinds[("swe-polybench", "microsoft__vscode-100")] == "same_pr_same_base"
    again = swe_sections(compare("swe-rebench-v2", BENCHES, data=swe_data))
    assert dumps_json(again) == dumps_json(first)


def test_pro_pairs_need_the_same_fix(swe_data):
    result = compare("swe-rebench-v2", ["swe-bench-pro"], data=swe_data)
    section = swe_sections(result)["benches"][0]
    assert section["found_by_key"]["base"] == 2
    assert section["overlap"]["bench_items"] == 1
    assert section["overlap"]["bench_items_by_kind"]["same_base_identical_fix_no_pr"] == 1
    assert section["pair_kinds"]["same_base_no_pr_other_fix"]["pairs"] == 1
    assert section["fix_relations"] == {"same_base_identical_fix_no_pr": {"identical": 1},
                                        "same_base_no_pr_other_fix": {"different": 1}}
    assert section["subsets"]["in_hard"]["overlap"] == 0


def test_classification_without_fix_relation(swe_data):
    result = compare("swe-rebench-v2", ["swe-bench-pro"], data=swe_data)
    comp = result.benches[0]
    pairs = classify_pairs(join(result.train, comp.bench), result.train, comp.bench, fix=False)
    assert pairs["pair_kind"].tolist() == ["same_base_no_pr_other_fix"] * 2
    assert not pairs["counted"].any()
    assert pairs["fix_reason"].str.startswith("not_run").all()
    assert classify_pairs(pairs, result.train, comp.bench) is pairs  # idempotent


def test_rebench_prs_as_train_fetches_patches_for_fix_relation(swe_data, prs_folder):
    data = dict(swe_data, **{"swe-rebench-v2-prs": prs_folder})
    result = compare("swe-rebench-v2-prs", ["swe-bench-multilingual"], data=data)
    section = swe_sections(result)["benches"][0]
    assert section["found_by_key"] == {"repo_pr_exact": 1, "repo_pr_casefold": 2, "repo_pr": 2, "base_pr": 1,
                                       "base": 1}
    assert section["fix_relations"] == {"same_pr_other_base": {"identical": 1}}
    patches = result.train.items.set_index("item_id")["patch"]
    assert patches.notna().sum() == 1 and "tokio" in patches["tokio-rs__tokio-2145"]


def test_base_commit_case_does_not_matter(swe_data):
    result = classify_result(compare("swe-rebench-v2", ["swe-polybench"], data=swe_data))
    pairs = result.pairs.set_index("bench_id")
    assert pairs.loc["keras-team__keras-19284", "pair_kind"] == "same_pr_same_base"
    assert A[5].upper() in pairs.loc["keras-team__keras-19284", "bench_raw"]


def test_a_base_written_short_is_the_same_base_as_the_full_sha_it_begins():
    """`e9afd48` and `e9afd48a2e…` name one commit: a pair of one PR at them is at the same base; a base that
    only shares a few letters, or differs, is another base."""
    import pandas as pd

    from overlap.evidence.swe_pairs import _base_kinds

    full = "e9afd48a2ea9c7d4e7bb2f1d4f35c9a3b1f0c2d1"
    train = pd.DataFrame({"base_commit": ["e9afd48", "e9afd49", full, None], "pr": [1, 1, 1, 1]},
                         index=["short", "other", "same", "none"])
    bench = pd.DataFrame({"base_commit": [full], "pr": [1]}, index=["b"])
    pairs = pd.DataFrame({"train_id": ["short", "other", "same", "none"], "bench_id": ["b"] * 4,
                          "kinds": ["repo_pr;repo_pr_exact", "repo_pr", "repo_pr;base_pr;base", "repo_pr"]})
    assert _base_kinds(pairs, train, bench) == ["same_pr_same_base", "same_pr_other_base", "same_pr_same_base",
                                                "same_pr_base_unknown"]
