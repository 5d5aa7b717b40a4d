"""A dataset is a mix: OSS-Fuzz ids, CVEs, fix commits and pull requests in one id column. Whether a pair counts
follows from that pair's own key kinds, so each scheme finds what it finds alone, whatever else the dataset or
the bench list holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from overlap.api.compare import compare
from overlap.api.filtering import filter_train
from overlap.api.matrix import matrix
from overlap.cli import app

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
DATA = {"cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}
BASE = "a" * 40
OTHER_BASE = "b" * 40


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def mix(tmp_path) -> Path:
    """OSS-Fuzz ids in both trackers' spellings, a CVE, a PR URL and a PR instance id in one column."""
    return _jsonl(tmp_path / "mix.jsonl", [
        {"task": "arvo:10055", "base": None},
        {"task": "https://github.com/Owner/Repo/pull/12", "base": BASE},
        {"task": "arvo_42471005", "base": None},  # arvo:10340 under its new-tracker id
        {"task": "jq.cve-2023-50246", "base": None},
        {"task": "keras-team__keras-19284", "base": BASE},
        {"task": "oss-fuzz:42471120", "base": None},
    ])


@pytest.fixture
def swe_bench(tmp_path) -> Path:
    """An SWE benchmark read by the same columns: the PR of the mix at its base, another PR at the same base."""
    return _jsonl(tmp_path / "swe.jsonl", [
        {"task": "owner__repo-12", "base": BASE},
        {"task": "keras-team__keras-19999", "base": BASE},  # same base, another PR: reported, not counted
        {"task": "psf__requests-1", "base": OTHER_BASE},
        {"task": "psf__requests-2", "base": OTHER_BASE},
        {"task": "psf__requests-3", "base": OTHER_BASE},
    ])


def _matched(result, bench: str) -> list[str]:
    return sorted(set(result[bench].pairs["bench_id"]))


def _run(train, benches):
    return compare(train, benches, data=DATA, id_column="task", columns={"base": "base"}, pool=None,
                   evidence=False, text=[])


def test_a_mix_finds_every_scheme_against_cybergym(mix):
    result = _run(mix, "cybergym")
    assert _matched(result, "cybergym") == ["arvo:10055", "arvo:10340", "oss-fuzz:42471120"]
    block = result.summary()["benches"][0]
    assert block["bench_items_by_pair_kind"]["same_ossfuzz"] == 3


def test_a_benchmark_cell_is_the_same_alone_or_beside_an_swe_benchmark(mix, swe_bench):
    alone = _run(mix, "cybergym")
    together = _run(mix, ["cybergym", str(swe_bench)])
    assert _matched(together, "cybergym") == _matched(alone, "cybergym") == [
        "arvo:10055", "arvo:10340", "oss-fuzz:42471120"]
    swe_name = together.bench_names[1]
    assert _matched(together, swe_name) == ["owner__repo-12"]
    assert _matched(_run(mix, str(swe_bench)), swe_name) == ["owner__repo-12"]
    related = together[swe_name].related
    assert set(related["pair_kind"]) == {"same_base_other_pr"}  # reported beside the overlap, not counted


def test_filter_of_a_mix_beside_an_swe_benchmark_drops_every_scheme(mix, swe_bench, tmp_path):
    _, decision, _ = filter_train(str(mix), ["cybergym", str(swe_bench)], tmp_path / "out", data=DATA,
                                  id_column="task", columns={"base": "base"})
    removed = set(decision.removed["item_id"])
    assert removed == {"arvo:10055", "arvo_42471005", "oss-fuzz:42471120", "https://github.com/Owner/Repo/pull/12"}


def test_fail_on_counts_cybergym_beside_an_swe_benchmark(mix, swe_bench, tmp_path):
    args = ["compare", str(mix), "cybergym", str(swe_bench), "--id-column", "task", "--base-column", "base",
            "-d", f"cybergym={DATA['cybergym']}", "-d", f"arvo={DATA['arvo']}", "--pool", "none",
            "--no-evidence", "--out", str(tmp_path / "report"), "--fail-on", "25%"]  # cybergym 30%, swe 20%
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 1, done.output


def test_matrix_translates_ossfuzz_ids_and_agrees_with_compare():
    data = {"mimo-cyber": DEMO / "mimo-cyber", **DATA}
    cells = matrix(["mimo-cyber", "cybergym"], data=data).cells.set_index(["bench", "other"])
    result = compare("mimo-cyber", "cybergym", data=data, pool=None, evidence=False, text=[])
    assert cells.loc[("cybergym", "mimo-cyber"), "bench_items_found"] == result["cybergym"].items_matched > 0
    assert cells.loc[("mimo-cyber", "cybergym"), "bench_items_found"] == len(set(result["cybergym"].pairs["train_id"]))


def test_a_null_repo_column_cell_falls_back_to_the_rows_own_id(tmp_path):
    train = _jsonl(tmp_path / "train.jsonl", [{"task": "owner__repo-12", "repo": None},
                                              {"task": "x__y-3", "repo": "Other/Name"}])
    bench = _jsonl(tmp_path / "bench.jsonl", [{"task": "https://github.com/owner/repo/pull/12", "repo": None},
                                              {"task": "https://github.com/other/name/pull/3", "repo": None}])
    result = compare(str(train), str(bench), id_column="task", columns={"repo": "repo"}, pool=None,
                     evidence=False, text=[])
    comp = result[0]
    assert sorted(comp.pairs["bench_id"]) == ["https://github.com/other/name/pull/3",
                                              "https://github.com/owner/repo/pull/12"]
    assert sorted(result.train.keys.loc[result.train.keys["kind"] == "repo_pr", "value"]) == [
        "other/name#3", "owner/repo#12"]


def test_fix_commits_are_task_keys_everywhere(tmp_path):
    """Duplicates, the plain join and the drop reasons know fix commits as they know the other task keys."""
    url = "https://github.com/jqlang/jq/commit/c9a51565214eece8f1053089739aea5fbd9a2a8f"
    train = _jsonl(tmp_path / "train.jsonl", [{"task": url}, {"task": url.upper().replace("HTTPS://GITHUB.COM",
                                                                                           "https://github.com")},
                                              {"task": "CVE-2020-1"}])
    bench = _jsonl(tmp_path / "bench.jsonl", [{"task": url}])
    result = compare(str(train), str(bench), id_column="task", pool=None, evidence=False, text=[])
    assert set(result.train_duplicates["kind"]) == {"fix_commit"}
    assert set(result[0].plain_pairs["kinds"]) == {"fix_commit"}
    assert set(result[0].pairs["pair_kind"]) == {"same_fix_commit"}
    _, decision, _ = filter_train(str(train), [str(bench)], tmp_path / "out", id_column="task",
                                  reasons=("id:fix_commit",))
    assert set(decision.removed["reasons"]) == {"id:fix_commit"}
    assert len(decision.removed) == 2
