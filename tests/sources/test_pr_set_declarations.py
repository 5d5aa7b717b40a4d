"""The SWE-rebench (first version), SWE-rebench leaderboard and SWE-bench-Live declarations read their hand-made
fixtures in the real layouts: the declared split only, the PR keys their columns give, the joins with each other and
with SWE-bench, the atlas over them, and the image names their `[audit]` tables give."""

from __future__ import annotations

from pathlib import Path

import pytest
from coverage_fixtures import BASE as COVERAGE_BASE
from coverage_fixtures import keys_of, write_coverage
from pr_set_fixtures import BASE, write_pr_sets

from overlap.api import compare
from overlap.api.atlas import atlas
from overlap.api.audit_benchmark import benchmark_targets
from overlap.audit.study.naming import ImageNaming
from overlap.sources.load import load_dataset
from overlap.sources.registry import registry

NEW = ("swe-rebench-v1", "swe-rebench-leaderboard", "swe-bench-live")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("pr-sets")
    return write_pr_sets(root) | {"swe-bench": write_coverage(root / "coverage")["swe-bench"]}


def test_each_is_declared_pinned_with_a_role_and_its_sources():
    roles = {"swe-rebench-v1": "training", "swe-rebench-leaderboard": "benchmark", "swe-bench-live": "benchmark"}
    for name in NEW:
        spec = registry.get_spec(name)
        assert spec.role == roles[name] and spec.hub_repo and spec.files
        assert spec.revision is not None and len(spec.revision) == 40, name
        assert "#" in spec.declaration and "huggingface.co/datasets/" in spec.declaration, name
    assert registry.get_spec("nebius/SWE-rebench").name == "swe-rebench-v1"  # the Hub id names the first version
    assert registry.get_spec("swe-rebench").name == "swe-rebench-v2"  # the older alias keeps its meaning


def test_swe_rebench_v1_reads_split_test_only_and_gives_pr_keys(data):
    v1 = load_dataset("swe-rebench-v1", data)
    assert sorted(v1.items["item_id"]) == ["encode__httpx-3001", "sympy__sympy-20590", "tobymao__sqlglot-4500"]
    keys = keys_of(v1, "encode__httpx-3001")
    assert keys["repo_pr"] == {"encode/httpx#3001"} and keys["base_pr"] == {f"{BASE['R1']}#3001"}
    assert v1.items["text_problem_statement"].notna().all() and v1.items["patch"].notna().all()


def test_swe_bench_live_reads_split_full_and_its_text_pull_numbers(data):
    live = load_dataset("swe-bench-live", data)
    assert len(live.items) == 3  # both full shards; lite and verified are drawn from full and not read again
    assert keys_of(live, "conan-io__conan-17800")["repo_pr"] == {"conan-io/conan#17800"}
    assert set(live.items["pr"]) == {17800, 10200, 3001}


def test_the_training_set_joins_the_benchmarks_by_pr_and_base(data):
    result = compare("swe-rebench-v1", ["swe-rebench-leaderboard", "swe-bench-live", "swe-bench"], data=data,
                     pool=None, evidence=False, text=[])
    found = {(b.name, t, bb) for b in result.benches for t, bb in zip(b.pairs["train_id"], b.pairs["bench_id"],
                                                                        strict=True)}
    assert found == {("swe-rebench-leaderboard", "tobymao__sqlglot-4500", "tobymao__sqlglot-4500"),
                     ("swe-bench-live", "encode__httpx-3001", "encode__httpx-3001"),
                     ("swe-bench", "sympy__sympy-20590", "sympy__sympy-20590")}
    assert COVERAGE_BASE["D3"] in set(result.train.keys["value"])


def test_atlas_over_the_new_sets(data, tmp_path):
    result = atlas(["swe-rebench-v1", "swe-rebench-leaderboard", "swe-bench-live", "swe-bench"], data=data,
                   cache=tmp_path / "cache", pool="none")
    cells = {(c["train"], c["bench"]): c for c in result.cells}
    assert cells[("swe-rebench-v1", "swe-rebench-leaderboard")]["bench_items_matched"] == 1
    assert cells[("swe-rebench-v1", "swe-bench-live")]["matched_same_pr_same_base"] == 1
    assert cells[("swe-rebench-leaderboard", "swe-bench-live")]["bench_items_matched"] == 0


@pytest.mark.parametrize("name, namespace", [("swe-bench-live", "starryzhang"),
                                              ("swe-rebench-leaderboard", "swerebench")])
def test_audit_names_follow_each_harness(name, namespace):
    spec = registry.get_spec(name)
    naming = ImageNaming.from_table(spec.audit, spec.origin)
    assert naming.target({}, "Textualize__textual-5600", "latest", Path(".")) == (
        "image", f"docker://docker.io/{namespace}/sweb.eval.x86_64.textualize_1776_textual-5600:latest")


def test_audit_targets_of_a_declared_benchmark_carry_its_reference(data):
    targets = benchmark_targets(["swe-rebench-leaderboard"], data=data)
    by_id = {t.instance_id: t for t in targets}
    assert set(by_id) == {"tobymao__sqlglot-4500", "Textualize__textual-5600"}
    target = by_id["tobymao__sqlglot-4500"]
    assert target.target == "docker://docker.io/swerebench/sweb.eval.x86_64.tobymao_1776_sqlglot-4500:latest"
    assert target.base_commit == BASE["R2"] and target.patch and target.test_patch and target.error is None
