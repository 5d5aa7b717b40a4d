"""What a training set looks like without a benchmark's tasks: the filtered split, its removed rows with
reasons, and the clean/contaminated id lists of each benchmark.

The decision (which rows, why) is `filter_plan`; the shards on disk are `split_files`. `write_split` writes
them and, before it reports success, proves the promise on what it wrote:

1. every written row is byte-equal (parquet: equal values and types) to the input row at its position;
2. kept + removed = rows read, file by file;
3. each removed row, read back through the dataset's own adapter, has the id `removed.csv` gives it;
4. the kept split, read back by a verifier that shares no code with the filter (`verify/`: plain file
   readers, the id parsers, set intersection with the benchmarks' raw ids), holds no key an asked reason
   promised to remove (`verified: 0 of N rows match <bench>`). A re-run of the compare on the kept rows is
   not done: it would share the filter's mistakes.

Any failure is an InputError naming the first offending row, and the output folder is not left behind.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import InputError, OverlapError
from ...jsonout import dumps_json, versioned
from ...progress import stage
from ...sources.formats.in_memory import ORIGIN, write_parquet
from ...sources.load import open_source, reread
from ...sources.places.files import SingleFile, SplitSource, first_line, sha256_of
from ...sources.registry.registry import get_spec
from ..atomic import atomic_folder
from ..published import describe_source, public_provenance, safe_name
from ..tables import bench_lists, to_csv_text
from .card_features import features_yaml
from .filter_plan import DEFAULT_REASONS, REMOVED_COLUMNS, FilterResult, check_reasons, filter_split
from .hub import check_write_access, http_status
from .hub import hub_api as _hub_api  # the name the CLI calls and tests replace
from .split_files import SHARD_FOLDER, Shard, same_rows, shard_for, unified_schema, write_shard
from .verify.check import BenchRows, SplitFile, verify_split
from .verify.keys import KeyColumns

__all__ = ["DEFAULT_REASONS", "REMOVED_COLUMNS", "FilterResult", "SplitReport", "bench_lists", "check_reasons",
           "filter_split", "push_split", "refuse_mixed_push", "write_split"]

CHECK_FOLDER = ".check"  # scratch space inside the temp output folder, removed before it is renamed


@dataclass
class SplitReport:
    """What `write_split` wrote and what it proved about it."""

    out: Path
    shards: list[str]
    kept_rows: int
    verification: dict[str, Any]

    def verified_line(self) -> str:
        v = self.verification
        return f"verified: {v['rows_matching']} of {v['kept_rows']:,} rows match {', '.join(v['benches'])}"


def _source_of(dataset):
    """The FileSource the dataset was read from, or one rebuilt from its provenance via the registry."""
    if getattr(dataset, "source", None) is not None:
        return dataset.source
    prov = dataset.provenance
    if prov.origin == "local-file":
        return SingleFile(origin="local-file", location=prov.location, path=Path(prov.location))
    if prov.adapter is None:
        raise InputError(f"{dataset.name}: the provenance names no adapter; cannot re-read its source rows")
    local = Path(prov.location) if prov.origin == "local-folder" and prov.location else None
    source, _ = open_source(get_spec(prov.adapter), prov.revision, local)
    return source


def _memory_shards(dataset, spool: Path) -> list[tuple[Shard, int]]:
    """The one shard of an in-memory dataset: its rows written to a parquet file in `spool` (so every check
    below reads them as it reads a file's), and the rows the compare read. A stream read again must give as
    many rows (an IterableDataset whose generator gives other rows a second time is refused)."""
    (record,) = dataset.provenance.files
    name = safe_name(record.path)
    path = spool / (name if name.lower().endswith(".parquet") else f"{name}.parquet")
    rows = write_parquet(dataset.source, str(path))
    if rows != int(record.rows or 0):
        raise InputError(f"{dataset.name}: {rows} rows read again but {record.rows} compared; an in-memory dataset "
                         "must give the same rows each time it is read")
    return [(Shard(record.path, path, f"{SHARD_FOLDER}/{path.name}"), rows)]


def _input_shards(dataset) -> list[tuple[Shard, int]]:
    """(shard, rows recorded) of every file the dataset was read from, each checked unchanged."""
    source = _source_of(dataset)
    out = []
    for record in dataset.provenance.files:
        if "@" in record.path:  # a subset-membership file of another repo, not rows of this set
            continue
        path = source.fetch(record.path)
        if sha256_of(path) != record.sha256:
            raise InputError(f"{path}: changed since it was compared (sha256 differs from the provenance); "
                             "run the compare again")
        out.append((shard_for(record.path, path), int(record.rows or 0)))
    if not out:
        raise InputError(f"{dataset.name}: the provenance lists no files to re-read")
    _refuse_shared_shards([shard for shard, _ in out])
    return out


def _refuse_shared_shards(shards: list[Shard]) -> None:
    """Two input files written to one shard (`a.json`, a JSON array, and `a.jsonl` both become `data/a.jsonl`)
    would overwrite each other's rows: refused, naming both, before anything is written."""
    seen: dict[str, Shard] = {}
    for shard in shards:
        first = seen.setdefault(shard.relpath, shard)
        if first is not shard:
            raise InputError(f"{first.label} and {shard.label} would both be written as {shard.relpath} (a JSON array "
                             "is written as JSON lines, one shard per input file); rename one of them, or move it out "
                             "of the training set, then filter again")


def _split_source(dataset, shards: list[Shard], root: Path) -> SplitSource:
    files = {s.label: root / s.relpath for s in shards}
    if dataset.provenance.origin == "local-file" and len(shards) == 1:
        files[""] = root / shards[0].relpath  # a single file is fetched as ""
    return SplitSource(origin="split", location=None, shards=files)


def _label_map(shards: list[Shard]) -> dict[str, str]:
    """How the adapter names a shard when it reads it back → the input file it was cut from."""
    out = {s.label: s.label for s in shards}
    out.update({Path(s.relpath).name: s.label for s in shards if len(shards) == 1})
    return out


def _reread(dataset, shards: list[Shard], root: Path):
    try:
        return reread(dataset, _split_source(dataset, shards, root))
    except InputError as exc:
        if "no usable rows" in str(exc):
            return None  # nothing to read back (every row removed, or none kept)
        raise


def _check_removed_ids(dataset, filtered: FilterResult, shards: list[Shard], root: Path) -> None:
    """Read the removed rows back through the adapter: each must hold the id removed.csv names."""
    again = _reread(dataset, shards, root)
    labels = _label_map(shards)
    found: dict[tuple[str, int], str] = {}
    if again is not None:
        located = pd.concat([again.items[["item_id", "file", "file_row"]], again.repeats[["item_id", "file",
                                                                                            "file_row"]]])
        for item_id, file, position in located.itertuples(index=False):
            found[(labels.get(file, file), int(position))] = item_id
    for file, group in filtered.removed.groupby("file", sort=False):
        for scratch_position, (row, item_id) in enumerate(zip(group["row"], group["item_id"], strict=True)):
            held = found.get((str(file), scratch_position))
            if held != item_id:
                raise InputError(f"filter check failed: removed.csv names {item_id!r} at {file} row {row}, but the "
                                 f"source holds {held!r} there; nothing was written")


def _key_columns(dataset, role: str) -> KeyColumns:
    """Which cells hold the dataset's identity, from the user's column options or its declaration (never
    from a table the filter computed)."""
    columns = getattr(dataset, "generic_columns", None)
    if columns is not None:
        values = {"id": columns.id, "repo": columns.repo, "pr": columns.pr, "base": columns.base,
                  "fix": columns.fix, "cve": columns.cve, "scheme": columns.scheme}
        return KeyColumns.of(values, f"{role} {dataset.name}")
    spec = get_spec(dataset.provenance.adapter or dataset.name)
    if spec.columns:
        return KeyColumns.of(spec.columns, spec.origin or spec.name)
    return KeyColumns.of(spec.extra.get("key_columns") or {}, spec.origin or spec.name)


def _bench_rows(bench) -> BenchRows:
    """A benchmark as the raw identity cells of its items (`item_id`, and repo / PR / base commit where its
    declaration or column options name them), read by the same parsers as the split."""
    declared = _key_columns(bench, "benchmark")
    fields = {"repo": "repo", "pr": "pr", "base": "base_commit"}
    named = {k: v for k, v in fields.items() if (getattr(declared, k) or (k == "repo" and declared.owner))}
    present = [c for c in ("item_id", *named.values()) if c in bench.items.columns]
    frame = bench.items[present].astype(object)
    rows = frame.where(frame.notna(), None).to_dict(orient="records")  # pandas' missing values as None
    columns = KeyColumns(id="item_id", scheme=declared.scheme,
                         **{k: v for k, v in named.items() if v in present})
    return BenchRows(bench.name, columns, rows)


def write_split(result, filtered: FilterResult, out: Path) -> SplitReport:
    """Write the kept rows (one shard per input file under `data/`), `removed.csv`, `filter.json` and the
    bench id lists into the folder `out`, atomically, after checking them (see the module docstring)."""
    train = result.train
    if train.provenance.origin == ORIGIN:
        with tempfile.TemporaryDirectory(prefix="overlap-memory-") as spool:
            return _write_split(result, filtered, out, _memory_shards(train, Path(spool)))
    return _write_split(result, filtered, out, _input_shards(train))


def _write_split(result, filtered: FilterResult, out: Path, inputs: list[tuple[Shard, int]]) -> SplitReport:
    train = result.train
    shards = [s for s, _ in inputs]
    schema, as_text = unified_schema(shards)
    drops = filtered.drop_positions()
    unknown = set(drops) - {s.label for s in shards}
    if unknown:
        raise InputError(f"{train.name}: removed rows name a file that was not read ({sorted(unknown)[0]})")
    with atomic_folder(out, command="filter") as tmp:
        kept_rows = 0
        stage("writing the split")
        for shard, recorded in inputs:
            positions = drops.get(shard.label, set())
            read = write_shard(shard, tmp, positions, keep_listed=False, schema=schema)
            if read < recorded and shard.kind == "jsonl":  # pyarrow's reader takes `{…}{…}` on one line as
                # two rows, and a shard copies lines: running again fails again, so say what to change
                raise InputError(f"{shard.source}: {recorded} rows read from {read} lines; a line holding more "
                                 "than one JSON object cannot be copied as a row: write one object per line")
            if read != recorded:
                raise InputError(f"{shard.source}: {read} rows re-read but {recorded} recorded; run the compare "
                                 "again")
            differs = same_rows(shard, tmp, positions, keep_listed=False, schema=schema)
            if differs:
                raise InputError(f"filter check failed: {differs}; nothing was written")
            kept_rows += read - len(positions)
        if kept_rows + len(filtered.removed) != filtered.source_rows:
            raise InputError(f"filter check failed: {kept_rows} kept + {len(filtered.removed)} removed rows != "
                             f"{filtered.source_rows} rows read; nothing was written")
        stage("checking the removed rows")
        scratch = tmp / CHECK_FOLDER
        for shard, _ in inputs:
            write_shard(shard, scratch, drops.get(shard.label, set()), keep_listed=True, schema=schema)
        _check_removed_ids(train, filtered, shards, scratch)
        _remove_tree(scratch)
        stage("checking the kept split against the benchmarks (independent read-back)")
        files = [SplitFile(tmp / s.relpath, s.relpath, s.label, frozenset(drops.get(s.label, ()))) for s in shards]
        old_to_new = result.mapping.old_to_new if result.mapping is not None else {}
        independent = verify_split(files, _key_columns(train, "training set"),
                                   [_bench_rows(b.bench) for b in result.benches], filtered.reasons_asked,
                                   old_to_new, kept_rows)
        not_checked = [n["reason"] for n in independent["not_checked"]]
        verification = {
            "status": "passed",
            "benches": [b.bench.name for b in result.benches],
            "kept_rows": kept_rows,
            "rows_matching": 0,
            "reasons_checked": [r for r in filtered.reasons_asked if r not in not_checked],
            "reasons_not_checked": not_checked,
            "rows_equal_to_input": True,
            "removed_ids_confirmed": True,
            **independent,
        }
        info = filtered.summary() | {
            "provenance": train.provenance.to_dict(),
            "shards": [s.relpath for s in shards],
            "columns_unified_to_text": as_text,
            "verification": verification,
        }
        (tmp / "removed.csv").write_text(to_csv_text(filtered.removed), encoding="utf-8")
        (tmp / "filter.json").write_text(dumps_json(versioned("filter", info)), encoding="utf-8")
        for name, text in bench_lists(result).items():
            (tmp / name).write_text(text, encoding="utf-8")
        card = loading_card([s.relpath for s in shards], tmp)
        if card is not None:
            (tmp / "README.md").write_text(card, encoding="utf-8")
    return SplitReport(Path(out), [s.relpath for s in shards], kept_rows, verification)


def verify_memory_split(result, filtered: FilterResult, batches, shown: str) -> dict[str, Any]:
    """The split `filter_train` gives back for an in-memory training set (`batches()`: its Arrow batches), read by
    the independent verifier as a written shard is: it holds no key an asked reason removes, and as many rows as
    were kept. Returns the verifier's block; an InputError at the first row that fails."""
    train = result.train
    drops = filtered.drop_positions()
    (label,) = [f.path for f in train.provenance.files] or [train.name]
    old_to_new = result.mapping.old_to_new if result.mapping is not None else {}
    files = [SplitFile(None, shown, label, frozenset(drops.get(label, ())), batches=batches)]
    return verify_split(files, _key_columns(train, "training set"), [_bench_rows(b.bench) for b in result.benches],
                        filtered.reasons_asked, old_to_new, filtered.kept_rows)


def keep_mask_of(filtered: FilterResult, rows: int, label: str):
    """A boolean array over the training set's `rows` rows: True where the row is kept."""
    keep = np.ones(rows, dtype=bool)
    positions = sorted(filtered.drop_positions().get(label, ()))
    if positions and positions[-1] >= rows:
        raise InputError(f"{label}: removed rows name row {positions[-1]} of {rows}")
    keep[positions] = False
    return keep


def loading_card(relpaths: list[str], root: Path | None = None) -> str | None:
    """A README.md whose `configs` name the kept shards, so `datasets.load_dataset(<the folder>)` reads the split
    (without it, the folder's id lists and filter.json are what it finds). None when the shards mix formats, which
    one `datasets` config cannot read. Shards of JSON lines or CSV under `root` get their column types declared
    (`card_features`): removed rows can leave a shard's column all null, which `datasets` would otherwise take
    as the split's type."""
    formats = {path.lower().removesuffix(".gz").removesuffix(".zst").rpartition(".")[2] for path in relpaths}
    if len(formats) != 1:
        return None
    listed = "".join(f"    - {json.dumps(path)}\n" for path in relpaths)
    kind = formats.pop()
    features = features_yaml([root / p for p in relpaths], kind) if root is not None and kind != "parquet" else None
    if features is not None:
        listed += f"  features: {features}\n"
    return ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path:\n" + listed + "---\n\n"
            "# A filtered training split\n\nWritten by `overlap filter`: the kept rows of each input file under "
            "`data/`, as the input had them. `filter.json` says what was removed and why (each removed row is in "
            "`removed.csv`); the `*_clean_ids.txt` lists are the benchmark ids to score on.\n")


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=False)


# --- publishing -----------------------------------------------------------------------------------------


def _push_with_datasets(rows, repo_id: str, config_name: str, token: str, description: str) -> Any:
    return rows.push_to_hub(repo_id, config_name=config_name, token=token, create_pr=True,
                            commit_message=f"overlap: add config {config_name}", commit_description=description)


def shard_format(name: str) -> str:
    """The format a file's shard in a written split has: parquet, csv or jsonl (a JSON file is written as JSON
    lines), by its name under any compression suffix."""
    kind = name.lower().removesuffix(".gz").removesuffix(".zst").rpartition(".")[2]
    return "jsonl" if kind == "json" else kind


def refuse_mixed_push(names: list[str], train: str) -> None:
    """A push reads the split as one `datasets` table, which holds one format: training files of two formats
    (their shards keep them) are refused before any work rather than after the filter."""
    present = sorted({shard_format(n) for n in names} & {"parquet", "jsonl", "csv"})
    if len(present) > 1:
        raise InputError(f"{train}: its files mix {' and '.join(present)}, and the filtered split keeps each file's "
                         "format, so --push cannot publish it as one config; filter without --push and push it by "
                         "hand, or give files of one format")


def _split_rows(split: Path, cache: Path):
    """The written split as a `datasets.Dataset` (memory-mapped from a scratch cache, not held in RAM)."""
    import datasets  # imported here: heavy, needed only to publish

    files = sorted(p for p in (split / SHARD_FOLDER).rglob("*") if p.is_file())
    kinds = {"parquet": [], "jsonl": [], "csv": []}
    for path in files:
        kinds.setdefault(shard_format(path.name), []).append(str(path))
    present = [k for k in ("parquet", "jsonl", "csv") if kinds[k]]
    if len(present) > 1:
        raise InputError(f"{split}: the split mixes {' and '.join(present)} shards; push it by hand")
    if not present:
        raise InputError(f"{split}: no shards under {SHARD_FOLDER}/ to push")
    try:
        if present == ["parquet"]:
            return datasets.Dataset.from_parquet(kinds["parquet"], cache_dir=str(cache))
        if present == ["csv"]:
            return datasets.Dataset.from_csv(kinds["csv"], cache_dir=str(cache))
        return datasets.Dataset.from_json(kinds["jsonl"], cache_dir=str(cache))
    except Exception as exc:  # datasets raises many kinds for unreadable shards
        raise InputError(f"{split}: the split cannot be loaded for the push ({first_line(exc)})") from None


def check_config_name(config_name: str) -> None:
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", config_name or ""):
        raise InputError(f"--config {config_name!r}: give a config name such as minus-cybergym")


def push_split(result, filtered: FilterResult, repo_id: str, config_name: str, *, split: Path,
               token: str | None = None, api=None) -> str:
    """Publish the written, checked split folder `split` as config `config_name` of `repo_id` in one pull
    request (never the main branch). Returns the PR URL. No token / no access → OverlapError (exit 2) before
    anything is sent. The description names repos, revisions and file hashes, never a local path."""
    from huggingface_hub import errors as hf_errors  # imported here: heavy, needed only to publish

    check_config_name(config_name)
    api = api or _hub_api(token)
    check_write_access(api, repo_id)
    prov = result.train.provenance.to_dict()
    where = describe_source(prov)
    description = (f"Rows of {where} without the {len(filtered.removed)} rows that overlap "
                   f"{', '.join(b.bench.name for b in result.benches)} (reasons: "
                   f"{', '.join(filtered.reasons_asked)}). Written by overlap filter.\n\n"
                   + dumps_json(filtered.summary() | {"provenance": public_provenance(prov)}))
    with tempfile.TemporaryDirectory(prefix="overlap-push-") as cache:
        rows = _split_rows(Path(split), Path(cache))
        try:
            info = _push_with_datasets(rows, repo_id, config_name, api.token, description)
        except hf_errors.HfHubHTTPError as exc:
            raise OverlapError(f"{repo_id}: push refused ({http_status(exc)}); nothing was merged, check write "
                               "access") from None
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", "") or info)
