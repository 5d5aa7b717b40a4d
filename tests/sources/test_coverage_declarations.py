"""The coverage declarations (SWE-Gym, SWE-Gym-Raw, SWE-bench Lite and Multimodal, SWE-smith, R2E-Gym-Subset,
Multi-SWE-RL, MiMo's code config) read their hand-made fixtures in the real layouts and give the keys their
sources allow, and no others; `overlap atlas` runs over them."""

from __future__ import annotations

import pytest
from coverage_fixtures import BASE, R2E, diff, keys_of, write_coverage

from overlap.api import compare
from overlap.api.atlas import atlas
from overlap.api.audit_benchmark import benchmark_targets
from overlap.sources.load import load_dataset
from overlap.sources.registry import registry

NEW = ("swe-gym", "swe-gym-raw", "swe-bench-lite", "swe-bench-multimodal", "swe-smith", "r2e-gym-subset",
       "multi-swe-rl", "mimo-code")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_coverage(tmp_path_factory.mktemp("coverage"))


def test_every_coverage_set_is_declared_with_a_role_and_a_source():
    for name in NEW:
        spec = registry.get_spec(name)
        assert spec.role in ("training", "benchmark", "reference"), name
        assert spec.files and spec.hub_repo, name
        assert spec.revision is None or len(spec.revision) == 40, name
        assert "#" in spec.declaration, f"{name}: the declaration names its sources in a comment"
        if spec.revision is None:  # unpinned only where no revision could be confirmed, and said so
            assert spec.notes.startswith("unpinned"), name


def test_swe_gym_row_gives_repo_pr_and_base_pr(data):
    gym = load_dataset("swe-gym", data)
    assert sorted(gym.items["item_id"]) == ["getmoto__moto-7365", "python__mypy-15050", "sympy__sympy-20590"]
    keys = keys_of(gym, "getmoto__moto-7365")
    assert keys["repo_pr"] == {"getmoto/moto#7365"}
    assert keys["base_pr"] == {f"{BASE['G1']}#7365"}
    assert keys["base"] == {BASE["G1"]}


def test_swe_gym_raw_takes_the_pr_from_pull_number(data):
    raw = load_dataset("swe-gym-raw", data)
    assert len(raw.items) == 2  # both parquet shards
    assert keys_of(raw, "pandas-dev__pandas-50000")["repo_pr"] == {"pandas-dev/pandas#50000"}


def test_swe_bench_lite_ids_join_swe_bench(data):
    lite = load_dataset("swe-bench-lite", data)
    assert sorted(lite.items["item_id"]) == ["django__django-11099", "sympy__sympy-20590"]  # dev is not read
    result = compare("swe-bench", ["swe-bench-lite"], data=data, pool=None, evidence=False)
    assert sorted(result.pairs["bench_id"]) == ["django__django-11099", "sympy__sympy-20590"]
    assert set(result.pairs["train_id"]) == set(result.pairs["bench_id"])


def test_swe_bench_multimodal_reads_the_test_split(data):
    mm = load_dataset("swe-bench-multimodal", data)
    assert sorted(mm.items["item_id"]) == ["chartjs__Chart.js-11116", "processing__p5.js-5771"]
    assert keys_of(mm, "chartjs__Chart.js-11116")["repo_pr"] == {"chartjs/chart.js#11116"}


def test_swe_smith_synthetic_bugs_have_no_key(data):
    smith = load_dataset("swe-smith", data)
    assert len(smith.items) == 2
    assert smith.keys.empty  # no PR, no issue, no full commit: nothing to join by
    assert smith.recognition.unrecognised == 2
    assert smith.items["text_problem_statement"].notna().all() and smith.items["patch"].notna().all()


def test_r2e_gym_commit_is_a_fix_commit_key(data):
    r2e = load_dataset("r2e-gym-subset", data)
    assert len(r2e.items) == 2
    fixes = set(r2e.keys.loc[r2e.keys["kind"] == "fix_commit", "value"])
    assert fixes == {R2E["pandas"], R2E["numpy"]}  # the upper-case hash is lowercased
    assert set(r2e.keys["kind"]) == {"fix_commit"}  # no PR, no base
    assert set(r2e.items["project"]) == {"pandas", "numpy"}


def test_multi_swe_rl_reads_the_language_folders_under_its_root(data):
    rl = load_dataset("multi-swe-rl", data)
    assert sorted(rl.items["item_id"]) == ["clap-rs__clap-941", "cli__cli-5000"]  # the discarded list is left out
    assert set(rl.items["subset"]) == {"rust", "go"}
    assert keys_of(rl, "clap-rs__clap-941")["repo_pr"] == {"clap-rs/clap#941"}


def test_mimo_code_ids_come_from_the_json_string_and_have_no_key(data):
    code = load_dataset("mimo-code", data)
    assert list(code.items["item_id"]) == ["format-code-task-000001", "format-code-task-000002"]
    assert code.keys.empty
    assert {p.what for p in code.problems} == {"malformed_instance_json"}
    assert code.items["text_problem_statement"].tolist() == ["Add a --json flag", "Fix the parser"]


def test_mimo_code_images_are_named_by_each_record(data):
    """The [audit] table reads docker_image, instance_id and test_patch inside the JSON string instance_json; the row's
    alias (format-code-task-000001:latest, served by no registry) becomes the published image."""
    targets = {t.instance_id: t for t in benchmark_targets(["mimo-code"], data=data)}
    assert set(targets) == {"format-code-task-000001", "format-code-task-000002"}  # the broken row is no item
    first = targets["format-code-task-000001"]
    assert first.target == "docker://docker.io/xiaomimimo/mimo-v2.6-rl-oss:format-code-task-000001"
    assert first.set == "mimo-code"
    assert first.test_patch == diff("mimo_test_command.sh", "", "pytest") and first.error is None


def test_atlas_over_the_new_sets(data, tmp_path):
    names = ["swe-gym", "swe-smith", "r2e-gym-subset", "swe-bench", "swe-bench-lite", "swe-bench-multimodal"]
    result = atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    cells = {(c["train"], c["bench"]): c for c in result.cells}
    assert len(cells) == 3 * 3 + 3 * 2  # three non-benchmarks × three benchmarks, benchmarks × the two others
    assert cells[("swe-gym", "swe-bench-lite")]["bench_items_matched"] == 1  # sympy__sympy-20590
    assert cells[("swe-bench-lite", "swe-bench")]["skipped"] == "own subset"
    for train in ("swe-smith", "r2e-gym-subset"):  # no key a benchmark shares: nothing concluded by ids
        for bench in ("swe-bench", "swe-bench-lite", "swe-bench-multimodal"):
            assert cells[(train, bench)]["bench_items_matched"] == 0
