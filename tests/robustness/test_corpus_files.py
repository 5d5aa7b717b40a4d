"""Robustness corpus, hand-made files: every adapter's main file replaced by a malformed one (empty, garbage,
truncated, a folder, wrong columns, non-UTF-8, only a header, deep nesting, wrong cell types), then the
command that reads it, checked against the one contract (corpus_contract.check_contract)."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_contract import (
    ADAPTER_FILES,
    CYBER,
    FAST,
    all_data,
    compare_args_for,
    data_args,
    run_checked,
)

GARBAGE = bytes((i * 131 + 7) % 256 for i in range(4096))  # deterministic binary noise


def _wrong_columns(path):
    suffix = path.suffix
    if suffix == ".parquet":
        pq.write_table(pa.table({"foo": [1, 2], "bar": ["x", "y"]}), path)
    elif suffix == ".json":
        path.write_text('[{"foo": 1}, {"bar": "x"}]')
    elif suffix == ".jsonl":
        path.write_text('{"foo": 1}\n{"bar": "x"}\n')
    else:
        path.write_text("foo,bar\n1,x\n")


def _wrong_types(path):
    """The expected columns, each holding values of the wrong type (nested, numeric, boolean)."""
    suffix = path.suffix
    if suffix == ".parquet":
        names = pq.read_schema(path).names
        columns = {}
        for index, name in enumerate(names):
            if index % 3 == 0:
                columns[name] = pa.array([[1, 2], None, [3]], type=pa.list_(pa.int64()))
            elif index % 3 == 1:
                columns[name] = pa.array([1.5, float("nan"), -3.0])
            else:
                columns[name] = pa.array([True, False, None])
        pq.write_table(pa.table(columns), path)
    elif suffix == ".json":
        rows = json.loads(path.read_text())
        bad = [{k: [v, {"x": v}] for k, v in rows[0].items()}, {k: 10055.5 for k in rows[0]},
               {k: True for k in rows[0]}, {k: None for k in rows[0]}]
        path.write_text(json.dumps(bad))
    elif suffix == ".jsonl":
        row = json.loads(path.read_text().splitlines()[0])
        bad = [{k: [v] for k, v in row.items()}, {k: 1e308 for k in row}, {k: False for k in row}, [1, 2], 7, "x"]
        path.write_text("".join(json.dumps(r) + "\n" for r in bad))
    else:
        header = path.read_text().splitlines()[0]
        columns = header.split(",")
        path.write_text(header + "\n" + ",".join("[1, 2]" for _ in columns) + "\n"
                        + ",".join("1e5" for _ in columns) + "\n")


def _truncated(path):
    data = path.read_bytes()
    path.write_bytes(data[: max(1, len(data) // 2)])


def _non_utf8(path):
    if path.suffix == ".parquet":
        # A text column holding bytes that are not UTF-8 (a binary column where a string one is expected).
        table = pq.read_table(path)
        columns = {}
        for name in table.column_names:
            column = table.column(name)
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                columns[name] = pa.array([b"\xff\xfe" + str(v).encode("latin-1", "replace") + b"\xe9"
                                          for v in column.to_pylist()], type=pa.binary())
            else:
                columns[name] = column
        pq.write_table(pa.table(columns), path)
    else:
        path.write_bytes(path.read_bytes().replace(b"a", b"\xe9", 5) + b"\xff\xfe\n")


def _header_only(path):
    if path.suffix == ".csv":
        path.write_text(path.read_text().splitlines()[0] + "\n")
    elif path.suffix == ".json":
        path.write_text("[]")
    elif path.suffix == ".jsonl":
        path.write_text("\n\n")
    else:  # parquet: the schema, no rows
        schema = pq.read_schema(path)
        pq.write_table(schema.empty_table(), path)


def _directory(path):
    path.unlink()
    path.mkdir()
    (path / "inner.txt").write_text("x")


def _deep_nesting(path):
    depth = 100_000
    if path.suffix == ".parquet":
        path.write_bytes(b"PAR1" + b"[" * depth)
    elif path.suffix == ".csv":
        path.write_text("instance_id,repo\n" + '"' + "[" * depth + '",x\n')
    else:
        path.write_text("[" * depth + "]" * depth + "\n")


CORRUPTIONS = {
    "empty": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(GARBAGE),
    "truncated": _truncated,
    "directory": _directory,
    "wrong-columns": _wrong_columns,
    "wrong-types": _wrong_types,
    "non-utf8": _non_utf8,
    "header-only": _header_only,
    "deep-nesting": _deep_nesting,
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("adapter", sorted(ADAPTER_FILES))
def test_corrupt_adapter_file(adapter, corruption, tmp_path):
    paths = all_data(tmp_path / "data", adapter)
    target = paths[adapter] / ADAPTER_FILES[adapter]
    CORRUPTIONS[corruption](target)
    args = [*compare_args_for(adapter), *data_args(paths), "--no-report", "--format", "json", *FAST]
    run_checked(f"file:{adapter}:{corruption}", args, root=tmp_path)


# --- the mapping CSV and the CyberGym ids: the seed cases, with the answer checked too -----------


def _compare_json(tmp_path, paths, *extra, case):
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--no-report", "--format", "json", *FAST,
            *extra]
    run = run_checked(case, args, root=tmp_path)
    return run, (json.loads(run.stdout) if run.code == 0 else None)


def test_mapping_with_bom_keeps_its_first_row(tmp_path):
    paths = all_data(tmp_path / "data", "arvo")
    mapping = paths["arvo"] / ADAPTER_FILES["arvo"]
    mapping.write_bytes(b"\xef\xbb\xbf" + mapping.read_bytes())
    run, summary = _compare_json(tmp_path, paths, case="mapping:bom")
    assert run.code == 0
    assert summary["mapping"]["pairs"] == 5
    assert summary["mapping"].get("skipped_rows", 0) == 0


def test_mapping_with_unclosed_quote_loses_no_row_silently(tmp_path):
    paths = all_data(tmp_path / "data", "arvo")
    mapping = paths["arvo"] / ADAPTER_FILES["arvo"]
    lines = mapping.read_text().splitlines()
    lines[1] = '"' + lines[1]
    mapping.write_text("\n".join(lines) + "\n")
    run, summary = _compare_json(tmp_path, paths, case="mapping:unclosed-quote")
    # Either refused (exit 2, one line) or read with every other row and the bad row counted.
    if run.code == 0:
        assert summary["mapping"]["pairs"] >= 4
        assert summary["mapping"]["pairs"] + summary["mapping"].get("skipped_rows", 0) == 5


@pytest.mark.parametrize("rows", ["10288,40643631,extra\n", "10288;40643631\n", "old,new\n", "\n\n",
                                  "-1,5\n10288,40643631\n", "1e5,42470443\n10288,40643631\n",
                                  "99999999999999999999999,1\n10288,40643631\n", "10288,40643631\r\n" * 3,
                                  "１０２８８,40643631\n10400,42470443\n"])
def test_mapping_odd_rows(rows, tmp_path):
    paths = all_data(tmp_path / "data", "arvo")
    (paths["arvo"] / ADAPTER_FILES["arvo"]).write_text(rows)
    run, summary = _compare_json(tmp_path, paths, case=f"mapping:{rows[:20]!r}")
    if run.code == 0:
        # No coerced id may enter the mapping: only rows of plain ASCII digits.
        assert summary["mapping"]["pairs"] <= 2


def test_mapping_is_a_directory_or_garbage(tmp_path):
    paths = all_data(tmp_path / "data", "arvo")
    mapping = paths["arvo"] / ADAPTER_FILES["arvo"]
    mapping.write_bytes(GARBAGE)
    _compare_json(tmp_path, paths, case="mapping:garbage")
    mapping.unlink()
    mapping.mkdir()
    _compare_json(tmp_path, paths, case="mapping:directory")
    shutil.rmtree(mapping)
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--data", f"arvo={tmp_path}/nowhere.csv",
            "--no-report", *FAST]
    run_checked("mapping:missing", args, root=tmp_path, expect=2)


# --- a 20 MB text field and non-text cells in a text column -------------------------------------------


def test_twenty_megabyte_text_field(tmp_path):
    from fixtures import mimo_rows

    paths = all_data(tmp_path / "data", "mimo-cyber")
    rows = mimo_rows()
    rows[0]["prompt"][0]["content"] = "overflow " * (20 * 1024 * 1024 // 9)
    pq.write_table(pa.Table.from_pylist(rows), paths["mimo-cyber"] / "cyber.parquet")
    args = ["ngram", "mimo-cyber", "cybergym", *data_args(paths), "--field", "prompt:description", "-n", "8",
            "--out", tmp_path / "ngram-out"]
    run_checked("text:20MB:ngram", args, root=tmp_path, expect=0)


NON_TEXT_CELLS = [1, 2.5, None, True, [1, 2], {"a": "b"}, float("nan"), -(2**63), 2**70, ""]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_ngram_non_text_cells_in_text_column(suffix, tmp_path):
    def write(path, rows):
        if suffix == ".jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        elif suffix == ".json":
            path.write_text(json.dumps(rows))
        else:
            import csv

            with path.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=["id", "text"])
                writer.writeheader()
                writer.writerows({"id": r["id"], "text": json.dumps(r["text"])} for r in rows)

    words = " ".join(f"word{i}" for i in range(20))
    train = [{"id": f"t{i}", "text": cell} for i, cell in enumerate(NON_TEXT_CELLS)] + [{"id": "tw", "text": words}]
    bench = [{"id": "b0", "text": words}, {"id": "b1", "text": {"nested": [words]}}, {"id": 7, "text": 7},
             {"id": None, "text": words}]
    write(tmp_path / f"a{suffix}", train)
    write(tmp_path / f"b{suffix}", bench)
    args = ["ngram", f"a{suffix}", f"b{suffix}", "--field", "text:text", "--id-column", "id", "-n", "8",
            "--format", "json"]
    run_checked(f"ngram:non-text-cells{suffix}", args, root=tmp_path)


def test_ngram_parquet_non_text_column(tmp_path):
    pq.write_table(pa.table({"id": ["a", "b"], "text": pa.array([[1, 2], [3]])}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"id": [1, 2], "text": [1.5, 2.5]}), tmp_path / "b.parquet")
    args = ["ngram", "a.parquet", "b.parquet", "--field", "text:text", "--id-column", "id", "--format", "json"]
    run_checked("ngram:parquet-non-text", args, root=tmp_path)


@pytest.mark.parametrize("kind", ["empty", "garbage", "directory", "missing-column", "header-only"])
def test_ngram_bad_local_files(kind, tmp_path):
    a = tmp_path / "a.parquet"
    b = tmp_path / "b.jsonl"
    b.write_text(json.dumps({"id": "b0", "text": "some words here"}) + "\n")
    if kind == "empty":
        a.write_bytes(b"")
    elif kind == "garbage":
        a.write_bytes(GARBAGE)
    elif kind == "directory":
        a.mkdir()
    elif kind == "missing-column":
        pq.write_table(pa.table({"id": ["a"]}), a)
    else:
        pq.write_table(pa.table({"id": pa.array([], pa.string()), "text": pa.array([], pa.string())}), a)
    args = ["ngram", a.name, b.name, "--field", "text:text", "--id-column", "id", "--format", "json"]
    run_checked(f"ngram:file:{kind}", args, root=tmp_path)


# --- every command on malformed input: filter, matrix, card, report ------------------------------------


@pytest.mark.parametrize("corruption", ["empty", "garbage", "wrong-types", "truncated"])
def test_filter_on_corrupt_train(corruption, tmp_path):
    paths = all_data(tmp_path / "data", "mimo-cyber")
    CORRUPTIONS[corruption](paths["mimo-cyber"] / "cyber.parquet")
    args = ["filter", "mimo-cyber", "cybergym", *data_args(paths), "--out", tmp_path / "filtered"]
    run_checked(f"filter:mimo:{corruption}", args, root=tmp_path)


@pytest.mark.parametrize("corruption", ["empty", "garbage", "wrong-types"])
def test_matrix_on_corrupt_bench(corruption, tmp_path):
    paths = all_data(tmp_path / "data", "swe-polybench")
    CORRUPTIONS[corruption](paths["swe-polybench"] / "test.csv")
    args = ["matrix", "swe-polybench", "swe-bench-multilingual", "multi-swe-bench", *data_args(paths),
            "--format", "json", "--out", tmp_path / "matrix-out"]
    run_checked(f"matrix:polybench:{corruption}", args, root=tmp_path)


RESULT_DAMAGE = {
    "empty-folder": lambda d: [p.unlink() for p in d.iterdir() if p.is_file()],
    "summary-garbage": lambda d: (d / "summary.json").write_bytes(GARBAGE),
    "summary-deep": lambda d: (d / "summary.json").write_text("[" * 100_000),
    "summary-wrong-type": lambda d: (d / "summary.json").write_text('{"benches": 5, "train": []}'),
    "summary-missing": lambda d: (d / "summary.json").unlink(),
    "pairs-garbage": lambda d: (d / "pairs.csv").write_bytes(GARBAGE),
    "bench-name-escapes": lambda d: (d / "summary.json").write_text(
        (d / "summary.json").read_text().replace('"bench": "cybergym"', '"bench": "../../escaped"')),
}


@pytest.fixture(scope="module")
def compare_result(tmp_path_factory):
    """One real compare result folder (copied per test before it is damaged)."""
    from corpus_contract import invoke

    root = tmp_path_factory.mktemp("result")
    paths = all_data(root / "data", "cybergym")
    run = invoke("setup", ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", root / "res",
                           "--pool", "none", "--no-evidence"], root=root)
    assert run.code == 0, run.stderr
    return root / "res"


@pytest.mark.parametrize("damage", sorted(RESULT_DAMAGE))
@pytest.mark.parametrize("command", ["card", "report"])
def test_card_and_report_on_damaged_result(command, damage, compare_result, tmp_path):
    result = tmp_path / "res"
    shutil.copytree(compare_result, result)
    RESULT_DAMAGE[damage](result)
    card = tmp_path / "README.md"
    card.write_text("---\nlicense: mit\n---\n# A dataset\n")
    out = tmp_path / "out"
    args = [command, "res", "--out", out] + (["--card", "README.md"] if command == "card" else [])
    run = run_checked(f"{command}:{damage}", args, root=tmp_path)
    if damage == "bench-name-escapes" and run.code == 0:
        assert not (tmp_path.parent / "escaped.json").exists()


@pytest.mark.parametrize("card_text", [b"", b"\xff\xfe\x00garbage", b"<!-- overlap:begin cybergym -->\nno end\n",
                                       b"<!-- overlap:end cybergym -->\n<!-- overlap:begin cybergym -->\n",
                                       b"---\nunclosed: [front matter\n", "\u202e\u0000 ünïcödé\n".encode()])
def test_card_with_odd_card_text(card_text, compare_result, tmp_path):
    result = tmp_path / "res"
    shutil.copytree(compare_result, result)
    (tmp_path / "README.md").write_bytes(card_text)
    args = ["card", "res", "--card", "README.md", "--out", tmp_path / "out"]
    run_checked(f"card:text:{card_text[:12]!r}", args, root=tmp_path)


def test_cyber_set_is_complete():
    assert set(CYBER) <= set(ADAPTER_FILES)
