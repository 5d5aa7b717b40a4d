"""The oracle and the promise checks for `overlap filter`, independent of the tool's own code.

The oracle works on the truths the generator recorded (`prop_layouts.Truth`): a training row joins a
benchmark when it shares a canonical key with a benchmark row (or, with no PR number on one side, the same
base commit and the identical fix). Every row of an id that joins goes too, exact repeats included.

The output folder is read generically: every `*.parquet` under it (kept rows, one shard per input file or
one file for all; JSON-lines shards are read too), `removed.csv` by its columns `file`, `row`, `item_id`,
`reasons`, and `filter.json`.
`row` in removed.csv is the row's position in `file` as read, counting every row and every non-blank line of
a JSON-lines file, including lines that are not JSON.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import re
import traceback
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
from prop_layouts import Case, Layout, Truth
from typer.testing import CliRunner

from overlap.cli import app

TASK_KEY_KINDS = ("ossfuzz:", "cve:", "repo_pr:")  # keys that name one task (duplicates inside a set)
UNREADABLE_WORDS = ("malformed", "unreadable", "bad_line", "invalid", "not_json", "skipped_line")


# --- the oracle ------------------------------------------------------------------------------------------


def joins_by_key(row: Truth, bench: list[Truth]) -> bool:
    """Does this training row share a canonical task key with some benchmark row?"""
    return bool(row.keys & set().union(*(b.keys for b in bench)))


def joins_by_fix(row: Truth, bench: list[Truth]) -> bool:
    """A side without a PR number: the same base commit with the identical fix is the same task. Finding
    this needs the fix evidence, so it binds when `fix` is a drop reason; with `--drop id` alone the row may
    go or stay."""
    return any(row.base and row.base == b.base and not (row.has_pr and b.has_pr) and row.patch == b.patch
               for b in bench)


Position = tuple[str, int]  # (file, row position in it)


def positions(layout: Layout) -> dict[Position, Truth | None]:
    return {(relpath, i): truth for relpath, rows in layout.files.items() for i, (_, truth) in enumerate(rows)}


def _with_same_ids(found: set[Position], rows: dict[Position, Truth]) -> set[Position]:
    """Every row of an id that joins goes, exact repeats and other copies of the id included."""
    ids = {rows[p].item_id for p in found if rows[p].item_id is not None}
    return found | {p for p, t in rows.items() if t.item_id is not None and t.item_id in ids}


def dirty_positions(case: Case, reasons: tuple[str, ...]) -> tuple[set[Position], set[Position]]:
    """(training rows that must go, rows that may go or stay) for these drop reasons."""
    bench = [t for b in case.benches for t in b.truths()]
    rows = {p: t for p, t in positions(case.train).items() if t is not None}
    by_key = {p for p, t in rows.items() if joins_by_key(t, bench)}
    by_fix = {p for p, t in rows.items() if joins_by_fix(t, bench)}
    must = _with_same_ids(by_key | (by_fix if "fix" in reasons else set()), rows)
    return must, _with_same_ids(by_key | by_fix, rows) - must


def dup_groups(case: Case) -> dict[Position, frozenset[Position]]:
    """Rows with an id grouped by shared task keys or the same id (transitively): copies of one task."""
    rows = {p: t for p, t in positions(case.train).items() if t is not None and t.item_id is not None}
    parent = {p: p for p in rows}

    def find(p):
        while parent[p] != p:
            p = parent[p]
        return p

    by_label: dict[str, Position] = {}
    for p, t in rows.items():
        for label in [f"id:{t.item_id}", *(k for k in t.keys if k.startswith(TASK_KEY_KINDS))]:
            if label in by_label:
                parent[find(p)] = find(by_label[label])
            else:
                by_label[label] = p
    groups: dict[Position, set[Position]] = {}
    for p in rows:
        groups.setdefault(find(p), set()).add(p)
    return {p: frozenset(groups[find(p)]) for p in rows}


# --- reading rows, the tool's way and ours ---------------------------------------------------------------

BAD = "<not JSON> "  # prefix of a line that is not JSON, as read from an input or a JSON-lines shard


def is_bad(content: str) -> bool:
    return content.startswith(BAD)


def _drop_nulls(value):
    """JSON has no schema: a missing key and a null are the same; Arrow fills absent struct fields with
    nulls. Compare JSON-born rows without their nulls."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def normalise(row: dict, fmt: str) -> str:
    """A row as a comparable string. Parquet rows compare as read (every column, every type); JSON rows
    without nulls; CSV rows as text (CSV has no types: `19284.0` must stay `19284.0`, empty = null)."""
    if fmt == "csv":
        row = {k: "" if v is None else str(v) for k, v in row.items()}
    elif fmt == "json":
        row = _drop_nulls(row)
    return json.dumps(row, sort_keys=True, default=repr)


def file_format(relpath: str) -> str:
    suffix = Path(relpath).suffix.lower()
    return {".parquet": "parquet", ".csv": "csv"}.get(suffix, "json")


def read_input(layout: Layout) -> dict[str, list]:
    """Every source row of the training layout, read back from disk with pyarrow / json: {file: [row or BAD]}."""
    out: dict[str, list] = {}
    for relpath in layout.files:
        path = layout.folder / relpath
        fmt = file_format(relpath)
        if fmt == "parquet":
            rows = pq.read_table(path).to_pylist()
        elif fmt == "csv":
            rows = _read_csv(path)
        elif path.suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8"))
        else:
            rows = []
            rows = _json_lines(path.read_text(encoding="utf-8"))
        out[relpath] = [r if isinstance(r, str) else normalise(r, fmt) for r in rows]
        assert len(out[relpath]) == len(layout.files[relpath]), f"{relpath}: generator and reader disagree"
    return out


@dataclass
class Output:
    shards: dict[str, list[dict]]  # output relpath → kept rows as read by pyarrow
    removed: list[dict[str, str]]  # removed.csv rows
    info: dict  # filter.json

    @property
    def kept(self) -> int:
        return sum(len(rows) for rows in self.shards.values())


def _json_lines(text: str) -> list:
    """Rows of a JSON-lines text; a line that is not JSON comes back as BAD + the line."""
    rows: list = []
    for line in text.splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                rows.append(BAD + line)
    return rows


def _read_csv(path: Path) -> list:
    header = next(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    options = pcsv.ConvertOptions(column_types=dict.fromkeys(header, "string"))
    return pcsv.read_csv(path, convert_options=options).to_pylist()


def _read_shard(path: Path) -> list:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    if path.suffix == ".csv":
        return _read_csv(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    return _json_lines(text)


def read_output(out: Path) -> Output:
    """Kept rows: every parquet, JSON-lines, JSON and CSV shard under `out`'s `data/` (each format stays
    itself), in path order."""
    paths = sorted(p for p in (out / "data").rglob("*") if p.is_file() and p.suffix in (".parquet", ".jsonl",
                                                                                         ".json", ".csv"))
    paths = paths if (out / "data").is_dir() else []
    shards = {p.relative_to(out).as_posix(): _read_shard(p) for p in paths}
    text = (out / "removed.csv").read_text(encoding="utf-8")
    removed = list(csv.DictReader(io.StringIO(text)))
    info_path = out / "filter.json"
    info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.exists() else {}
    return Output(shards, removed, info)


def resolve_file(name: str, files: list[str]) -> str | None:
    """The input file removed.csv means by `name`: its path in the repo, or a unique path ending with it."""
    if name in files:
        return name
    found = [f for f in files if f.endswith("/" + name) or Path(f).name == name]
    return found[0] if len(found) == 1 else None


def counts_named(info, words=UNREADABLE_WORDS) -> list[int]:
    """Every number in filter.json whose key path (or a label beside it, e.g. `what`) names unreadable rows."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            labels = path + " " + " ".join(str(v) for v in node.values() if isinstance(v, str))
            for key, value in node.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    if any(w in f"{labels} {key}".lower() for w in words):
                        found.append(int(value))
                else:
                    walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}/{index}")

    walk(info, "")
    return found


# --- running the tool ------------------------------------------------------------------------------------


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    crash: str  # the traceback of an exception that escaped, else ""

    def describe(self) -> str:
        return f"exit {self.exit_code}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}\n{self.crash}"


@contextmanager
def working_dir(path: Path):
    """Run the tool from an empty folder of our own: anything it writes relative to the cwd shows up there."""
    path.mkdir(parents=True, exist_ok=True)
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_filter(case: Case, out: Path, reasons: tuple[str, ...] = (), cwd: Path | None = None) -> Run:
    args = ["filter", case.train.name, *(b.name for b in case.benches), "--out", str(out)]
    for name, path in case.data().items():
        args += ["--data", f"{name}={path}"]
    for reason in reasons:
        args += ["--drop", reason]
    with working_dir(cwd or out.parent / "cwd"):
        result = CliRunner().invoke(app, args)
    crash = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    return Run(result.exit_code, result.stdout, result.stderr, crash)


def snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """{relative path: sha256} of every file under root (outside `skip`)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        out[path.relative_to(root).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest()
                                                  if path.is_file() else "<dir>")
    return out


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- the promise -----------------------------------------------------------------------------------------


def check_promise(case: Case, out: Path, run: Run, reasons: tuple[str, ...]) -> Output | None:
    """Assert every promise of `overlap filter` for one generated case. Returns the output read (None when
    the tool refused a damaged input, which it may do with exit 2 and one line naming the place)."""
    layout = case.train
    inputs = read_input(layout)
    truths = positions(layout)
    bad_lines = [p for p, t in truths.items() if t is None]
    story = case.describe()

    if run.exit_code == 2 and bad_lines and not run.crash and "internal error" not in run.stderr:
        # Refusing a file with a line that is not JSON is allowed, if said where and nothing is written.
        assert not out.exists(), f"refused, but left {out} behind\n{run.describe()}"
        assert re.search(r"line \d+", run.stderr), f"refusal does not name the line\n{run.describe()}"
        return None
    assert run.exit_code == 0 and not run.crash, f"filter failed\n{run.describe()}\n{story}"
    output = read_output(out)
    fmt = file_format(next(iter(layout.files)))
    kept_all = [row if isinstance(row, str) else normalise(row, fmt) for rows in output.shards.values() for row in rows]
    # A JSON-lines shard may keep a line that is not JSON as it was; it must be a line of the input.
    bad_inputs = {c for rows in inputs.values() for c in rows if is_bad(c)}
    kept_bad = [c for c in kept_all if is_bad(c)]
    assert set(kept_bad) <= bad_inputs, f"a kept line is neither JSON nor an input line: {kept_bad[:1]}"
    kept_rows = [c for c in kept_all if not is_bad(c)]

    content_truth: dict[str, Truth] = {}
    content_clean: Counter[str] = Counter()
    dirty, either = dirty_positions(case, reasons)
    for (relpath, i), truth in truths.items():
        if truth is not None:
            content_truth[inputs[relpath][i]] = truth
            if (relpath, i) not in dirty | either:
                content_clean[inputs[relpath][i]] += 1
    dirty_contents = {inputs[f][i] for f, i in dirty}

    # 1. No kept row joins the benchmark; every copy of a joining row is gone.
    for row in kept_rows:
        assert row in content_truth, f"a kept row is not a row of the input: {row[:300]}\n{story}"
        assert row not in dirty_contents, (f"kept row {content_truth[row].item_id!r} joins the benchmark "
                                           f"(keys {sorted(content_truth[row].keys)})\n{run.stdout}\n{story}")

    # 2. Clean rows are kept: all of them with `--drop id`; otherwise a clean row goes only as a duplicate,
    #    and one copy of each group of duplicates stays.
    kept_counts = Counter(kept_rows)
    missing = content_clean - kept_counts
    removed_by_pos = {}
    files = list(layout.files)
    for entry in output.removed:
        relpath = resolve_file(entry.get("file") or "", files)
        assert relpath is not None, f"removed.csv names no input file: {entry}; inputs {files}"
        position = (relpath, int(entry["row"]))
        assert position in truths, f"removed.csv points outside {relpath}: {entry}"
        assert position not in removed_by_pos, f"removed.csv lists {position} twice"
        removed_by_pos[position] = entry
    if set(reasons) == {"id"}:
        assert not missing, (f"clean rows dropped with --drop id: "
                             f"{[content_truth[c].item_id for c in missing]}\n{run.stdout}\n{story}")
    else:
        groups = dup_groups(case)
        kept_positions = {p for p in truths if p not in removed_by_pos and truths[p] is not None}
        for position, entry in removed_by_pos.items():
            if position in dirty | either:
                continue
            truth = truths[position]
            assert truth is not None and truth.item_id is not None, f"a row without an id was dropped: {entry}"
            assert all(r.startswith("dup") for r in entry["reasons"].split(";")), (
                f"clean row {truth.item_id!r} dropped for {entry['reasons']}\n{run.stdout}\n{story}")
            assert groups[position] & kept_positions, (
                f"every copy of {truth.item_id!r} dropped as a duplicate; one must stay\n{story}")

    # 3. Every row the oracle says joins is listed in removed.csv, at its own position.
    unlisted = sorted(dirty - set(removed_by_pos))
    assert not unlisted, (f"rows that join the benchmark are not in removed.csv: "
                          f"{[(p, truths[p].item_id) for p in unlisted]}\n{run.stdout}\n{story}")

    # 4. removed.csv's item_id is the id the source holds at (file, row).
    for position, entry in removed_by_pos.items():
        truth = truths[position]
        assert truth is not None, f"removed.csv points at a line that is not JSON: {entry}"
        if truth.item_id is not None:
            assert entry["item_id"] == truth.item_id, (
                f"removed.csv says {entry['item_id']!r} at {position}, the source holds {truth.item_id!r}")

    # 5. Kept + removed = rows read; rows that could not be read are counted, not lost.
    readable = sum(1 for t in truths.values() if t is not None)
    assert len(kept_rows) + len(output.removed) == readable, (
        f"kept {len(kept_rows)} + removed {len(output.removed)} != {readable} rows read\n{story}")
    # (A kept line that is not JSON may or may not count as a kept row.)
    kept_counts_ok = {len(kept_rows), output.kept}
    if "kept_rows" in output.info:
        assert output.info["kept_rows"] in kept_counts_ok, f"filter.json kept_rows={output.info['kept_rows']}, " \
                                                          f"the files hold {len(kept_rows)}"
    if "removed_rows" in output.info:
        assert output.info["removed_rows"] == len(output.removed), (
            f"filter.json removed_rows={output.info['removed_rows']}, removed.csv holds {len(output.removed)}")
    if bad_lines:
        assert len(bad_lines) in counts_named(output.info), (
            f"{len(bad_lines)} lines that are not JSON, but filter.json counts no such rows: "
            f"{json.dumps(output.info)[:600]}")

    # 6. The kept rows are the input rows not removed, in input order (one shard per input file, or all
    #    files in one).
    expected = {f: [inputs[f][i] for i in range(len(inputs[f]))
                    if (f, i) not in removed_by_pos and (kept_bad or not is_bad(inputs[f][i]))] for f in files}
    check_order(output, expected, fmt)

    # 7. The filter checked its own output and says so.
    verified = [line for line in run.stdout.splitlines() if line.strip().startswith("verified:")]
    assert verified, f"no `verified: 0 of N rows match <bench>` line\n{run.stdout}"
    assert any(re.match(rf"\s*verified: 0 of ({'|'.join(f'{n:,}' for n in kept_counts_ok)}) rows match", line)
               for line in verified), verified
    for bench in case.benches:
        assert any(bench.name in line for line in verified), f"{bench.name} not in {verified}"
    return output


def check_order(output: Output, expected: dict[str, list[str]], fmt: str) -> None:
    shards = {name: [r if isinstance(r, str) else normalise(r, fmt) for r in rows]
              for name, rows in output.shards.items()}
    if len(shards) == 1 and len(expected) > 1:
        # One output file for several inputs: the inputs' kept rows back to back, in the order read
        # (the files' listed order or sorted by path).
        (only,) = shards.values()
        orders = [list(expected), sorted(expected)]
        assert any(only == list(itertools.chain(*(expected[f] for f in order))) for order in orders), (
            f"kept rows are not the input rows in input order: {_first_difference(only, expected)}")
        return
    unmatched = dict(expected)
    for name, rows in shards.items():
        match = next((f for f, rows_of in unmatched.items() if rows_of == rows), None)
        assert match is not None, (f"output shard {name} is not the kept rows of one input file, in order: "
                                   f"{_first_difference(rows, unmatched)}")
        del unmatched[match]
    left = {f: rows for f, rows in unmatched.items() if rows}
    assert not left, f"kept rows of {sorted(left)} are in no output shard"


def _first_difference(rows: list[str], expected: dict[str, list[str]]) -> str:
    best = min(expected.items(), key=lambda kv: -sum(a == b for a, b in zip(kv[1], rows, strict=False)))
    name, want = best
    for index, (got, exp) in enumerate(itertools.zip_longest(rows, want)):
        if got != exp:
            return f"closest input {name}, first difference at kept row {index}: got {str(got)[:200]} " \
                   f"expected {str(exp)[:200]}"
    return "no difference"
