"""The filter's split is proved by a verifier that shares no code with the filter: a mistake in the pair
classification (or a planted row) that keeps a contaminated row fails the run naming the row, and nothing is
left under --out; the verifier's keys come from the id cells by the id parsers alone."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from overlap.api import filter_train
from overlap.api.demo import DEMO_ROOT, demo_data
from overlap.cli.app import app
from overlap.errors import InputError
from overlap.ids.ossfuzz import parse_mapping
from overlap.outputs.ship.splits import filter_split, write_split
from overlap.outputs.ship.verify.check import BenchRows, SplitFile, promised, verify_split
from overlap.outputs.ship.verify.keys import KeyColumns, row_keys

compare_module = importlib.import_module("overlap.api.compare")  # the module: `overlap.api.compare` is the function
DEMO = {name: DEMO_ROOT / name for name in ("mimo-cyber", "cybergym", "arvo")}
MAPPING = parse_mapping((DEMO_ROOT / "arvo" / "arvo" / "oss_fuzz_mappings.csv").read_bytes(), "demo").old_to_new
PR_ROW = {"id": "https://github.com/Owner/Repo/pull/12", "text": "a pull request"}


def _drop_non_pr_pairs(result, **_):
    """A broken pair classification: every pair that is not a pull request stops counting."""
    for comparison in result.benches:
        kinds = comparison.pairs["kinds"].astype(str)
        comparison.pairs = comparison.pairs[kinds.str.contains("repo_pr|base_pr")].reset_index(drop=True)


def _mixed_jsonl(folder: Path) -> Path:
    """The demo MiMo ids (OSS-Fuzz) and one GitHub PR in one id column."""
    rows = pq.read_table(DEMO["mimo-cyber"] / "cyber.parquet").to_pylist()
    path = folder / "mix.jsonl"
    lines = [json.dumps({"id": r["extra_info"]["instance_id"], "text": "a task"}) for r in rows]
    path.write_text("\n".join([*lines, json.dumps(PR_ROW)]) + "\n")
    return path


def _cybergym_rows() -> BenchRows:
    """CyberGym's raw task ids straight from its file: no adapter involved."""
    tasks = json.loads((DEMO["cybergym"] / "tasks.json").read_text())
    return BenchRows("cybergym", KeyColumns(id="task_id", scheme="ossfuzz"), [{"task_id": t["task_id"]} for t in tasks])


def test_a_broken_pair_classification_fails_the_filter_naming_the_row(monkeypatch, tmp_path):
    monkeypatch.setattr(compare_module, "_attach_pair_kinds", _drop_non_pr_pairs)
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        filter_train("mimo-cyber", ["cybergym"], out, data=demo_data())
    message = str(caught.value)
    assert message.startswith("filtered split still holds train row 0 of cyber.parquet (data/cyber.parquet row 0)")
    assert "ossfuzz" in message and "also in cybergym arvo:10055" in message and "\n" not in message
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_the_cli_exits_2_with_one_line_and_no_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(compare_module, "_attach_pair_kinds", _drop_non_pr_pairs)
    monkeypatch.chdir(tmp_path)
    mix = _mixed_jsonl(tmp_path)
    done = CliRunner().invoke(app, ["filter", str(mix), "cybergym", "--id-column", "id", "--out", "out",
                                    *(f"--data={n}={DEMO[n]}" for n in ("cybergym", "arvo"))])
    assert done.exit_code == 2, done.output
    assert "filtered split still holds train row 0 of mix.jsonl (data/mix.jsonl line 1): ossfuzz" in done.output
    assert "Traceback" not in done.output and not (tmp_path / "out").exists()


def test_a_planted_row_of_a_mixed_jsonl_is_caught(monkeypatch, tmp_path):
    """A right decision (the pair classification left out: no pair here is a pull request), then one
    contaminated row put back into the kept split by hand: the verifier finds it from the file alone."""
    monkeypatch.setattr(compare_module, "_attach_pair_kinds", lambda result, **_: None)
    mix = _mixed_jsonl(tmp_path)
    result = compare_module.compare(mix, ["cybergym"], data={"cybergym": DEMO["cybergym"], "arvo": DEMO["arvo"]},
                                    id_column="id", pool=None, evidence=False, text=[])
    decision = filter_split(result, ("id", "dup"))
    by_id = decision.removed[decision.removed["reasons"].str.contains("id:ossfuzz")]
    assert len(by_id) == 8
    planted = by_id.iloc[-1]
    decision.removed = decision.removed.drop(index=planted.name).reset_index(drop=True)
    with pytest.raises(InputError, match=rf"still holds train row {planted['row']} of mix.jsonl \(data/mix.jsonl "
                                         r"line \d+\): ossfuzz \d+ also in cybergym"):
        write_split(result, decision, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    write_split(result, filter_split(result, ("id", "dup")), tmp_path / "out")  # the right decision passes


def test_the_mixed_jsonl_filter_never_writes_a_contaminated_split(tmp_path):
    """Whatever the pair classification does with a mixed id column, the run either writes a split whose rows
    share no OSS-Fuzz issue with CyberGym (checked here with a plain join of our own) or fails, writing nothing."""
    mix = _mixed_jsonl(tmp_path)
    out = tmp_path / "out"
    try:
        filter_train(mix, ["cybergym"], out, data={"cybergym": DEMO["cybergym"], "arvo": DEMO["arvo"]}, id_column="id")
    except InputError as exc:
        assert "filtered split still holds" in str(exc) and not out.exists()
        return
    bench = {MAPPING.get(int(t.split(":")[1]), int(t.split(":")[1]))
             for t in (r["task_id"] for r in json.loads((DEMO["cybergym"] / "tasks.json").read_text()))}
    kept = [json.loads(line)["id"] for line in (out / "data" / "mix.jsonl").read_text().splitlines()]
    issues = {MAPPING.get(int(k.split("_")[1]), int(k.split("_")[1])) for k in kept if k.startswith("arvo_")}
    assert not issues & bench and PR_ROW["id"] in kept
    verification = json.loads((out / "filter.json").read_text())["verification"]
    assert verification["method"] == "independent read-back" and verification["rows_read"] == len(kept)


def test_verify_split_reads_the_file_and_parses_ids_alone(tmp_path):
    split = tmp_path / "mix.jsonl"
    split.write_text("\n".join(json.dumps(r) for r in (PR_ROW, {"id": "arvo_99999"}, {"id": "oss-fuzz:42471120"})))
    files = [SplitFile(split, "data/mix.jsonl", "mix.jsonl", frozenset({0, 2}))]
    with pytest.raises(InputError) as caught:
        verify_split(files, KeyColumns(id="id"), [_cybergym_rows()], ("id",), MAPPING, kept_rows=3)
    # row 2 of the split is input row 4 (input rows 0 and 2 were dropped); line 3 of the written shard
    assert str(caught.value) == ("filtered split still holds train row 4 of mix.jsonl (data/mix.jsonl line 3): "
                                 "ossfuzz 42471120 also in cybergym oss-fuzz:42471120; nothing was written")
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps(PR_ROW) + "\nnot json\n")
    block = verify_split([SplitFile(clean, "data/clean.jsonl", "clean.jsonl")], KeyColumns(id="id"),
                         [_cybergym_rows()], ("id", "fix", "ngram:13", "id:base"), MAPPING, kept_rows=2)
    assert block["rows_read"] == 2 and block["keys_derived"] == 2 and block["matches_found"] == 0
    assert [n["reason"] for n in block["not_checked"]] == ["fix", "ngram:13", "id:base"]
    assert block["reader"] == ["json (standard library), line by line"]


def test_a_duplicate_left_in_the_split_is_caught(tmp_path):
    split = tmp_path / "dup.jsonl"
    split.write_text('{"id": "arvo_10055"}\n{"id": "oss-fuzz:42471001"}\n')  # one bug, old and new id
    with pytest.raises(InputError, match="ossfuzz 42471001 also in train row 0 of dup.jsonl .*duplicate"):
        verify_split([SplitFile(split, "data/dup.jsonl", "dup.jsonl")], KeyColumns(id="id"), [], ("dup",), MAPPING,
                     kept_rows=2)


@pytest.mark.parametrize("row, columns, keys", [
    ({"id": "arvo:10055"}, KeyColumns(id="id"), {("ossfuzz", "42471001")}),
    ({"id": "10055"}, KeyColumns(id="id"), set()),  # a bare number is no OSS-Fuzz id unless the scheme says so
    ({"id": "10055"}, KeyColumns(id="id", scheme="ossfuzz"), {("ossfuzz", "42471001")}),
    ({"id": "jq.cve-2023-50246"}, KeyColumns(id="id"), {("cve", "CVE-2023-50246")}),
    ({"id": "GHSA-7rjr-3q55-vv33", "cve": "cve-2021-1234"}, KeyColumns(id="id", cve="cve"), {("cve", "CVE-2021-1234")}),
    ({"x": {"id": "KBKnapp__clap-rs-941"}, "base": "ABCDEF1"}, KeyColumns(id="x.id", base="base"),
     {("repo_pr", "clap-rs/clap#941"), ("repo_pr_exact", "KBKnapp/clap-rs#941"), ("base_pr", "abcdef1#941")}),
    ({"id": "t1", "org": "Owner", "repo": "Repo", "number": 12.0}, KeyColumns(id="id", owner="org", repo="repo",
                                                                              pr="number"),
     {("repo_pr", "owner/repo#12"), ("repo_pr_exact", "Owner/Repo#12")}),
    ({"id": "github.com/o/r/commit/ABCDEF12"}, KeyColumns(id="id"), {("fix_commit", "abcdef12")}),
    ({"id": 10055.5}, KeyColumns(id="id", scheme="ossfuzz"), set()),
    # a forced scheme adds its loose form only for ids no specific form takes: a PR stays a PR, a CVE a CVE
    ({"id": "acme/widget#10055"}, KeyColumns(id="id", scheme="ossfuzz"),
     {("repo_pr", "acme/widget#10055"), ("repo_pr_exact", "acme/widget#10055")}),
    ({"id": "https://github.com/acme/widget/pull/10055"}, KeyColumns(id="id", scheme="ossfuzz"),
     {("repo_pr", "acme/widget#10055"), ("repo_pr_exact", "acme/widget#10055")}),
    ({"id": "jq.cve-2023-10055"}, KeyColumns(id="id", scheme="ossfuzz"), {("cve", "CVE-2023-10055")}),
    ({"id": "arvo:10055"}, KeyColumns(id="id", scheme="cve"), {("ossfuzz", "42471001")}),
    ({"id": "task-10055"}, KeyColumns(id="id", scheme="ossfuzz"), {("ossfuzz", "42471001")}),
    ({"id": "https://github.com/acme/widget/issues/10055"}, KeyColumns(id="id", scheme="ossfuzz"), set()),
])
def test_row_keys(row, columns, keys):
    assert row_keys(row, columns, MAPPING) == keys


def test_promised_kinds():
    assert promised(["id:ossfuzz", "dup"]) == (["ossfuzz"], True, {})
    kinds, dup, not_checked = promised(["id", "spec:harness"])
    assert "base" not in kinds and not dup and list(not_checked) == ["spec:harness"]


def test_the_verifier_imports_nothing_of_the_filter():
    code = ("import sys, overlap.outputs.ship.verify.check; "
            "print(sorted(m for m in sys.modules if m.startswith('overlap.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(done.stdout)  # noqa: S307 - our own printed list
    forbidden = ("overlap.join", "overlap.evidence", "overlap.sources", "overlap.api", "overlap.ids.recognise",
                 "overlap.ids.recognition", "overlap.ids.id_arrays", "overlap.ids.pr_columns",
                 "overlap.outputs.ship.splits", "overlap.outputs.ship.split_files", "overlap.outputs.ship.filter_plan")
    assert not [m for m in loaded if m.startswith(forbidden)], loaded


@pytest.mark.parametrize("held", [1, 1_000])
def test_repeats_are_found_the_same_past_the_dict(tmp_path, monkeypatch, held):
    """Past `_Seen.HELD` values the seen ids and keys move to an SQLite file in the temp folder: the same
    repeats are found, named at the same rows, and the file is gone after."""
    import tempfile

    from overlap.outputs.ship.verify import seen as module

    monkeypatch.setattr(module._Seen, "HELD", held)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(f'{{"id": "task-{i}"}}\n' for i in range(5)) + '{"id": "arvo_10055"}\n')
    second.write_text('{"id": "t\\ud800x"}\n{"id": "oss-fuzz:42471001"}\n')
    files = [SplitFile(first, "data/a.jsonl", "a.jsonl"), SplitFile(second, "data/b.jsonl", "b.jsonl")]
    with pytest.raises(InputError, match=r"ossfuzz 42471001 also in train row 5 of a.jsonl .*duplicate"):
        verify_split(files, KeyColumns(id="id"), [], ("dup",), MAPPING, kept_rows=8)
    second.write_text('{"id": "t\\ud800x"}\n{"id": "task-3"}\n')
    with pytest.raises(InputError, match=r"id task-3 repeats train row 3 of a.jsonl"):
        verify_split(files, KeyColumns(id="id"), [], ("dup",), MAPPING, kept_rows=8)
    second.write_text('{"id": "t\\ud800x"}\n{"id": "task-9"}\n')
    assert verify_split(files, KeyColumns(id="id"), [], ("dup",), MAPPING, kept_rows=8)["rows_read"] == 8
    assert not list((tmp_path / "temp").iterdir())


def test_a_full_temp_folder_while_checking_repeats_is_one_line_naming_it(tmp_path, monkeypatch):
    """SQLite's "disk is full" (its own error, not an OSError) past the dict: one line naming the temp folder
    and TMPDIR, and the folder is gone after."""
    import sqlite3
    import tempfile

    from overlap.outputs.ship.verify import seen as module

    connect = sqlite3.connect

    def tiny(path, **options):
        db = connect(path, **options)
        db.execute("PRAGMA max_page_count = 2")  # a database that cannot grow: SQLITE_FULL, as on a full disk
        return db

    monkeypatch.setattr(module._Seen, "HELD", 1)
    monkeypatch.setattr(module.sqlite3, "connect", tiny)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    split = tmp_path / "a.jsonl"
    split.write_text("".join(f'{{"id": "task-{i}-{"x" * 900}"}}\n' for i in range(40)))
    with pytest.raises(InputError) as raised:
        verify_split([SplitFile(split, "data/a.jsonl", "a.jsonl")], KeyColumns(id="id"), [], ("dup",), MAPPING,
                     kept_rows=40)
    message = str(raised.value)
    assert str(tmp_path / "temp") in message and "full" in message and "TMPDIR" in message and "\n" not in message
    assert not list((tmp_path / "temp").iterdir())


def test_a_csv_split_with_cells_of_megabytes_is_written_and_read_back_whole(tmp_path):
    """A CSV cell far past the csv module's default limit (128 KB) and past pyarrow's default block (1 MB): the
    split copies its row as written and the independent check reads it back (both refused it before)."""
    import csv

    train = tmp_path / "train.csv"
    long_text = "patch line\n" * 300_000  # 3.3 MB, quoted newlines included
    with train.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text"])
        writer.writerow(["arvo_10055", "short"])
        writer.writerow(["owner__repo-7", long_text])
        writer.writerow(["task-3", "x" * 2_000_000])
    out = tmp_path / "out"
    filter_train(str(train), ["cybergym"], out, data={"cybergym": DEMO["cybergym"], "arvo": DEMO["arvo"]},
                 id_column="id")
    csv.field_size_limit(1 << 30)
    with (out / "data" / "train.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [["id", "text"], ["owner__repo-7", long_text], ["task-3", "x" * 2_000_000]]
    assert json.loads((out / "filter.json").read_text())["verification"]["rows_read"] == 2
