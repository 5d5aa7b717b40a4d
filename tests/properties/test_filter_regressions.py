"""Reported filter cases as named regression tests of `overlap filter`: rows located by their position in
the file, every copy of a matched id dropped, removed.csv naming the row that was really dropped.

Each test states its expectation by hand (ids, files, positions) rather than through the oracle, so a
reader can check it against the fixture at a glance.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from prop_layouts import (
    DEMO_ARVO,
    MIMO_SCHEMA,
    PRS_SCHEMA,
    REBENCH_SCHEMA,
    Bug,
    CyberGymRows,
    sha,
    write_csv,
    write_parquet,
)
from prop_oracle import read_output, working_dir
from typer.testing import CliRunner

from overlap.cli import app


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def swe_fixtures():
    """The project's own SWE fixture module (tests/swe/swe_fixtures.py). That folder is no package, so the
    module is loaded by path, or reused when tests/swe already imported it."""
    if "swe_fixtures" not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "swe" / "swe_fixtures.py"
        spec = importlib.util.spec_from_file_location("swe_fixtures", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["swe_fixtures"] = module
        spec.loader.exec_module(module)
    return sys.modules["swe_fixtures"]


def run_filter(tmp_path: Path, train: str, benches: list[str], data: dict[str, Path], *drop: str):
    """`overlap filter` through the CLI from an empty working folder; returns (output, stdout)."""
    out = tmp_path / "out"
    args = ["filter", train, *benches, "--out", str(out)]
    for name, path in data.items():
        args += ["--data", f"{name}={path}"]
    for reason in drop:
        args += ["--drop", reason]
    with working_dir(tmp_path / "cwd"):
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}\n{result.exception!r}"
    return read_output(out), result.stdout


def removed_at(output) -> dict[tuple[str, int], str]:
    """removed.csv as {(file name, row position): item_id}."""
    return {(Path(r["file"] or "").name, int(r["row"])): r["item_id"] for r in output.removed}


def kept_ids(output, id_of) -> list:
    return [id_of(row) for rows in output.shards.values() for row in rows]


def assert_verified(stdout: str, kept: int, benches: list[str]) -> None:
    lines = [line for line in stdout.splitlines() if line.strip().startswith("verified:")]
    assert any(line.strip().startswith(f"verified: 0 of {kept:,} rows match") for line in lines), stdout
    assert all(any(b in line for line in lines) for b in benches), stdout


# --- the project's SWE fixture (tests/swe/swe_fixtures.py) ---------------------------------------------


def test_swe_filter_drops_futures_rs_not_vscode(tmp_path):
    """Row 15 (microsoft__vscode-100) is clean; row 16 (rust-lang-nursery__futures-rs-1800) is in
    Multi-SWE-bench as rust-lang/futures-rs at the same base; fastjson2-2775 is listed twice (rows 5, 14).
    Today the filter drops row 15 labelled futures-rs, keeps futures-rs and the second fastjson2."""
    fx = swe_fixtures()
    data = fx.write_all(tmp_path / "data")
    output, stdout = run_filter(tmp_path, "swe-rebench-v2", ["multi-swe-bench"], data)

    source = [r["instance_id"] for r in fx.REBENCH_ROWS]
    name = "train-00000-of-00001.parquet"
    expected = {0: "kbknapp__clap-rs-941", 2: "burntsushi__ripgrep-1367", 3: "tokio-rs__tokio-2145",
                5: "alibaba__fastjson2-2775", 7: "kotlin__kotlinx.coroutines-3000", 14: "alibaba__fastjson2-2775",
                16: "rust-lang-nursery__futures-rs-1800"}
    assert all(source[row] == item_id for row, item_id in expected.items())  # the fixture is what we think
    kept = kept_ids(output, lambda r: r["instance_id"])
    assert "microsoft__vscode-100" in kept and "rust-lang-nursery__futures-rs-1800" not in kept, kept
    assert "alibaba__fastjson2-2775" not in kept, kept
    assert kept == [i for row, i in enumerate(source) if row not in expected]
    assert removed_at(output) == {(name, row): item_id for row, item_id in expected.items()}
    assert_verified(stdout, len(kept), ["multi-swe-bench"])


# --- MiMo: one bug under one id twice ------------------------------------------------------------------


def mimo_row(instance_id, prompt, index):
    return {"data_source": "cyber", "prompt": [{"role": "user", "content": prompt}],
            "extra_info": {"index": index, "instance_id": instance_id,
                           "instance_json": json.dumps({"problem_statement": f"Fix: {prompt}"})}}


def cybergym_task(task_id, project):
    return CyberGymRows.row(task_id, Bug(None, None, project), 0)


@pytest.mark.parametrize("drop", [(), ("id",)], ids=["default-reasons", "drop-id"])
def test_mimo_same_id_twice_both_dropped(tmp_path, drop):
    """arvo_10055 twice with different prompts, arvo_42471002 twice as exact copies (the new id of 10102,
    which CyberGym lists as arvo:10102): every copy goes. Today the second copy is "without an id, kept"."""
    spec = "AddressSanitizer: heap-buffer-overflow in function `{}` in file `src/{}.c`"
    rows = [
        mimo_row("arvo_10055", spec.format("xmlParseCharRef", "parser"), 0),
        mimo_row("arvo_99999", spec.format("opj_t1_decode_cblk", "t1"), 1),  # clean
        mimo_row("arvo_42471002", spec.format("xsltFuzzXPath", "fuzz"), 2),
        mimo_row(None, spec.format("no_id", "none"), 3),  # no id: kept
        mimo_row("arvo_10055", spec.format("xmlParseCharRef_again", "parser2"), 4),  # same id, other text
        mimo_row("arvo_42471002", spec.format("xsltFuzzXPath", "fuzz"), 2),  # exact copy of row 2
        mimo_row("arvo_20001", spec.format("tt_face_load_font_dir", "ttobjs"), 6),  # clean
    ]
    write_parquet(tmp_path / "data" / "mimo" / "cyber.parquet", rows, MIMO_SCHEMA)
    (tmp_path / "data" / "cybergym").mkdir(parents=True)
    (tmp_path / "data" / "cybergym" / "tasks.json").write_text(json.dumps(
        [cybergym_task("arvo:10055", "libxml2"), cybergym_task("arvo:10102", "libxslt"),
         cybergym_task("oss-fuzz:42499999", "mruby")], indent=1))
    data = {"mimo-cyber": tmp_path / "data" / "mimo", "cybergym": tmp_path / "data" / "cybergym", "arvo": DEMO_ARVO}
    output, stdout = run_filter(tmp_path, "mimo-cyber", ["cybergym"], data, *drop)

    kept = kept_ids(output, lambda r: r["extra_info"]["instance_id"])
    assert kept == ["arvo_99999", None, "arvo_20001"]
    assert removed_at(output) == {("cyber.parquet", 0): "arvo_10055", ("cyber.parquet", 2): "arvo_42471002",
                                  ("cyber.parquet", 4): "arvo_10055", ("cyber.parquet", 5): "arvo_42471002"}
    assert [r for shard in output.shards.values() for r in shard] == [rows[1], rows[3], rows[6]]
    assert_verified(stdout, 3, ["cybergym"])


# --- SWE-rebench-V2 shaped file with repeats and rows lacking a PR number, against SWE-PolyBench ---------


def rebench_row(instance_id, repo, base, text="issue"):
    return {"instance_id": instance_id, "repo": repo, "base_commit": base, "problem_statement": text,
            "patch": f"diff --git a/{text}.py b/{text}.py\n", "language": "python"}


def poly_row(instance_id, repo, pull_number, base):
    return {"instance_id": instance_id, "repo": repo, "base_commit": base,
            "patch": f"diff --git a/{instance_id}.py b/{instance_id}.py\n", "test_patch": "", "problem_statement": "p",
            "F2P": "[]", "P2P": "[]", "language": "Python", "Dockerfile": "FROM python:3.11",
            "test_command": "pytest", "task_category": "Bug Fix", "pull_number": pull_number}


def write_polybench(folder: Path, rows: list[dict]) -> Path:
    write_csv(folder / "SWE-PolyBench" / "test.csv", rows)
    write_csv(folder / "SWE-PolyBench_Verified" / "test.csv", rows[:1])
    return folder / "SWE-PolyBench"


def test_rebench_repeats_and_missing_pr_vs_polybench(tmp_path):
    """keras 19284 three times (two exact copies, one other text), prettier 5012 under its old repo name,
    vscode 100 matched by base commit + PR (PolyBench has no repo for it), and between them rows without an
    id or without a PR number (which shift every later row in an ordinal count). All matched copies go."""
    keras, prettier, vscode, ripgrep = sha("keras"), sha("prettier"), sha("vscode"), sha("ripgrep")
    rows = [
        rebench_row("keras-team__keras-19284", "keras-team/keras", keras),  # 0 match
        rebench_row(None, "keras-team/keras", keras, "no id"),  # 1 no id: kept
        rebench_row("burntsushi__ripgrep-1367", "BurntSushi/ripgrep", ripgrep),  # 2 clean
        rebench_row("keras-team__keras-19284", "keras-team/keras", keras),  # 3 exact copy of 0
        rebench_row("keras-team__keras", "keras-team/keras", sha("elsewhere"), "no pr"),  # 4 no PR number: kept
        rebench_row("jlongster__prettier-5012", "jlongster/prettier", prettier),  # 5 match (renamed repo)
        rebench_row("burntsushi__ripgrep-1400", "BurntSushi/ripgrep", sha("ripgrep 1400")),  # 6 clean
        rebench_row("keras-team__keras-19284", "keras-team/keras", keras, "rewritten"),  # 7 same id, other text
        rebench_row("microsoft__vscode-100", "microsoft/vscode", vscode),  # 8 match by base + PR
        rebench_row("microsoft__vscode-101", "microsoft/vscode", sha("vscode 101")),  # 9 clean
    ]
    write_parquet(tmp_path / "data" / "SWE-rebench-V2" / "data" / "train-00000-of-00001.parquet", rows,
                  REBENCH_SCHEMA, row_group_size=3)
    poly = write_polybench(tmp_path / "data", [
        poly_row("keras-team__keras-19284", "keras-team/keras", "19284.0", keras.upper()),
        poly_row("prettier__prettier-5012", "prettier/prettier", "5012.0", prettier),
        poly_row("microsoft__vscode-100", "", "100", vscode),
        poly_row("psf__requests-2317", "psf/requests", "2317", sha("requests")),
    ])
    data = {"swe-rebench-v2": tmp_path / "data" / "SWE-rebench-V2", "swe-polybench": poly,
            "swe-polybench-verified": poly.parent / "SWE-PolyBench_Verified"}
    output, stdout = run_filter(tmp_path, "swe-rebench-v2", ["swe-polybench"], data, "id")

    name = "train-00000-of-00001.parquet"
    matched = {0: "keras-team__keras-19284", 3: "keras-team__keras-19284", 5: "jlongster__prettier-5012",
               7: "keras-team__keras-19284", 8: "microsoft__vscode-100"}
    kept = [r for shard in output.shards.values() for r in shard]
    leaked = [r["instance_id"] for r in kept if r["instance_id"] in matched.values()]
    assert not leaked, f"matched rows still in the split: {leaked}"
    assert kept == [r for i, r in enumerate(rows) if i not in matched]
    assert removed_at(output) == {(name, row): item_id for row, item_id in matched.items()}
    assert_verified(stdout, len(kept), ["swe-polybench"])


# --- many matches in a large file (the 250k-row case, scaled down) ---------------------------------------


def test_250_matches_in_a_large_prs_file_all_dropped_at_their_rows(tmp_path):
    """A SWE-rebench-V2-PRs-shaped training set in two shards (small row groups), with a row lacking an id
    every 37 rows and an exact repeat every 101, so that positions and item ordinals drift apart by dozens;
    250 of its PRs are in the benchmark (Multi-SWE-bench). Every one of them, every copy, is dropped at its
    own row, and nothing else is (`--drop id`). Today 245 of 250 removed rows were the wrong ones."""
    n_rows, matched_prs = 3000, set(range(10, 3000, 12))  # 250 PRs
    assert len(matched_prs) == 250

    def row(pr):
        return {"instance_id": f"tokio-rs__tokio-{pr}", "repo": "Tokio-RS/Tokio" if pr % 2 else "tokio-rs/tokio",
                "pull_number": pr, "base_commit": sha(f"tokio {pr}"), "problem_statement": f"LLM text {pr}",
                "patch": f"diff --git a/src/{pr}.rs b/src/{pr}.rs\n"}

    rows = []
    for pr in range(n_rows):
        if pr % 37 == 5:
            rows.append(row(pr) | {"instance_id": None, "pull_number": None})  # no id, no PR: kept
        else:
            rows.append(row(pr))
        if pr % 101 == 10:
            rows.append(row(pr))  # exact repeat
    half = len(rows) // 2
    shards = {"train-00000-of-00002.parquet": rows[:half], "train-00001-of-00002.parquet": rows[half:]}
    folder = tmp_path / "data" / "SWE-rebench-V2-PRs"
    for name, part in shards.items():
        write_parquet(folder / "data" / name, part, PRS_SCHEMA, row_group_size=64)
    msb = tmp_path / "data" / "Multi-SWE-bench"
    lines = [json.dumps({"org": "tokio-rs", "repo": "tokio", "number": pr, "instance_id": f"tokio-rs__tokio-{pr}",
                         "base": {"label": "tokio-rs:master", "ref": "master", "sha": sha(f"tokio {pr}")},
                         "resolved_issues": [], "fix_patch": f"diff --git a/src/{pr}.rs b/src/{pr}.rs\n"})
             for pr in sorted(matched_prs)]
    (msb / "rust").mkdir(parents=True)
    (msb / "rust" / "tokio-rs__tokio_dataset.jsonl").write_text("\n".join(lines) + "\n")
    output, stdout = run_filter(tmp_path, "swe-rebench-v2-prs", ["multi-swe-bench"],
                                {"swe-rebench-v2-prs": folder, "multi-swe-bench": msb}, "id")

    want = {(name, i): r["instance_id"] for name, part in shards.items() for i, r in enumerate(part)
            if r["pull_number"] in matched_prs}
    kept = [r for part in output.shards.values() for r in part]
    leaked = sorted({r["pull_number"] for r in kept} & matched_prs)
    assert not leaked, f"{len(leaked)} of the 250 matched PRs are still in the split, e.g. {leaked[:5]}"
    assert kept == [r for name, part in shards.items() for i, r in enumerate(part) if (name, i) not in want]
    got = removed_at(output)
    wrong = {k: v for k, v in got.items() if want.get(k) != v}
    assert not wrong, f"{len(wrong)} of {len(got)} removed.csv rows name no matched row, e.g. {list(wrong.items())[:3]}"
    assert got == want
    assert_verified(stdout, len(kept), ["multi-swe-bench"])
