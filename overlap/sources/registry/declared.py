"""The one way a dataset is read: a declaration (built-in or the user's) says which columns give what
(`[columns]`), which files hold which subset (`[files]`, or a folder per subset), and, for the little that cell
values cannot say, names a row transform (`transform`, `overlap.sources.rows.transforms`). The rows are streamed by
`overlap.sources.formats.batches`, keys come from `overlap.ids.recognise`, and `generic.assemble` counts problems and
repeats, the same for every dataset.

    read_declared(LocalFolder(...), get_spec("swe-bench"), ("test",), single=False)
"""

from __future__ import annotations

import glob
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...errors import InputError, OverlapError
from ...model import Dataset, FileRecord, Problem, Provenance
from ..formats.batches import BatchSource
from ..formats.json_rows import BAD_LINES
from ..formats.whole_file import read_records
from ..places.files import FileSource, HubRepo, LocalFolder, NamedFiles, SingleFile, sha256_of
from ..places.listing import list_files
from ..places.naming import DataFile
from ..places.streams import refuse_lfs_pointer, refuse_non_utf8_path
from ..rows.columns import GenericColumns
from ..rows.generic import assemble, read_generic, scan_keys
from ..rows.transform_rows import transform_of
from ..rows.transforms import Counted
from ..spec import DatasetSpec


def read_declared(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    """The Dataset `spec` declares, read from `source` (the Hub repo, a folder laid out like it, or one file
    standing for its one file), with the subsets asked for (empty: the declaration's defaults, else all).
    How the ids were read (`dataset.recognition`) is reported for what the user brought; a built-in
    dataset's is known (`dataset.ids_known`)."""
    dataset = _read(source, spec, subsets, single)
    dataset.ids_known = spec.builtin  # type: ignore[attr-defined]
    return dataset


# Fields of `extra` that change nothing of how rows become items and keys (the filter's verifier, the text
# field, per-item files, GitHub pins, the family): a declaration with any other is read whole.
_KEY_NEUTRAL_EXTRA = ("key_columns", "text_field", "item_files", "item_path", "sha256", "subset_of")


def streamable_columns(spec: DatasetSpec) -> GenericColumns | None:
    """The columns `spec` is read by, when they alone make its items and keys and name nothing a streamed key
    join leaves unread (`overlap.keyjoin.stream_train`): no transform, item fields, subsets named by cell
    values, membership flag or other reading option in `extra`, and no text or patch column (the text check and
    the fix join read every row's). Else None: the dataset is read whole."""
    if spec.adapter != "columns" or any(key not in _KEY_NEUTRAL_EXTRA for key in spec.extra):
        return None
    columns = GenericColumns.of(spec.columns)
    if columns.text or columns.patch:
        return None
    return columns


def read_in_place(source: FileSource, spec: DatasetSpec, single: bool) -> tuple[Any, str | None] | None:
    """(what to read, split) when `read_declared` reads the dataset as one source by its columns: one local
    file (`single`), or one file or split read in place (`_parts` is None: a folder, a glob, a Hub split);
    None when it names files or subsets of its own, or lives where only the declared reader goes (GitHub)."""
    if single:
        return (source.path, None) if isinstance(source, SingleFile) and source.path.is_file() else None
    if reads_files(spec) or not isinstance(source, (HubRepo, LocalFolder)):
        return None
    return _where(source, spec), spec.split


def _read(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    columns = GenericColumns.of(spec.columns)
    fields = spec.extra.get("item_fields")
    if fields:
        columns = replace(columns, item_fields=tuple(fields.items()))
    transform = transform_of(spec)
    parts = _parts(source, spec, subsets, single)
    if parts is None:  # one data file or split: read in place (the Hub by ranged reads)
        dataset = read_generic(_where(source, spec), columns, split=spec.split, name=spec.name)
        dataset.provenance.adapter = spec.name
        _membership_flag(dataset, source, spec, single)
        return dataset
    wanted = _read_columns(spec, columns)
    problems = Counted()
    usable = _usable(parts, wanted, columns, problems, made=transform is not None)
    if not usable:
        reasons = "; ".join(f"{p.what}: {p.example}" for p in problems)
        raise InputError(f"{spec.name}: no usable rows ({reasons}); check the files and their columns")
    files = [DataFile(path=str(path), name=label) for _, label, path in usable]
    subset_of = {label: subset for subset, label, _ in parts}
    provenance = Provenance(name=spec.name, origin=source.origin, repo_id=source.repo_id, revision=source.revision,
                            location=source.location, adapter=spec.name)
    id_optional = len(parts) > 1 or bool(columns.repo and columns.pr)  # a file may lack it, or the id is made
    batches = BatchSource(spec.name, files, wanted, tuple(c for c in wanted if c != columns.id or id_optional),
                          provenance=provenance)
    bad_lines: list[str] = []
    token = BAD_LINES.set(bad_lines if spec.extra.get("bad_lines") == "count" else None)
    try:
        scan = scan_keys(batches, columns, transform=transform.rows if transform else None,
                         subset_of=lambda data_file: subset_of[data_file.name])
    finally:
        BAD_LINES.reset(token)
    found = [*problems, *(transform.problems if transform else ())]
    dataset = assemble(scan, columns, spec.name, problems=found)
    if bad_lines:  # they stand as rows without an id: counted as what they are instead
        dataset.problems = _recount(dataset.problems, "missing_id", len(bad_lines),
                                    Problem("malformed_line", len(bad_lines), bad_lines[0], "not a JSON object"))
    if transform and transform.unread:
        dataset.problems = _recount(dataset.problems, "missing_id", len(transform.unread),
                                    Problem(transform.unread_as, len(transform.unread), transform.unread[0],
                                            transform.unread_detail))
    read = {f.path: f for f in provenance.files}
    source.records.extend(read.get(label) or FileRecord(path=label, sha256=sha256_of(path), rows=_rows(path))
                          for _, label, path in parts)
    dataset.provenance.files = list(source.records)
    if transform and transform.finish:
        transform.finish(dataset)
    if subsets and spec.extra.get("subset_values"):
        dataset = _only_subsets(dataset, subsets)
    _membership_flag(dataset, source, spec, single)
    return dataset


def _only_subsets(dataset: Dataset, subsets: tuple[str, ...]) -> Dataset:
    """The items of the subsets asked for, where a cell value names the subset (rows of the others were read,
    so positions stay those of the file)."""
    keep = dataset.items["subset"].isin(subsets).fillna(False).astype(bool)
    dataset.items = dataset.items[keep].reset_index(drop=True)
    chosen = set(dataset.items["item_id"])
    dataset.keys = dataset.keys[dataset.keys["item_id"].isin(chosen)].reset_index(drop=True)
    if dataset.repeats is not None:
        dataset.repeats = dataset.repeats[dataset.repeats["item_id"].isin(chosen)].reset_index(drop=True)
    return dataset


def _rows(path) -> int | None:
    """Rows of a file left unread (an unusable parquet file: its footer says)."""
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception:  # noqa: BLE001 - not parquet, or unreadable: the count is unknown
        return None


def _recount(problems: list[Problem], what: str, fewer: int, new: Problem) -> list[Problem]:
    out = [p if p.what != what else Problem(p.what, p.count - fewer, p.example, p.detail) for p in problems]
    return sorted([p for p in out if p.count > 0] + [new], key=lambda p: p.what)


def _usable(parts, wanted: list[str], columns: GenericColumns, problems: Counted, *, made: bool = False):
    """The parts whose parquet files have the columns an item is made from (the id, or a repo and a PR), each
    wanted column a file lacks counted (`missing_column`: read as empty), a file with no way to an item
    counted (`unusable_file`) and left out (`made`: a transform makes the id from the columns read, so one of
    them is enough). Other formats are read as they come (their columns show while read)."""
    kept = []
    for part in parts:
        label, path = part[1], part[2]
        if not str(path).lower().endswith(".parquet"):
            kept.append(part)
            continue
        refuse_non_utf8_path(path, label)
        refuse_lfs_pointer(str(path), label)  # never a side file: the clone lacks its data, counting it hid that
        try:
            names = set(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            reason = str(exc).splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            if len(parts) == 1:  # the dataset's one file: nothing to go on with
                raise InputError(f"{label}: no usable rows (unreadable_file: cannot read parquet ({reason})); is the "
                                 "file complete?") from None
            problems.note("unreadable_file", f"{label}: {reason}", "the file is not readable parquet")
            continue

        def has(column: str | None, names: set[str] = names) -> bool:
            return bool(column) and (column in names or column.split(".")[0] in names)

        for column in wanted:
            if not has(column):
                problems.note("missing_column", f"{label}: {column}", "a column the file lacks is read as empty")
        if has(columns.id) or (has(columns.repo) and has(columns.pr)) or (made and any(map(has, wanted))):
            kept.append(part)
        else:
            problems.note("unusable_file", label, "the file has none of the columns an item id is made from")
    return kept


def reads_files(spec: DatasetSpec) -> bool:
    """Whether `spec` names its files (by subset, subset folder, listing or one path), so a written split of it,
    laid out the same, is read back by `read_declared`; else it is read in place (a glob, a Hub split)."""
    if spec.adapter != "columns":
        return True
    return bool([s for s in spec.files if s] or spec.extra.get("subset_folders") or spec.extra.get("files_glob")
                or (spec.files.get("") and not glob.has_magic(spec.files[""])))


def _where(source: FileSource, spec: DatasetSpec) -> Any:
    if isinstance(source, HubRepo):
        return f"{source.repo_id}@{source.revision}" if source.revision else source.repo_id
    if isinstance(source, LocalFolder):
        return source.root
    if isinstance(source, SingleFile):
        return source.path
    if isinstance(source, NamedFiles) and source.origin == "local-glob":  # `path = "shards/*.parquet"`
        return source.location
    raise InputError(f"{spec.origin or spec.name}: a declared dataset is read from the Hub or local files, "
                     f"not {source.origin}")


def _read_columns(spec: DatasetSpec, columns: GenericColumns) -> list[str]:
    """The columns read from the files: a transform's own inputs, else those `[columns]` names."""
    wanted = spec.extra.get("read_columns")
    return list(wanted) if wanted else columns.wanted()


def _parts(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...],
           single: bool) -> list[tuple[str | None, str, Path]] | None:
    """(subset, label, local path) of every file to read, in order; None when the dataset is one file or split
    read in place."""
    if single:
        path = source.fetch("")
        return [(None, path.name, path)]
    named = [s for s in spec.files if s]
    if named:
        chosen = subsets or spec.default_subsets or tuple(named)
        unknown = [s for s in chosen if s not in spec.files]
        if unknown:
            raise InputError(f"{spec.name}: no subset {unknown[0]!r}; subsets: {', '.join(named)}")
        return [(s, spec.files[s], source.fetch(spec.files[s])) for s in chosen]
    folders = spec.extra.get("subset_folders")
    if folders:
        return _folder_parts(source, spec, subsets)
    pattern = spec.extra.get("files_glob")
    if reads_files(spec):
        listed = list_files(source, pattern) if pattern else [spec.files[""]]
        if not listed:
            raise InputError(f"{source.location or source.repo_id}: no {pattern} files found")
        return [(None, rel, source.fetch(rel)) for rel in listed]
    return None


def _folder_parts(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...]):
    """Files in subset folders (`<root>/<subset>/*.<suffix>`): the folder names the subset (renamed by
    `extra.folder_subsets`), files directly in the root and excluded folders are left out."""
    suffix = spec.extra["subset_folders"]
    root = spec.extra.get("root")
    excluded = set(spec.extra.get("exclude_folders", ()))
    renamed = spec.extra.get("folder_subsets", {})

    def subset_of(rel: str) -> str | None:
        """The subset a file is read for, None when it is left out."""
        below = rel[len(root) + 1:] if root and rel.startswith(root + "/") else (None if root else rel)
        if below is None or "/" not in below or below.split("/", 1)[0] in excluded:
            return None
        folder = below.split("/", 1)[0]
        subset = renamed.get(folder, folder)
        return subset if not subsets or subset in subsets else None

    # only the files read are listed (and, from an offline cache, checked whole): a side file never stops a read
    parts = [(subset_of(rel), rel, source.fetch(rel))
             for rel in list_files(source, suffix, keep=lambda rel: subset_of(rel) is not None)]
    if not parts:
        where = f"{root}/<subset>" if root else "<subset>"
        raise InputError(f"{source.location or source.repo_id}: no {where}/*{suffix} files found"
                         + (f" for subset(s) {', '.join(subsets)}" if subsets else ""))
    return parts


def member_places(member_of, root: Path) -> list[Path]:
    """Where a local folder's subset membership file (`extra.member_of` = flag, repo, revision, file) is looked
    for, in order: a folder named like that repo inside the dataset's folder, then beside it."""
    _, repo_id, _, relpath = member_of
    name = str(repo_id).split("/")[-1]
    return [root / name / str(relpath), root.parent / name / str(relpath)]


def _membership_flag(dataset: Dataset, source: FileSource, spec: DatasetSpec, single: bool) -> None:
    """The flag column of a subset declared in `extra.member_of` = (flag, repo, revision, file), e.g.
    `in_verified`: from the Hub at its pinned revision, or a folder named like that repo inside or beside the
    dataset's folder. When it cannot be read the flag stays null and the reason is a problem."""
    member_of = spec.extra.get("member_of")
    if not member_of:
        return
    flag, repo_id, revision, relpath = member_of
    folder_name = repo_id.split("/")[-1]
    try:
        if isinstance(source, HubRepo):
            other = HubRepo(origin="hub", repo_id=repo_id, revision=revision)
            path = other.fetch(relpath)
            revision = other.revision
        elif isinstance(source, LocalFolder) and not single:
            root = Path(source.root)
            path = next((p for p in member_places(member_of, root) if p.is_file()), None)
            if path is None:
                raise InputError(f"no {folder_name}/{relpath} inside or beside {root}")
        else:
            raise InputError("a single file has no subset membership")
        rows = read_records(path, ["instance_id"], required=["instance_id"])
    except OverlapError as exc:
        detail = f"{flag} is left empty; put a folder {folder_name}/ laid out like {repo_id} beside the " \
                 "dataset's folder"
        example = flag if "single file" in str(exc) else f"{flag}: {exc}"
        dataset.problems = sorted([*dataset.problems, Problem("subset_unavailable", 1, example, detail)],
                                  key=lambda p: p.what)
        return
    members = {str(r["instance_id"]) for r in rows if r.get("instance_id") is not None}
    dataset.items[flag] = dataset.items["item_id"].isin(members)
    dataset.provenance.files.insert(0, FileRecord(path=f"{repo_id}@{revision}/{relpath}", sha256=sha256_of(path),
                                                  rows=len(rows)))
