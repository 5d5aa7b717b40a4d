"""What a training set looks like without a benchmark's tasks: the filtered split, its removed rows with
reasons, and the clean/contaminated id lists of each benchmark.

Reasons (every dropped row carries at least one, `;`-joined in `removed.csv`):

- `id:<kind>`  the train item shares a canonical key of that kind with a bench item (`id:ossfuzz`, ...);
- `fix`        a pair's kinds include `fix`, or its `fix_relation` column says the fixes are the same
               (identical / contains / contained);
- `dup:<kind>` an extra copy of one bug inside the training set (items sharing a canonical key). One copy
               of each group is kept: the first copy in source order that no other active reason drops.
               When every copy is dropped for other reasons, none is kept and every copy after the first
               also carries `dup:<kind>`;
- `ngram:<n>`, `spec:harness` (only when asked for) train items flagged by a column of that name with
               `:` written `_` (`ngram_13`, `spec_harness`) in the pairs or the train items, or passed in
               `flagged={reason: ids}`. Asking for one that nothing provides is an InputError.

Rows of the source the adapter did not turn into items (no id, a repeated id, outside a selected subset)
are kept and counted. Kept rows + removed rows = source rows, always.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError, OverlapError
from .atomic import atomic_folder
from .report import dumps_json, to_csv_text

DEFAULT_REASONS = ("id", "fix", "dup")
FIX_RELATIONS = ("identical", "contains", "contained")
_REASON_RE = re.compile(r"^(id|fix|dup|id:[a-z0-9_]+|ngram:\d+|spec:[a-z0-9_]+)$")
REMOVED_COLUMNS = ["row", "file", "item_id", "reasons", "bench_ids"]


@dataclass
class FilterResult:
    """The rows to drop from a training set and why (no data read yet; see `read_split`)."""

    train: str
    reasons_asked: tuple[str, ...]
    removed: pd.DataFrame  # REMOVED_COLUMNS, one row per dropped item, by source row
    source_rows: int  # rows of the source files, as recorded in the provenance
    items: int  # rows the adapter turned into items
    counts: dict[str, int] = field(default_factory=dict)  # dropped rows per reason (a row can have several)

    @property
    def kept_rows(self) -> int:
        return self.source_rows - len(self.removed)

    @property
    def rows_without_item(self) -> int:
        """Source rows that are not items (no id, repeated id, outside the subset): always kept."""
        return self.source_rows - self.items

    def summary(self) -> dict[str, Any]:
        return {
            "train": self.train,
            "reasons_asked": list(self.reasons_asked),
            "source_rows": self.source_rows,
            "items": self.items,
            "rows_without_item_kept": self.rows_without_item,
            "removed_rows": len(self.removed),
            "kept_rows": self.kept_rows,
            "removed_by_reason": dict(sorted(self.counts.items())),
        }


def check_reasons(reasons: Iterable[str]) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(r.strip().lower() for r in reasons if r.strip()))
    bad = [r for r in out if not _REASON_RE.match(r)]
    if bad:
        raise InputError(f"unknown drop reason '{bad[0]}'; use id, id:<kind>, fix, dup, ngram:<n> or spec:harness")
    if not out:
        raise InputError("no drop reason given; use e.g. --drop id --drop dup")
    return out


def _id_active(reasons: tuple[str, ...], kind: str) -> bool:
    return "id" in reasons or f"id:{kind}" in reasons


def _fix_pair(row: Mapping[str, Any], has_relation: bool) -> bool:
    kinds = str(row.get("kinds") or "").split(";")
    return "fix" in kinds or (has_relation and str(row.get("fix_relation")) in FIX_RELATIONS)


def _truthy(series: pd.Series) -> pd.Series:
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.fillna(0).astype(float) > 0
    return series.astype("string").str.lower().isin(["true", "1", "yes"]).fillna(False)


def _flagged_by_columns(reason: str, pairs: pd.DataFrame, items: pd.DataFrame) -> set[str] | None:
    """Train ids flagged by a `<family>_<arg>` column of the pairs or the train items (None: no column)."""
    column = reason.replace(":", "_")
    found: set[str] | None = None
    if column in pairs.columns:
        found = set(pairs.loc[_truthy(pairs[column]), "train_id"])
    if column in items.columns:
        found = (found or set()) | set(items.loc[_truthy(items[column]), "item_id"])
    return found


def _duplicate_components(dups: pd.DataFrame) -> list[tuple[list[str], dict[str, set[str]]]]:
    """Connected groups of train items sharing a key (transitively), with the kinds each item shared."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    kinds: dict[str, set[str]] = {}
    for group in dups.itertuples(index=False):
        ids = str(group.item_ids).split(";")
        for item in ids:
            kinds.setdefault(item, set()).add(str(group.kind))
            parent[find(item)] = find(ids[0])
    components: dict[str, list[str]] = {}
    for item in kinds:
        components.setdefault(find(item), []).append(item)
    return [(members, kinds) for members in components.values()]


def filter_split(result, reasons: Iterable[str] = DEFAULT_REASONS, *,
                 flagged: Mapping[str, Iterable[str]] | None = None) -> FilterResult:
    """Decide which training rows to drop for a `CompareResult` (all its benchmarks) and why."""
    asked = check_reasons(reasons)
    train = result.train
    items = train.items
    pairs = result.pairs
    why: dict[str, set[str]] = {}
    benches: dict[str, set[str]] = {}

    def drop(item_id: str, reason: str, bench_id: str | None = None) -> None:
        why.setdefault(item_id, set()).add(reason)
        if bench_id is not None:
            benches.setdefault(item_id, set()).add(bench_id)

    has_relation = "fix_relation" in pairs.columns
    for row in pairs.to_dict(orient="records"):
        bench_ref = f"{row['bench']}:{row['bench_id']}" if len(result.benches) > 1 else str(row["bench_id"])
        for kind in str(row["kinds"]).split(";"):
            if kind and kind != "fix" and _id_active(asked, kind):
                drop(row["train_id"], f"id:{kind}", bench_ref)
        if "fix" in asked and _fix_pair(row, has_relation):
            drop(row["train_id"], "fix", bench_ref)

    for reason in (r for r in asked if r.startswith(("ngram:", "spec:"))):
        given = (flagged or {}).get(reason)
        found = _flagged_by_columns(reason, pairs, items)
        if given is None and found is None:
            column = reason.replace(":", "_")
            raise InputError(f"drop reason '{reason}' asked for, but the result has no '{column}' column; run "
                             "the check that provides it first, or leave the reason out")
        for item_id in set(given or ()) | (found or set()):
            drop(str(item_id), reason)

    if "dup" in asked:
        row_of = items.set_index("item_id")["row"]
        for members, kinds in _duplicate_components(result.train_duplicates):
            ordered = sorted(members, key=lambda i: row_of[i])
            free = [i for i in ordered if i not in why]
            keep = free[0] if free else ordered[0]
            for item_id in ordered:
                if item_id != keep:
                    for kind in sorted(kinds[item_id]):
                        drop(item_id, f"dup:{kind}")

    located = items.set_index("item_id")
    records = [
        {
            "row": int(located.at[item_id, "row"]),
            "file": located.at[item_id, "file"] if "file" in located.columns else None,
            "item_id": item_id,
            "reasons": ";".join(sorted(reasons_of)),
            "bench_ids": ";".join(sorted(benches.get(item_id, ()))),
        }
        for item_id, reasons_of in why.items()
    ]
    removed = pd.DataFrame.from_records(records, columns=REMOVED_COLUMNS).sort_values("row", kind="stable")
    counts: dict[str, int] = {}
    for reasons_of in why.values():
        for reason in reasons_of:
            counts[reason] = counts.get(reason, 0) + 1
    source_rows = sum(int(f.rows or 0) for f in train.provenance.files)
    if source_rows < len(items):
        raise InputError(f"{train.name}: the provenance records {source_rows} source rows but there are "
                         f"{len(items)} items; the adapter did not record its files' row counts")
    return FilterResult(train.name, asked, removed.reset_index(drop=True), source_rows, len(items), counts)


# --- reading the original rows ----------------------------------------------------------------------


def _source_of(dataset):
    """The FileSource the dataset was read from, or one rebuilt from its provenance via the registry."""
    if getattr(dataset, "source", None) is not None:
        return dataset.source
    from ..sources.files import SingleFile
    from ..sources.load import open_source
    from ..sources.registry import get_spec

    prov = dataset.provenance
    if prov.origin == "local-file":
        return SingleFile(origin="local-file", location=prov.location, path=Path(prov.location))
    if prov.adapter is None:
        raise InputError(f"{dataset.name}: the provenance names no adapter; cannot re-read its source rows")
    local = Path(prov.location) if prov.origin == "local-folder" and prov.location else None
    source, _ = open_source(get_spec(prov.adapter), prov.revision, local)
    return source


def _read_table(path: Path):
    """All columns of one data file as an Arrow table, row for row as the adapters count them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pq.read_table(path)
    if suffix == ".csv":
        import pyarrow.csv as pcsv

        # Every column as text, as the adapters read CSV: the filtered copy keeps the values as written.
        header = pcsv.read_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 16)).column_names
        options = pcsv.ConvertOptions(column_types={c: pa.string() for c in header})
        return pcsv.read_csv(path, convert_options=options)
    from ..sources.files import read_json_rows  # the adapters' own JSON reader: same rows, same count

    return pa.Table.from_pylist(read_json_rows(path))


def read_source_table(dataset):
    """The source files of a dataset concatenated in the order read, checked against the provenance."""
    import pyarrow as pa

    from ..sources.files import sha256_of

    source = _source_of(dataset)
    tables = []
    for record in dataset.provenance.files:
        path = source.fetch(record.path)
        if sha256_of(path) != record.sha256:
            raise InputError(f"{path}: changed since it was compared (sha256 differs from the provenance); "
                             "run the compare again")
        table = _read_table(path)
        if record.rows is not None and table.num_rows != record.rows:
            raise InputError(f"{path}: {table.num_rows} rows re-read but {record.rows} recorded; cannot take "
                             "rows back by position")
        tables.append(table)
    if not tables:
        raise InputError(f"{dataset.name}: the provenance lists no files to re-read")
    return pa.concat_tables(tables, promote_options="default")


def kept_table(result, filtered: FilterResult):
    """The original rows (all columns) without the removed ones, in source order."""
    import pyarrow as pa

    table = read_source_table(result.train)
    drop = set(filtered.removed["row"].tolist())
    keep = [i for i in range(table.num_rows) if i not in drop]
    out = table.take(pa.array(keep, type=pa.int64()))
    if out.num_rows + len(filtered.removed) != table.num_rows:
        raise InputError(f"{result.train.name}: removed rows point outside the source; run the compare again")
    return out


def write_split(result, filtered: FilterResult, out: Path) -> Path:
    """Write `<train>.parquet` (kept rows, all columns), `removed.csv`, `filter.json` and the bench id
    lists into the folder `out`, atomically."""
    import pyarrow.parquet as pq

    table = kept_table(result, filtered)
    info = filtered.summary() | {"provenance": result.train.provenance.to_dict(), "parquet": "train.parquet"}
    with atomic_folder(out) as tmp:
        pq.write_table(table, tmp / "train.parquet", compression="zstd")
        (tmp / "removed.csv").write_text(to_csv_text(filtered.removed), encoding="utf-8")
        (tmp / "filter.json").write_text(dumps_json(info), encoding="utf-8")
        for name, text in bench_lists(result).items():
            (tmp / name).write_text(text, encoding="utf-8")
    return Path(out)


# --- benchmark lists ----------------------------------------------------------------------------------


def bench_lists(result) -> dict[str, str]:
    """`<bench>_clean_ids.txt` and `<bench>_contaminated_ids.txt` for every benchmark (file name → text).

    The bench name is always in the file name, one benchmark or many, so lists from different runs never
    collide. Contaminated = in a pair of the normalised join; clean = the rest; both in source order.
    """
    out = {}
    for comp in result.benches:
        matched = set(comp.pairs["bench_id"])
        ordered = comp.bench.items.sort_values("row")["item_id"].tolist()
        out[f"{comp.bench.name}_clean_ids.txt"] = "".join(f"{i}\n" for i in ordered if i not in matched)
        out[f"{comp.bench.name}_contaminated_ids.txt"] = "".join(f"{i}\n" for i in ordered if i in matched)
    return out


# --- publishing -----------------------------------------------------------------------------------------


def _hub_api(token: str | None):
    from huggingface_hub import HfApi

    return HfApi(token=token)


def _push_with_datasets(table, repo_id: str, config_name: str, token: str, description: str) -> Any:
    import datasets

    ds = datasets.Dataset(datasets.table.InMemoryTable(table))
    return ds.push_to_hub(repo_id, config_name=config_name, token=token, create_pr=True,
                          commit_message=f"overlap: add config {config_name}", commit_description=description)


def check_write_access(api, repo_id: str, repo_type: str = "dataset") -> None:
    """Refuse (exit 2) before any upload when there is no token, the token is read-only, or the repo does
    not exist: pushing must either open a whole PR or leave the Hub untouched."""
    from huggingface_hub import errors as hf_errors

    if not getattr(api, "token", None):
        from huggingface_hub import get_token

        api.token = get_token()
    if not api.token:
        raise OverlapError("no Hugging Face token: run `hf auth login` or set HF_TOKEN, then push again")
    try:
        who = api.whoami()
        api.repo_info(repo_id, repo_type=repo_type)
    except hf_errors.RepositoryNotFoundError:
        raise OverlapError(f"{repo_id}: no such Hub {repo_type} repo, or this token cannot see it") from None
    except hf_errors.HfHubHTTPError as exc:
        raise OverlapError(f"{repo_id}: the Hub refused the token ({_status(exc)}); check it has write access") \
            from None
    role = ((who or {}).get("auth") or {}).get("accessToken", {}).get("role")
    if role == "read":
        raise OverlapError(f"{repo_id}: the token is read-only; create a token with write access")


def _status(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    return f"HTTP {response.status_code}" if response is not None else type(exc).__name__


def check_config_name(config_name: str) -> None:
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", config_name or ""):
        raise InputError(f"--config {config_name!r}: give a config name such as minus-cybergym")


def push_split(result, filtered: FilterResult, repo_id: str, config_name: str, *, token: str | None = None,
               api=None) -> str:
    """Publish the filtered split as config `config_name` of `repo_id` in one pull request (never the main
    branch). Returns the PR URL. No token / no access → OverlapError (exit 2) before anything is sent."""
    from huggingface_hub import errors as hf_errors

    check_config_name(config_name)
    api = api or _hub_api(token)
    check_write_access(api, repo_id)
    table = kept_table(result, filtered)
    prov = result.train.provenance
    description = (f"Rows of {prov.repo_id or prov.name}@{prov.revision or 'local'} without the "
                   f"{len(filtered.removed)} rows that overlap {', '.join(b.bench.name for b in result.benches)} "
                   f"(reasons: {', '.join(filtered.reasons_asked)}). Written by overlap filter.\n\n"
                   + dumps_json(filtered.summary() | {"provenance": prov.to_dict()}))
    try:
        info = _push_with_datasets(table, repo_id, config_name, api.token, description)
    except hf_errors.HfHubHTTPError as exc:
        raise OverlapError(f"{repo_id}: push refused ({_status(exc)}); nothing was merged, check write access") \
            from None
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", "") or info)
