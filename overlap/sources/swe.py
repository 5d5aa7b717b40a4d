"""SWE task sets (GitHub pull requests at a base commit): SWE-rebench-V2 and its PRs companion,
Multi-SWE-bench, Multi-SWE-RL's discarded PRs, SWE-PolyBench, SWE-bench Multilingual, SWE-bench (+ Verified)
and SWE-bench Pro.

Every item gets `project` = canonical repo, `repo` = repo as written, `pr`, `base_commit` (lowercased),
and the keys of `overlap.ids.github.pr_keys`. Bad rows are counted, never silently dropped: rows without
repo or PR, non-numeric PR fields, empty base commits, repeated ids, files or columns that are missing.
An adapter fails (exit 2) only when nothing usable remains.

The two SWE-rebench-V2 sets are read by key columns only, one parquet row group at a time (the PRs set is
2.7 GB); their texts and patches are fetched afterwards, for the items that need them, by `fetch_columns`
/ `ensure_columns`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import HubUnavailableError, InputError, OverlapError
from ..ids.github import canonical_repo, instance_id_for, normalize_base, parse_instance_id, parse_pr, pr_keys
from ..model import Dataset, FileRecord
from .builder import DatasetBuilder
from .files import FileSource, HubRepo, LocalFolder, SingleFile, read_records, sha256_of
from .registry import DatasetSpec, get_spec, register

TEXT = "text_problem_statement"
BASE_FIELDS = ("subset", "project", "repo", "pr", "base_commit")


def _str_or_none(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return text if text.strip() else None


# --- a column-wise builder ------------------------------------------------------------------------------


class ColumnBuilder(DatasetBuilder):
    """A DatasetBuilder that keeps items and keys as columns (lists) instead of one dict per row.

    Same rules as DatasetBuilder (rows without an id are counted, a repeated id keeps its first row), a few
    times less memory for the 100k-row training sets.
    """

    def __init__(self, name: str, fields: tuple[str, ...]) -> None:
        super().__init__(name)
        self.fields = fields
        self.items: dict[str, list] = {c: [] for c in ("item_id", "row", *fields)}  # type: ignore[assignment]
        self.keys: dict[str, list] = {c: [] for c in ("item_id", "kind", "value", "raw")}  # type: ignore[assignment]
        self.count = 0

    def add_item(self, item_id: object, where: str, **fields: Any) -> bool:
        if item_id is None or (isinstance(item_id, str) and not item_id.strip()):
            self.problem("missing_id", where, "rows without an id cannot be joined or listed")
            return False
        item_id = str(item_id)
        if item_id in self._ids:
            self.problem("duplicate_id", item_id, "a repeated id keeps its first row")
            return False
        unknown = set(fields) - set(self.fields)
        if unknown:  # pragma: no cover - a programming error in an adapter
            raise ValueError(f"{self.name}: unknown item field(s) {sorted(unknown)}")
        self._ids.add(item_id)
        self.items["item_id"].append(item_id)
        self.items["row"].append(self.count)
        for name in self.fields:
            self.items[name].append(fields.get(name))
        self.count += 1
        return True

    def add_key(self, item_id: str, kind: str, value: object, raw: object) -> None:
        if value is None or str(value) == "":
            return
        self.keys["item_id"].append(str(item_id))
        self.keys["kind"].append(kind)
        self.keys["value"].append(str(value))
        self.keys["raw"].append(str(raw))

    def has(self, item_id: str) -> bool:
        return item_id in self._ids

    def build(self, source: FileSource, what: str = "") -> Dataset:
        if not self.count:
            reasons = "; ".join(f"{k}: {v[0]}" for k, v in sorted(self._problems.items()))
            where = source.location or source.repo_id or self.name
            raise InputError(f"{self.name}: no usable rows in {where}{what}"
                             + (f" ({reasons})" if reasons else "") + "; check the files and their columns")
        for name in [c for c in self.fields if c.startswith(("text_", "in_")) or c == "patch"]:
            if all(v is None for v in self.items[name]):
                del self.items[name]  # a column the source does not have stays absent, not all-null
        return super().build(source, what)


def add_task(
    builder: ColumnBuilder,
    item_id: object,
    where: str,
    *,
    repo: object,
    pr: object,
    base: object,
    pr_field: str | None = "pr",
    base_expected: bool = True,
    **fields: Any,
) -> bool:
    """Add one PR task: its item (project, repo, pr, base_commit + `fields`) and its keys.

    `pr_field` names where the PR number came from, for the problem report; None when the set has no PR
    numbers (SWE-bench Pro), so a missing PR is not a problem there; `base_expected=False` likewise for a
    row whose schema has no base commit at all (Multi-SWE-RL's discarded PRs).
    """
    number = parse_pr(pr)
    written = _str_or_none(repo)
    project = canonical_repo(written) if written else None
    sha = normalize_base(base)
    added = builder.add_item(
        item_id, where, project=project, repo=written.strip() if written else None, pr=number, base_commit=sha,
        **fields,
    )
    if not added:
        return False
    item_id = str(item_id)
    if written is None:
        builder.problem("missing_repo", item_id, "no repo: no repo_pr keys (base_pr still joins)")
    elif project is None:
        builder.problem("malformed_repo", f"{item_id}: {written!r}", "repo is not a GitHub owner/name")
    if pr_field == "instance_id":
        if number is None:
            builder.problem("malformed_id", item_id,
                            "instance_id is not owner__repo-N: no PR number, only the base key is made")
    elif pr_field is not None:
        if _str_or_none(pr) is None:
            builder.problem("missing_pr", item_id, f"no PR number ({pr_field}): only the base key is made")
        elif number is None:
            builder.problem("non_numeric_pr", f"{item_id}: {pr!r}",
                            f"{pr_field} is not a PR number: only the base key is made")
    if _str_or_none(base) is None:
        if base_expected:
            builder.problem("missing_base_commit", item_id, "empty base commit: no base or base_pr key")
    elif sha is None:
        builder.problem("malformed_base_commit", f"{item_id}: {base!r}",
                        "base commit is not a hex commit id: no base or base_pr key")
    for kind, value, raw in pr_keys(written if project else None, number, sha and str(base)):
        builder.add_key(item_id, kind, value, raw)
    return True


# --- reading files -------------------------------------------------------------------------------------


def _parquet_groups(
    builder: DatasetBuilder, path: Path, label: str, wanted: list[str], needed_any: list[list[str]]
) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """(row offset, rows) of one parquet file, one row group at a time, reading only `wanted` columns.

    A wanted column the file lacks is counted (`missing_column`). When no group of `needed_any` is fully
    present (nothing could make an item), the file is counted as unusable and yields nothing. A file that
    cannot be read at all is counted as unreadable.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
        names = set(handle.schema_arrow.names)
    except (pa.ArrowInvalid, OSError) as exc:
        builder.problem("unreadable_file", f"{label}: {_first_line(exc)}", "the file is not readable parquet")
        return
    present = [c for c in wanted if c in names]
    for column in wanted:
        if column not in names:
            builder.problem("missing_column", f"{label}: {column}", "a column the file lacks is read as empty")
    if not any(all(c in names for c in group) for group in needed_any):
        builder.problem("unusable_file", label, "the file has none of the columns an item id is made from")
        return
    offset = 0
    try:
        for index in range(handle.num_row_groups):
            rows = handle.read_row_group(index, columns=present).to_pylist()
            yield offset, rows
            offset += len(rows)
    except (pa.ArrowInvalid, OSError) as exc:
        builder.problem("unreadable_file", f"{label}: {_first_line(exc)}", "the file is not readable parquet")


def _jsonl_rows(builder: DatasetBuilder, path: Path, label: str, columns: list[str]) -> Iterator[tuple[int, dict]]:
    """(line index, row holding only `columns`) of a JSON-lines file, streamed line by line (files of
    hundreds of MB hold test logs the adapters do not need). Bad lines are counted and skipped."""
    with open(path, "rb") as handle:
        for index, raw in enumerate(handle):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                builder.problem("malformed_line", f"{label} line {index + 1}", "not UTF-8 text")
                continue
            except json.JSONDecodeError as exc:
                builder.problem("malformed_line", f"{label} line {index + 1}", f"invalid JSON ({exc.msg})")
                continue
            if not isinstance(row, dict):
                builder.problem("malformed_line", f"{label} line {index + 1}", "not a JSON object")
                continue
            yield index, {c: row[c] for c in columns if c in row}


def _csv_rows(builder: DatasetBuilder, path: Path, label: str, columns: list[str]) -> list[dict[str, Any]]:
    import pandas as pd

    try:
        header = pd.read_csv(path, nrows=0).columns.tolist()
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        builder.problem("unreadable_file", f"{label}: {_first_line(exc)}", "the file is not readable CSV")
        return []
    for column in columns:
        if column not in header:
            builder.problem("missing_column", f"{label}: {column}", "a column the file lacks is read as empty")
    return read_records(path, columns)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def list_files(source: FileSource, suffix: str) -> list[str]:
    """Repo-relative paths of all files ending in `suffix`: the Hub's file list (HfApi.list_repo_files), or
    the local folder (glob), or the cached snapshot when offline. Sorted; hidden folders left out."""
    if isinstance(source, LocalFolder):
        root = Path(source.root)
        found = [p.relative_to(root).as_posix() for p in root.rglob(f"*{suffix}") if p.is_file()]
        return sorted(f for f in found if not any(part.startswith(".") for part in f.split("/")))
    if isinstance(source, HubRepo):
        return sorted(f for f in _hub_files(source) if f.endswith(suffix)
                      and not any(part.startswith(".") for part in f.split("/")))
    raise InputError(f"{source.location}: a listing needs a folder or a Hub repo")  # pragma: no cover


def _hub_files(source: HubRepo) -> list[str]:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub import errors as hf_errors

    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
    try:
        if offline:
            raise hf_errors.OfflineModeIsEnabled("HF_HUB_OFFLINE is set")
        return list(HfApi().list_repo_files(source.repo_id, repo_type="dataset", revision=source.revision))
    except hf_errors.RepositoryNotFoundError:
        raise InputError(f"{source.repo_id}: no such Hub dataset (or it is private and no token is set)") from None
    except hf_errors.RevisionNotFoundError:
        raise InputError(f"{source.repo_id}: revision '{source.revision}' not found; give a commit sha, branch "
                         "or tag that exists") from None
    except Exception:  # offline, no network, server error: fall back to a cached snapshot
        pass
    try:
        folder = snapshot_download(source.repo_id, repo_type="dataset", revision=source.revision,
                                   cache_dir=source._cache_dir(), local_files_only=True)
    except Exception:
        raise HubUnavailableError(
            f"{source.repo_id}@{source.revision}: cannot list the repo's files (no network) and no snapshot is "
            "cached; run once with internet, or pass --data NAME=DIR with a folder laid out like the repo"
        ) from None
    root = Path(folder)
    source.origin = "hub-cache"
    return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]


def _record(source: FileSource, relpath: str, path: Path, rows: int | None) -> None:
    source.record(relpath, path, rows)


def _selected(spec: DatasetSpec, subsets: tuple[str, ...]) -> tuple[str, ...]:
    return subsets or spec.default_subsets or tuple(spec.files)


def _reopen(dataset: Dataset) -> FileSource:
    """The file source a loaded dataset was read from (for fetching more columns later)."""
    prov = dataset.provenance
    if prov.origin == "local-folder":
        return LocalFolder(origin=prov.origin, location=prov.location, root=Path(prov.location or "."),
                           repo_id=prov.repo_id, revision=prov.revision)
    if prov.origin == "local-file":
        return SingleFile(origin=prov.origin, location=prov.location, path=Path(prov.location or "."))
    return HubRepo(origin=prov.origin, repo_id=prov.repo_id, revision=prov.revision)


# --- subset membership from a second Hub repo (the Verified sets) --------------------------------------


def _membership(source: FileSource, spec: DatasetSpec, builder: DatasetBuilder) -> set[str] | None:
    """Instance ids of the subset named in `spec.extra['member_of']` = (flag, repo_id, revision, file).

    From the Hub: that repo at its pinned revision. From a local folder: a folder named like that repo
    (e.g. `SWE-bench_Verified/`) inside the dataset's folder or beside it, laid out like the repo. When
    it cannot be found the flag stays null and the reason is reported.
    """
    flag, repo_id, revision, relpath = spec.extra["member_of"]
    folder_name = repo_id.split("/")[-1]
    try:
        if isinstance(source, HubRepo):
            other = HubRepo(origin="hub", repo_id=repo_id, revision=revision)
            path = other.fetch(relpath)
            revision = other.revision
        elif isinstance(source, LocalFolder):
            root = Path(source.root)
            candidates = [root / folder_name / relpath, root.parent / folder_name / relpath]
            path = next((p for p in candidates if p.is_file()), None)
            if path is None:
                raise InputError(f"no {folder_name}/{relpath} inside or beside {root}")
        else:
            raise InputError("a single file has no subset membership")
    except OverlapError as exc:
        builder.problem("subset_unavailable", f"{flag}: {exc}",
                        f"{flag} is left empty; put a folder {folder_name}/ laid out like {repo_id} beside the "
                        "dataset's folder")
        return None
    try:
        rows = read_records(path, ["instance_id"], required=["instance_id"])
    except InputError as exc:
        builder.problem("subset_unavailable", f"{flag}: {exc}", f"{flag} is left empty")
        return None
    ids = {str(r["instance_id"]) for r in rows if r.get("instance_id") is not None}
    source.records.append(FileRecord(path=f"{repo_id}@{revision}/{relpath}", sha256=sha256_of(path),
                                     rows=len(rows)))
    return ids


# --- SWE-rebench-V2 and SWE-rebench-V2-PRs (key scan + lazy columns) ------------------------------------

REBENCH_KEYS = ["instance_id", "repo", "pull_number", "base_commit"]
REBENCH_LAZY = {TEXT: "problem_statement", "patch": "patch"}
REBENCH_FIELDS = (*BASE_FIELDS,)


def _rebench_identity(row: dict[str, Any], pr_column: bool) -> tuple[str | None, Any, str]:
    """(item id, PR value, where the PR came from) of a SWE-rebench row.

    V2 has no PR column (the PR is the number after the last `-` of `owner__repo-N`); the PRs set has
    `pull_number`. Without `instance_id`, the id is made from repo + PR (`owner__name-N`).
    """
    item_id = _str_or_none(row.get("instance_id"))
    if pr_column and "pull_number" in row:
        pr, field = row.get("pull_number"), "pull_number"
    else:
        parsed = parse_instance_id(item_id) if item_id else None
        pr, field = (parsed[2] if parsed else None), "instance_id"
    if item_id is None:
        repo, number = _str_or_none(row.get("repo")), parse_pr(pr)
        if repo and number is not None and canonical_repo(repo):
            item_id = instance_id_for(repo.strip(), number)
    return item_id, pr, field


def _scan_rebench(source: FileSource, spec: DatasetSpec, files: list[str], single: bool) -> Dataset:
    builder = ColumnBuilder(spec.name, REBENCH_FIELDS)
    pr_column = spec.extra.get("pr_column", False)
    wanted = [c for c in REBENCH_KEYS if pr_column or c != "pull_number"]
    needed_any = [["instance_id"], ["repo", "pull_number"]] if pr_column else [["instance_id"]]
    other_base: list[str] = []
    first_base: dict[str, str | None] = {}
    for relpath in files:
        path = source.fetch(relpath)
        label = relpath or path.name
        rows_read = 0
        for offset, rows in _parquet_groups(builder, path, label, wanted, needed_any):
            for position, row in enumerate(rows):
                item_id, pr, field = _rebench_identity(row, pr_column)
                base = normalize_base(row.get("base_commit"))
                if item_id is not None and builder.has(item_id):
                    if first_base.get(item_id) != base:
                        other_base.append(item_id)
                if add_task(builder, item_id, f"{label} row {offset + position}", repo=row.get("repo"), pr=pr,
                            base=row.get("base_commit"), pr_field=field):
                    first_base[item_id] = base
            rows_read += len(rows)
        _record(source, label, path, rows_read)
    for item_id in other_base:
        builder.problem("duplicate_id_other_base", item_id,
                        "a repeated id at another base commit: its first row is kept, the others' keys are not")
    return builder.build(source)


def load_swe_rebench_v2(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    return _scan_rebench(source, spec, [spec.files[""]], single)


def load_swe_rebench_v2_prs(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...],
                            single: bool) -> Dataset:
    files = [""] if single else list_files(source, ".parquet")
    if not files:
        raise InputError(f"{source.location or source.repo_id}: no parquet files found")
    return _scan_rebench(source, spec, files, single)


def lazy_columns(dataset: Dataset) -> dict[str, str]:
    """Item columns a dataset fetches on demand ({item column: source column}); empty for most sets."""
    try:
        spec = get_spec(dataset.provenance.adapter or dataset.name)
    except OverlapError:
        return {}
    return dict(spec.extra.get("lazy_columns", {}))


def fetch_columns(dataset: Dataset, item_ids, columns: tuple[str, ...] = (TEXT, "patch")):
    """The lazy `columns` (e.g. `text_problem_statement`, `patch`) of the given items only, as a DataFrame
    indexed by item id, read from the files the dataset was loaded from.

    Only the id columns of each row group are scanned; a row group's text columns are read only when it
    holds a wanted item. Items are found the way the key scan made them (first row of a repeated id).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    lazy = lazy_columns(dataset)
    unknown = [c for c in columns if c not in lazy]
    if unknown:
        raise InputError(f"{dataset.name}: column(s) {', '.join(unknown)} cannot be fetched later; "
                         f"fetchable: {', '.join(lazy) or 'none'}")
    wanted = {str(i) for i in item_ids}
    found: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    spec = get_spec(dataset.provenance.adapter or dataset.name)
    pr_column = spec.extra.get("pr_column", False)
    source = _reopen(dataset)
    for record in dataset.provenance.files:
        if len(found) == len(wanted) or "@" in record.path:
            continue
        path = source.fetch(record.path)
        handle = pq.ParquetFile(path)
        names = set(handle.schema_arrow.names)
        id_columns = [c for c in REBENCH_KEYS if c in names and (pr_column or c != "pull_number")]
        text_columns = [lazy[c] for c in columns if lazy[c] in names]
        for index in range(handle.num_row_groups):
            rows = handle.read_row_group(index, columns=id_columns).to_pylist()
            hits: dict[int, str] = {}
            for position, row in enumerate(rows):
                item_id = _rebench_identity(row, pr_column)[0]
                if item_id is None or item_id in seen:
                    continue
                seen.add(item_id)
                if item_id in wanted:
                    hits[position] = item_id
            if not hits or not text_columns:
                for item_id in hits.values():
                    found[item_id] = {}
                continue
            table = handle.read_row_group(index, columns=text_columns)
            taken = table.take(sorted(hits)).to_pylist()
            for position, values in zip(sorted(hits), taken, strict=True):
                found[hits[position]] = values
    by_source = {lazy[c]: c for c in columns}
    records = [{"item_id": i, **{c: None for c in columns},
                **{by_source[k]: _str_or_none(v) for k, v in found[i].items() if k in by_source}}
               for i in sorted(found)]
    frame = pd.DataFrame.from_records(records, columns=["item_id", *columns]).set_index("item_id")
    return frame.astype({c: "string" for c in columns})


def ensure_columns(dataset: Dataset, item_ids, columns: tuple[str, ...] = (TEXT, "patch")) -> int:
    """Fill the lazy `columns` of the given items in `dataset.items`, in place (fetching only items whose
    values are not there yet). Returns how many items were fetched; 0 for sets that load everything."""
    lazy = lazy_columns(dataset)
    columns = tuple(c for c in columns if c in lazy)
    if not columns:
        return 0
    items = dataset.items
    for column in columns:
        if column not in items.columns:
            items[column] = None
            items[column] = items[column].astype("string")
    wanted = set(map(str, item_ids))
    mask = items["item_id"].isin(wanted) & items[list(columns)].isna().all(axis=1)
    todo = items.loc[mask, "item_id"].tolist()
    if not todo:
        return 0
    frame = fetch_columns(dataset, todo, columns)
    position = items.index[mask & items["item_id"].isin(frame.index)]
    for column in columns:
        items.loc[position, column] = frame.loc[items.loc[position, "item_id"], column].to_numpy()
    return len(todo)


# --- Multi-SWE-bench and Multi-SWE-RL (JSON lines) ------------------------------------------------------

MSB_COLUMNS = ["instance_id", "org", "repo", "number", "base", "resolved_issues", "fix_patch"]
MSB_LANGUAGES = ("c", "cpp", "go", "java", "js", "rust", "ts")
MSB_FIELDS = (*BASE_FIELDS, TEXT, "patch")


def _issues_text(issues: Any) -> str | None:
    if not isinstance(issues, list):
        return None
    parts = []
    for issue in issues:
        if isinstance(issue, dict):
            text = "\n".join(t for t in (_str_or_none(issue.get("title")), _str_or_none(issue.get("body"))) if t)
            if text:
                parts.append(text)
    return "\n\n".join(parts) or None


def _add_msb_row(builder: ColumnBuilder, row: dict[str, Any], where: str, subset: str | None) -> None:
    org, name = _str_or_none(row.get("org")), _str_or_none(row.get("repo"))
    repo = f"{org.strip()}/{name.strip()}" if org and name else None
    number = row.get("number")
    item_id = _str_or_none(row.get("instance_id"))
    if item_id is None and org and name and parse_pr(number) is not None:
        item_id = f"{org.strip()}__{name.strip()}-{parse_pr(number)}"  # the documented `{org}__{repo}-{number}`
    base = row.get("base")
    sha = base.get("sha") if isinstance(base, dict) else None
    add_task(builder, item_id, where, repo=repo, pr=number, base=sha, pr_field="number", subset=subset,
             base_expected="base" in row,
             text_problem_statement=_issues_text(row.get("resolved_issues")),
             patch=_str_or_none(row.get("fix_patch")))


def _msb_subset(relpath: str, spec: DatasetSpec) -> str | None:
    folder = relpath.split("/", 1)[0] if "/" in relpath else None
    return spec.extra.get("folder_subsets", {}).get(folder, folder)


def load_multi_swe_bench(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    builder = ColumnBuilder(spec.name, MSB_FIELDS)
    excluded = tuple(spec.extra.get("exclude_folders", ()))
    if single:
        files = [""]
    else:
        files = [f for f in list_files(source, ".jsonl") if "/" in f and f.split("/", 1)[0] not in excluded]
        if subsets:
            files = [f for f in files if _msb_subset(f, spec) in subsets]
        if not files:
            raise InputError(f"{source.location or source.repo_id}: no <language>/*.jsonl files found"
                             + (f" for subset(s) {', '.join(subsets)}" if subsets else ""))
    for relpath in files:
        path = source.fetch(relpath)
        label = relpath or path.name
        subset = _msb_subset(relpath, spec) if relpath else None
        rows = 0
        for index, row in _jsonl_rows(builder, path, label, MSB_COLUMNS):
            _add_msb_row(builder, row, f"{label} line {index + 1}", subset)
            rows += 1
        _record(source, label, path, rows)
    return builder.build(source)


def load_multi_swe_rl_discarded(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...],
                                single: bool) -> Dataset:
    builder = ColumnBuilder(spec.name, MSB_FIELDS)
    relpath = spec.files[""]
    path = source.fetch(relpath)
    label = relpath if not single else path.name
    rows = 0
    for index, row in _jsonl_rows(builder, path, label, MSB_COLUMNS):
        _add_msb_row(builder, row, f"{label} line {index + 1}", None)
        rows += 1
    _record(source, label, path, rows)
    return builder.build(source)


# --- SWE-PolyBench (CSV) --------------------------------------------------------------------------------

POLY_COLUMNS = ["instance_id", "repo", "pull_number", "base_commit", "problem_statement", "patch"]


def load_swe_polybench(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    flag = spec.extra.get("member_of", (None,))[0]
    builder = ColumnBuilder(spec.name, (*BASE_FIELDS, TEXT, "patch", *((flag,) if flag else ())))
    relpath = spec.files[""]
    path = source.fetch(relpath)
    label = relpath if not single else path.name
    rows = _csv_rows(builder, path, label, POLY_COLUMNS)
    members = _membership(source, spec, builder) if flag else None
    for index, row in enumerate(rows):
        item_id = _str_or_none(row.get("instance_id"))
        pr, field = row.get("pull_number"), "pull_number"
        if "pull_number" not in row:  # column missing: the id's trailing number is the PR
            parsed = parse_instance_id(item_id) if item_id else None
            pr, field = (parsed[2] if parsed else None), "instance_id"
        extra = {flag: (item_id in members) if members is not None and item_id else None} if flag else {}
        add_task(builder, item_id, f"{label} row {index}", repo=row.get("repo"), pr=pr,
                 base=row.get("base_commit"), pr_field=field, text_problem_statement=_str_or_none(
                     row.get("problem_statement")), patch=_str_or_none(row.get("patch")), **extra)
    _record(source, label, path, len(rows))
    return builder.build(source)


# --- SWE-bench family (parquet) ------------------------------------------------------------------------

SWEBENCH_COLUMNS = ["instance_id", "repo", "base_commit", "problem_statement", "patch"]


def _load_swebench_like(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    """SWE-bench, SWE-bench Verified, SWE-bench Multilingual: one parquet per split; PR from the id."""
    flag = spec.extra.get("member_of", (None,))[0]
    builder = ColumnBuilder(spec.name, (*BASE_FIELDS, TEXT, "patch", *((flag,) if flag else ())))
    chosen = [("", "")] if single else [(s, spec.files[s]) for s in _selected(spec, subsets)]
    members = _membership(source, spec, builder) if flag and not single else None
    if flag and single:
        builder.problem("subset_unavailable", flag, "a single file has no subset membership")
    for split, relpath in chosen:
        path = source.fetch(relpath)
        label = relpath or path.name
        rows_read = 0
        for offset, rows in _parquet_groups(builder, path, label, SWEBENCH_COLUMNS, [["instance_id"]]):
            for position, row in enumerate(rows):
                item_id = _str_or_none(row.get("instance_id"))
                parsed = parse_instance_id(item_id) if item_id else None
                pr = parsed[2] if parsed else None
                extra = {flag: (item_id in members) if members is not None and item_id else None} if flag else {}
                add_task(builder, item_id, f"{label} row {offset + position}", repo=row.get("repo"), pr=pr,
                         base=row.get("base_commit"), pr_field="instance_id", subset=split or None,
                         text_problem_statement=_str_or_none(row.get("problem_statement")),
                         patch=_str_or_none(row.get("patch")), **extra)
            rows_read += len(rows)
        _record(source, label, path, rows_read)
    return builder.build(source)


load_swe_bench = _load_swebench_like
load_swe_bench_multilingual = _load_swebench_like


def load_swe_bench_pro(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    """SWE-bench Pro: three configs holding overlapping task lists, merged and de-duplicated by instance_id
    (`subset` = the first config that lists a task, `in_<config>` = every config that does). No PR numbers:
    only the base key is made; pairs need the same fix (see overlap.swe_report)."""
    chosen = [("", "")] if single else [(s, spec.files[s]) for s in _selected(spec, subsets)]
    flags = tuple(f"in_{s}" for s, _ in chosen if s)
    builder = ColumnBuilder(spec.name, (*BASE_FIELDS, TEXT, "patch", *flags))
    membership: dict[str, set[str]] = {}
    ids_of: dict[str, set[str]] = {}
    for config, relpath in chosen:
        path = source.fetch(relpath)
        label = relpath or path.name
        ids_of[config] = set()
        rows_read = 0
        for offset, rows in _parquet_groups(builder, path, label, SWEBENCH_COLUMNS, [["instance_id"]]):
            for position, row in enumerate(rows):
                item_id = _str_or_none(row.get("instance_id"))
                rows_read += 1
                if item_id is None:
                    builder.problem("missing_id", f"{label} row {offset + position}",
                                    "rows without an id cannot be joined or listed")
                    continue
                if item_id in ids_of[config]:
                    builder.problem("duplicate_id", item_id, "a repeated id keeps its first row")
                    continue
                ids_of[config].add(item_id)
                membership.setdefault(item_id, set()).add(config)
                if builder.has(item_id):
                    continue  # listed by an earlier config: the configs overlap by design
                add_task(builder, item_id, f"{label} row {offset + position}", repo=row.get("repo"), pr=None,
                         base=row.get("base_commit"), pr_field=None, subset=config or None,
                         text_problem_statement=_str_or_none(row.get("problem_statement")),
                         patch=_str_or_none(row.get("patch")))
        _record(source, label, path, rows_read)
    if flags:
        for flag in flags:
            config = flag[3:]
            builder.items[flag] = [config in membership.get(i, ()) for i in builder.items["item_id"]]
    return builder.build(source)


# --- registry -------------------------------------------------------------------------------------------

_PR_EXTRACTS = "→ repo_pr, repo_pr_exact, base_pr, base keys; project (canonical repo), repo, pr, base_commit"

register(
    DatasetSpec(
        name="swe-rebench-v2",
        title="SWE-rebench-V2 (training)",
        hub_repo="nebius/SWE-rebench-V2",
        revision="475dd5e8703bb5fb22dd3c60b5d038b019eba1e0",
        files={"": "data/train-00000-of-00001.parquet"},
        extracts=f"instance_id (owner__repo-PR), repo, base_commit {_PR_EXTRACTS}; key columns only, by row "
        "group; problem_statement and patch fetched later for the items that need them",
        adapter=load_swe_rebench_v2,
        aliases=("swe-rebench", "rebench-v2"),
        extra={"lazy_columns": REBENCH_LAZY},
    )
)

register(
    DatasetSpec(
        name="swe-rebench-v2-prs",
        title="SWE-rebench-V2-PRs (training; 2.7 GB of parquet)",
        hub_repo="nebius/SWE-rebench-V2-PRs",
        revision="fbf0ecf50f268d5344149e2f0097db6bede83737",
        files={"": "**/*.parquet"},
        extracts=f"instance_id, repo, pull_number, base_commit {_PR_EXTRACTS}; key columns only, by row group; "
        "problem_statement and patch fetched later for the items that need them",
        adapter=load_swe_rebench_v2_prs,
        aliases=("rebench-v2-prs",),
        notes="all parquet files of the repo (listed, not named)",
        extra={"lazy_columns": REBENCH_LAZY, "pr_column": True, "listed": True},
    )
)

register(
    DatasetSpec(
        name="multi-swe-bench",
        title="Multi-SWE-bench (benchmark; languages other than Python, + Kotlin extension)",
        hub_repo="ByteDance-Seed/Multi-SWE-bench",
        revision="56ff018c04a38e27ada1e9d0a6d5839a51f88f0d",
        files={"": "<language>/*.jsonl (python/ left out)"},
        extracts=f"org/repo, number, base.sha {_PR_EXTRACTS}; resolved_issues title+body; fix_patch; "
        "subset = language folder (kotlin/ = kotlin_ext)",
        adapter=load_multi_swe_bench,
        aliases=("msb", "bytedance-seed/multi-swe-bench"),
        detect=("org", "number", "base", "fix_patch", "resolved_issues"),
        notes="python/ is a copy of SWE-bench Verified and is left out",
        extra={"subset_values": (*MSB_LANGUAGES, "kotlin_ext"), "exclude_folders": ("python",),
               "folder_subsets": {"kotlin": "kotlin_ext"}, "listed": True},
    )
)

register(
    DatasetSpec(
        name="multi-swe-rl-discarded",
        title="Multi-SWE-RL, PRs discarded by Multi-SWE-bench's pipeline (reference set)",
        hub_repo="ByteDance-Seed/Multi-SWE-RL",
        revision="9777648932daa214ba18c70c81e85821b5836f32",
        files={"": "data_20240601_20250331/multi_swe_bench_discarded_instances.jsonl"},
        extracts=f"org/repo, number (base.sha, fix_patch when present) {_PR_EXTRACTS}",
        adapter=load_multi_swe_rl_discarded,
        aliases=("msb-discarded",),
    )
)

POLY_VERIFIED = ("in_verified", "AmazonScience/SWE-PolyBench_Verified", "b3fca77b637379f0c01ad86d18753a7ac1998b53",
                 "test.csv")

register(
    DatasetSpec(
        name="swe-polybench",
        title="SWE-PolyBench (benchmark; in_verified from SWE-PolyBench_Verified)",
        hub_repo="AmazonScience/SWE-PolyBench",
        revision="d56445f9940eae4e9d2974ec66820c2f1d7754e6",
        files={"": "test.csv"},
        extracts=f"instance_id, repo, pull_number (int or float), base_commit {_PR_EXTRACTS}; problem_statement; "
        "patch; in_verified (SWE-PolyBench_Verified@b3fca77b test.csv)",
        adapter=load_swe_polybench,
        aliases=("polybench", "amazonscience/swe-polybench"),
        notes="in_verified needs SWE-PolyBench_Verified: from the Hub, or a folder SWE-PolyBench_Verified/ "
        "beside (or inside) the local folder",
        extra={"member_of": POLY_VERIFIED},
    )
)

register(
    DatasetSpec(
        name="swe-polybench-verified",
        title="SWE-PolyBench Verified (benchmark; subset of swe-polybench)",
        hub_repo="AmazonScience/SWE-PolyBench_Verified",
        revision="b3fca77b637379f0c01ad86d18753a7ac1998b53",
        files={"": "test.csv"},
        extracts=f"as swe-polybench {_PR_EXTRACTS}",
        adapter=load_swe_polybench,
        aliases=("polybench-verified",),
        extra={"subset_of": "swe-polybench"},
    )
)

register(
    DatasetSpec(
        name="swe-bench-multilingual",
        title="SWE-bench Multilingual (benchmark; repo names all lowercase)",
        hub_repo="SWE-bench/SWE-bench_Multilingual",
        revision="846e647b9f33c0b51b739d005d13d85493c9af09",
        files={"": "data/test-00000-of-00001.parquet"},
        extracts=f"instance_id (PR = trailing number), repo (lowercase), base_commit {_PR_EXTRACTS}; "
        "problem_statement; patch",
        adapter=load_swe_bench_multilingual,
        aliases=("multilingual", "swe-bench/swe-bench_multilingual"),
    )
)

SWEBENCH_VERIFIED = ("in_verified", "SWE-bench/SWE-bench_Verified", "78f471bf655a3137b2e8a75af1501690ec009ec3",
                     "data/test-00000-of-00001.parquet")

register(
    DatasetSpec(
        name="swe-bench",
        title="SWE-bench (benchmark; split test, dev selectable; in_verified from SWE-bench_Verified)",
        hub_repo="SWE-bench/SWE-bench",
        # DATASETS.md gives "c6fe717f…"; the full sha is the one several public projects pin for this repo.
        revision="c6fe717fd7a4c3ac1daa4055a4fd082c6a1d28a2",
        files={"test": "data/test-00000-of-00001.parquet", "dev": "data/dev-00000-of-00001.parquet"},
        extracts=f"instance_id (PR = trailing number), repo, base_commit {_PR_EXTRACTS}; problem_statement; "
        "patch; in_verified (SWE-bench_Verified test)",
        adapter=load_swe_bench,
        aliases=("swebench", "swe-bench/swe-bench"),
        default_subsets=("test",),
        detect=("instance_id", "base_commit", "environment_setup_commit", "version"),
        notes="in_verified needs SWE-bench_Verified: from the Hub, or a folder "
        "SWE-bench_Verified/ beside (or inside) the local folder",
        extra={"member_of": SWEBENCH_VERIFIED},
    )
)

register(
    DatasetSpec(
        name="swe-bench-verified",
        title="SWE-bench Verified (benchmark; subset of swe-bench test)",
        hub_repo="SWE-bench/SWE-bench_Verified",
        # DATASETS.md gives "78f471bf…"; the full sha is the one several public projects pin for this repo.
        revision="78f471bf655a3137b2e8a75af1501690ec009ec3",
        files={"": "data/test-00000-of-00001.parquet"},
        extracts=f"as swe-bench {_PR_EXTRACTS}",
        adapter=load_swe_bench,
        aliases=("swebench-verified",),
        extra={"subset_of": "swe-bench"},
    )
)

register(
    DatasetSpec(
        name="swe-bench-pro",
        title="SWE-bench Pro (benchmark; configs default, hard, v1 merged by instance_id; no PR numbers)",
        hub_repo="ScaleAI/SWE-bench_Pro",
        # DATASETS.md gives "2d52cb3d…"; the full sha is the one several public projects pin for this repo.
        revision="2d52cb3df914a3fcf80c7f66738b3a88ae37fc50",
        files={"default": "data/default/test-00000-of-00001.parquet",
               "hard": "data/hard/test-00000-of-00001.parquet",
               "v1": "data/v1/test-00000-of-00001.parquet"},
        extracts="instance_id, repo, base_commit → base key only (no PR number); project, repo; "
        "problem_statement; patch (pairs need the same fix); in_<config> flags",
        adapter=load_swe_bench_pro,
        aliases=("swebench-pro", "scaleai/swe-bench_pro"),
        detect=("instance_id", "base_commit", "requirements", "interface"),
    )
)
