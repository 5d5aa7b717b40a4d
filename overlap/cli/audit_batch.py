"""`overlap audit --targets FILE` / `--benchmark NAME`: many targets in one run (overlap.audit.study).

Prints the per-set table (console, csv, md) or the whole document (json); with `--out DIR` writes each
target's result to DIR/targets/ as it ends, then DIR/audit.json and the table as sets.csv, sets.md and
sets.html. Exit 0 when every target ran, 1 when `--fail-on` is reached, 2 when a target failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import InputError
from ..progress import progress_enabled
from .options import Format


def _refuse_single(single: dict) -> None:
    for name, value in single.items():
        if value:
            raise InputError(f"{name}: not with --targets or --benchmark (each target brings its own reference)")


def _targets(batch: dict) -> tuple[list, dict]:
    """The targets and, per benchmark set, how its tasks were drawn (the estimates' population)."""
    from ..audit.study.targets import read_targets

    found, sampling = [], {}
    if batch["targets"] is not None:
        found += read_targets(batch["targets"], batch["set_name"])
        sampling = set_sizes(batch.get("set_size"), found)
    elif batch["set_name"] or batch.get("set_size"):
        flag = "--set" if batch["set_name"] else "--set-size"
        raise InputError(f"{flag}: only with --targets (a benchmark's sets are NAME:TAG, its size known)")
    if batch["benchmark"]:
        from ..api.audit_benchmark import benchmark_sets
        from ..sources.load import parse_data_options

        drawn, sampling = benchmark_sets(batch["benchmark"], batch["tag"], batch["sample"], batch["seed"] or 0,
                                         parse_data_options(batch["data"]), batch.get("mirror"))
        found += drawn
    else:
        for flag, key in (("--tag", "tag"), ("--mirror", "mirror"), ("--sample", "sample"), ("--seed", "seed"),
                          ("--data", "data")):
            if batch[key]:
                raise InputError(f"{flag}: only with --benchmark")
    return found, sampling


def set_sizes(values: list[str] | None, targets: list) -> dict[str, dict]:
    """``--set-size SET=N``: the whole set's size behind a targets file's sample, per set."""
    tasks: dict[str, set] = {}
    for t in targets:
        tasks.setdefault(t.set, set()).add(t.label)
    out = {}
    for value in values or ():
        name, sep, size = value.rpartition("=")
        if not sep or not size.strip().isdigit() or int(size) < 1:
            raise InputError(f"--set-size {value}: give SET=N, N the number of tasks in the whole set")
        if name not in tasks:
            raise InputError(f"--set-size {value}: no set {name!r} in the targets (sets: {', '.join(sorted(tasks))})")
        if int(size) < len(tasks[name]):
            raise InputError(f"--set-size {value}: the targets hold {len(tasks[name])} tasks of {name}, "
                             f"more than {size}")
        out[name] = {"population": int(size), "drawn": len(tasks[name]), "seed": None,
                     "method": "given (--set-size): the rows are taken as a random sample"}
    return out


def _out_folder(out: str | None) -> Path | None:
    if out is None:
        return None
    folder = Path(os.path.abspath(out))
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out}: is a file; with --targets or --benchmark it names a folder")
    return folder


def _progress(enabled: bool):
    """A counter on stderr (targets done / all) when stderr is a terminal and the output is not JSON."""
    if not (enabled and progress_enabled()):
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\raudited {done}/{total} targets")
        sys.stderr.flush()
        if done == total:
            sys.stderr.write("\n")

    return show


def _routes_text(doc: dict, contamination: dict, fmt: Format) -> str:
    from ..audit.study.routes import routes_table
    from ..audit.study.routes_render import render_routes_console, render_routes_csv, render_routes_md
    from ..audit.study.run import document_json

    table = routes_table(doc, contamination)
    return {Format.json: document_json, Format.csv: render_routes_csv, Format.md: render_routes_md}.get(
        fmt, render_routes_console)(table)


def run_batch_command(batch: dict, single: dict, *, network: str, repo_path: str | None, limit: list[str],
                      git: str | None, fmt: Format, out: str | None, fail_on: str | None,
                      insecure_registries: list[str] | None = None, index: dict | None = None) -> int:
    from ..audit.study.render import render_console, render_csv, render_md
    from ..audit.study.run import DEFAULT_TIMEOUT, BatchOptions, document_json, run_batch, write_document

    _refuse_single(single)
    if batch["targets"] is not None and batch["benchmark"]:
        raise InputError("--targets and --benchmark: give one (a file of targets, or a benchmark's images)")
    options = BatchOptions(network=network, repo_path=repo_path, limits=tuple(limit), git=git,
                           timeout=batch["timeout"] if batch["timeout"] is not None else DEFAULT_TIMEOUT,
                           jobs=batch["jobs"], engine=batch["engine"] or "local", ray_address=batch["ray_address"],
                           fail_on=fail_on, insecure_registries=tuple(insecure_registries or ()),
                           check_index=bool(index and index["check"]), package=(index or {}).get("package"),
                           index_url=(index or {}).get("index_url"),
                           all_releases=bool((index or {}).get("all_releases")))
    options.check()
    folder = _out_folder(out)
    from ..audit.study.routes import read_contamination

    contamination = read_contamination(batch.get("contamination"))
    targets, sampling = _targets(batch)
    doc = run_batch(targets, options, folder, progress=_progress(fmt != Format.json), sampling=sampling)
    if folder is not None:
        write_document(doc, folder, contamination)
    if batch.get("routes"):
        text = _routes_text(doc, contamination, fmt)
    else:
        text = {Format.json: document_json, Format.csv: render_csv, Format.md: render_md}.get(fmt, render_console)(
            doc)
    sys.stdout.write(text)
    sys.stdout.flush()
    failed = doc["counts"]["error"]
    if failed:
        print(f"overlap: {failed} of {doc['counts']['targets']} targets failed (status error in the report)",
              file=sys.stderr)
    return doc["exit_code"]
