"""Running `overlap` on a written mix case (library and CLI) and reading back what it says, for the mix
property tests. Nothing here decides what is right: that is `mix_oracle`."""

from __future__ import annotations

import csv
import io
import json
import traceback
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from mix_oracle import Columns
from mix_strategies import DATA, Written
from typer.testing import CliRunner

from overlap.api import compare, filter_train
from overlap.cli import app

# The stages a count does not depend on are off: no chance baselines, no evidence, no text check.
QUIET = {"pool": None, "evidence": False, "text": []}
QUIET_CLI = ["--pool", "none", "--no-evidence", "--text", "none"]


def data_args() -> list[str]:
    return [arg for name, path in DATA.items() for arg in ("--data", f"{name}={path}")]


def library_matched(written: Written, columns: Columns, which: list[int] | None = None) -> dict[str, set[str]]:
    """{bench name: bench ids in a counted pair} from `overlap.api.compare` on the benches at `which`."""
    which = list(range(len(written.bench_args))) if which is None else which
    result = compare(str(written.train_path), [written.bench_args[i] for i in which], columns=columns.options(),
                     data=DATA, **QUIET)
    return {comp.name: set(comp.contaminated_ids()) for comp in result.benches}


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    crash: str

    def describe(self) -> str:
        return f"exit {self.exit_code}\nstdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}\n{self.crash}"


def cli(args: list[str]) -> Run:
    result = CliRunner().invoke(app, args)
    crash = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    return Run(result.exit_code, result.stdout, result.stderr, crash)


def cli_compare(written: Written, columns: Columns, out: Path) -> tuple[Run, dict[str, int], dict[str, set[str]]]:
    """`overlap compare … --format json --out OUT`: (run, {bench: bench_items_matched}, {bench: ids listed in
    OUT/<bench>_contaminated_ids.txt})."""
    run = cli(["compare", str(written.train_path), *written.bench_args, *columns.cli(), *data_args(),
               "--format", "json", "--out", str(out), *QUIET_CLI])
    assert run.exit_code == 0 and not run.crash, run.describe()
    summary = json.loads(run.stdout)
    counted = {b["bench"]: b["bench_items_matched"] for b in summary["benches"]}
    listed = {}
    for name in counted:
        path = out / f"{name}_contaminated_ids.txt"
        listed[name] = set(path.read_text(encoding="utf-8").splitlines()) if path.exists() else set()
    return run, counted, listed


def library_filter(written: Written, columns: Columns, out: Path, reasons=("id", "dup")):
    return filter_train(str(written.train_path), written.bench_args, out, reasons=reasons,
                        columns=columns.options(), data=DATA)


def cli_filter(written: Written, columns: Columns, out: Path, reasons=("id", "dup")) -> Run:
    drops = [arg for reason in reasons for arg in ("--drop", reason)]
    run = cli(["filter", str(written.train_path), *written.bench_args, *columns.cli(), *data_args(), *drops,
               "--out", str(out)])
    return run


def removed_csv(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((out / "removed.csv").read_text(encoding="utf-8"))))


def _cells(row: dict) -> dict:
    """A row's cells compared as text (CSV has no types; an empty cell is null)."""
    return {k: None if v is None or v == "" else str(v) for k, v in row.items()}


def input_rows(path: Path) -> list:
    """The training file's rows, in a form the kept shard can be compared with: JSON lines as their lines
    (byte for byte), parquet rows as read, CSV rows as text."""
    if path.suffix == ".jsonl":
        return path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    with path.open(newline="", encoding="utf-8") as handle:
        return [_cells(r) for r in csv.DictReader(handle)]


def kept_rows(out: Path, train_path: Path) -> list:
    """The kept rows the filter wrote for the training file (`OUT/data/<name>`, in its own format: a CSV split
    of a CSV file), in the form of `input_rows`. No shard at all reads as no rows."""
    data = out / "data"
    shards = sorted(p for p in data.rglob("*") if p.is_file()) if data.exists() else []
    assert len(shards) <= 1, f"one input file, several shards: {shards}"
    if not shards:
        return []
    shard = shards[0]
    if train_path.suffix == ".jsonl":
        assert shard.name == train_path.name, shard
        return shard.read_text(encoding="utf-8").splitlines()
    assert shard.name == train_path.name, shard
    if train_path.suffix == ".csv":
        return input_rows(shard)
    return pq.read_table(shard).to_pylist()
