"""Record batches of any dataset, streamed with column projection: a local file, a folder (its data files,
recursively), a glob, or a Hub dataset `owner/name[:config][@revision]`.

Over 400 lines on purpose: every input form (file, folder, glob, Hub) goes through one projection path.

    source = open_batches("me/my-rl-mix@main", ["extra_info.instance_id", "repo"], split="train")
    for batch in source:          # pyarrow.RecordBatch, columns named as asked (dotted names kept)
        ...
    source.provenance             # Hub id, the revision as a commit sha, files read with sha256 and rows

Formats: `.parquet`, `.jsonl`, `.json` (JSON lines or one JSON array), `.csv`, each also `.gz` / `.zst`
compressed. Parquet is read one row group at a time and only the asked columns (a dotted name reads only
that leaf of a struct); JSON lines and CSV through pyarrow's streaming readers, block by block. Memory is
bounded by the batch, never by the file. CSV cells are read as text, exactly as written.

A dotted name (`extra_info.instance_id`) is a column of that literal name when the file has one, else a
path into structs (a numeric part indexes a list: `prompt.0.content`). A missing column or an unreadable
file is an InputError naming the file and the column, and listing the columns the file has.

Hub datasets are read through `huggingface_hub.HfFileSystem` (ranged reads: a 2.7 GB set is streamed, not
downloaded); the revision is resolved to a commit sha first. With `HF_HUB_OFFLINE=1` the Hub cache is read
instead (its snapshot folder names the commit), as the registered datasets' loader does.
"""

from __future__ import annotations

import fnmatch
import functools
import glob as globlib
import hashlib
import os
import re
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HubUnavailableError, InputError
from ..model import FileRecord, Provenance
from . import hub_net
from .card import card_data_dir, card_patterns, card_text, read_card
from .csv_rows import csv_batches, csv_header
from .files import HEX40, net_errors
from .folder_contents import folder_entries, is_metadata, refuse_unread, unread_problem
from .hub_cache import cached_revisions, check_blob, check_snapshot, snapshot_names
from .json_rows import ABSENT, exact_numbers, json_python
from .local_glob import expand_glob
from .streams import open_stream, refuse_binary, refuse_lfs_pointer, refuse_non_utf8_path, sniff

DATA_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv")
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}
HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?::(?P<config>[\w.-]+))?(?:@(?P<revision>[^\s@:]+))?$",
                    re.ASCII)
_JSON_BLOCK = 16 << 20  # pyarrow's JSON reader needs a whole line in one block; longer lines fall back


# --- what a source is ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataFile:
    """One file to read: `path` as the filesystem names it, `name` as the provenance records it."""

    path: str
    name: str
    sha256: str | None = None  # known without reading the file (a Hub LFS file), else computed when local


def data_format(name: str) -> tuple[str, str | None]:
    """(format, compression) of a file name: `x.jsonl.gz` → (`jsonl`, `gzip`); ("", None) if not data."""
    lower = name.lower()
    compression = None
    for suffix, codec in COMPRESSIONS.items():
        if lower.endswith(suffix):
            lower, compression = lower[: -len(suffix)], codec
    for suffix in DATA_SUFFIXES:
        if lower.endswith(suffix):
            return suffix[1:], compression
    return "", None


def is_data_file(name: str) -> bool:
    return bool(data_format(name)[0])


def parse_hub_id(text: str) -> tuple[str, str | None, str | None] | None:
    """`owner/name[:config][@revision]` (also `owner/name@revision:config`) → (repo, config, revision)."""
    text = text.strip().removeprefix("hf://datasets/").removeprefix("datasets/")
    match = HUB_ID.match(text)
    if not match:
        swapped = re.match(r"^(?P<repo>[^@:\s]+/[^@:\s]+)@(?P<revision>[^\s@:]+):(?P<config>[\w.-]+)$", text)
        if not swapped:
            return None
        match = swapped
    if not all(_HUB_NAME.match(part) for part in match["repo"].split("/")):
        return None
    return match["repo"], match["config"], match["revision"]


# One part of a Hub repo id as the Hub allows it (huggingface_hub.utils.validate_repo_id): ASCII letters, digits,
# `-`, `_`, `.`, no `--` or `..`, not starting or ending with `-` or `.`, at most 96 characters.
_HUB_NAME = re.compile(r"^(?!.*(?:--|\.\.))[A-Za-z0-9_](?:[\w.-]{0,94}[A-Za-z0-9_])?$", re.ASCII)


def file_uri_path(text: str) -> str:
    """The local path a `file://` URI names (`file:///data/x.jsonl`, `file://localhost/...`); other text as is."""
    if not text[:7].lower() == "file://":
        return text
    parts = urllib.parse.urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise InputError(f"{text}: a file:// URI of another host ({parts.netloc}); give a local path (file:///path)")
    return urllib.parse.unquote(parts.path)


def split_matches(name: str, split: str) -> bool:
    """Whether a repo-relative file belongs to `split` by the Hub's naming conventions: a folder of that
    name (`train/…`), or a file name starting with it (`train-00000-of-00001.parquet`, `test.csv`)."""
    parts = name.lower().split("/")
    split = split.lower()
    if split in parts[:-1]:
        return True
    return re.match(rf"^{re.escape(split)}(?:[-_.]|$)", parts[-1]) is not None


# --- the public entry point ------------------------------------------------------------------------


@dataclass
class BatchSource:
    """Record batches of one dataset, projected on `columns`; iterate it (more than once if needed).

    `provenance.files` lists each file once it has been read to the end, with its sha256 and rows.
    """

    label: str
    files: list[DataFile]
    columns: list[str]
    optional: tuple[str, ...] = ()
    batch_rows: int = 65536
    filesystem: Any = None  # None: local files
    provenance: Provenance = field(default_factory=lambda: Provenance(name="", origin="local-file"))
    hash_files: bool = True
    # columns read as text (the text check's): a JSON number, boolean, list or object there is refused, not
    # written as text the way an id cell is (the text "12345" would then be scanned as words)
    text_columns: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        self.provenance.files = []
        for data_file in self.files:
            rows = 0
            for batch in read_file_batches(data_file, self.columns, optional=self.optional,
                                           batch_rows=self.batch_rows, filesystem=self.filesystem,
                                           text_columns=self.text_columns):
                rows += batch.num_rows
                yield batch
            self.provenance.files.append(FileRecord(path=data_file.name, sha256=self._sha256(data_file),
                                                    rows=rows))

    def iter_files(self) -> Iterator[tuple[DataFile, Iterator[Any]]]:
        """(file, its batches) one file at a time, for readers that need to know where a row came from."""
        self.provenance.files = []
        for data_file in self.files:
            counted = _Counted(read_file_batches(data_file, self.columns, optional=self.optional,
                                                 batch_rows=self.batch_rows, filesystem=self.filesystem,
                                                 text_columns=self.text_columns))
            yield data_file, counted
            for _ in counted:  # the rest, if the caller stopped early: rows are rows read
                pass
            self.provenance.files.append(FileRecord(path=data_file.name, sha256=self._sha256(data_file),
                                                    rows=counted.rows))

    def _sha256(self, data_file: DataFile) -> str:
        if data_file.sha256:
            return data_file.sha256
        if self.filesystem is None and self.hash_files:
            digest = hashlib.sha256()
            with open(data_file.path, "rb") as handle:
                for block in iter(lambda: handle.read(4 << 20), b""):
                    digest.update(block)
            return digest.hexdigest()
        return ""


@dataclass
class MemoryBatches(BatchSource):
    """The record batches of an in-memory dataset (`overlap.sources.in_memory`), projected on the asked columns
    as a file's are: one file, named by the dataset's label, whose provenance record has no sha256 (the
    provenance's `in_memory` says what was given instead)."""

    memory: Any = None

    def __iter__(self) -> Iterator[Any]:
        for _, batches in self.iter_files():
            yield from batches

    def iter_files(self) -> Iterator[tuple[DataFile, Iterator[Any]]]:
        self.provenance.files = []
        data_file = self.files[0]
        counted = _Counted(self._projected())
        yield data_file, counted
        for _ in counted:  # the rest, if the caller stopped early: rows are rows read
            pass
        self.memory.rows = counted.rows
        self.provenance.files.append(FileRecord(path=data_file.name, sha256="", rows=counted.rows))
        self.provenance.in_memory = self.memory.record()

    def _projected(self) -> Iterator[Any]:
        optional = set(self.optional)
        tops = sorted({c.split(".")[0] for c in self.columns} | set(self.columns))
        known = self.memory.columns()
        if known is not None:  # said before reading, as a file's footer says it
            self._refuse_missing(known)
        schema = plans = None
        for raw in self.memory.raw_batches(self.batch_rows, tops):
            if raw.schema != schema:  # a stream's batches may each be typed by their own values
                schema = raw.schema
                if known is None:
                    self._refuse_missing(schema.names, _describe(schema))
                plans = _plan(schema, self.columns, optional, self.label)
            yield _batch(raw, plans, self.columns)

    def _refuse_missing(self, names: list[str], described: str | None = None) -> None:
        for column in self.columns:
            if column not in self.optional and column not in names and column.split(".")[0] not in names:
                shown = described or ", ".join(names[:20]) or "no columns"
                raise InputError(f"{self.label}: no column '{column}'; it has {shown}; name a column it has (dotted "
                                 "for a nested field: extra_info.instance_id)")


class _Counted:
    def __init__(self, batches: Iterator[Any]) -> None:
        self._batches = batches
        self.rows = 0

    def __iter__(self) -> Iterator[Any]:
        for batch in self._batches:
            self.rows += batch.num_rows
            yield batch


def open_batches(
    source: str | os.PathLike | Any,
    columns: Sequence[str],
    *,
    split: str | None = None,
    optional: Sequence[str] = (),
    batch_rows: int = 65536,
    filesystem: Any = None,
    hash_files: bool = True,
) -> BatchSource:
    """The record batches of `source`: a local file, folder or glob, a Hub dataset
    `owner/name[:config][@revision]` (`filesystem`: an fsspec filesystem standing for `HfFileSystem`), or an
    in-memory dataset (`overlap.sources.in_memory`: `split` picks a DatasetDict's split).

    `columns` must all be present in every file (else InputError naming file and column); `optional`
    columns may be missing (read as nulls). Batches have the columns `columns + optional`, named as asked.
    """
    columns = list(dict.fromkeys([*columns, *optional]))
    if not columns:
        raise InputError("open_batches: name at least one column to read")
    if batch_rows < 1:
        raise InputError(f"batch_rows {batch_rows}: give a positive number of rows")
    if not isinstance(source, (str, os.PathLike)):
        from .in_memory import ORIGIN, memory_input  # imported here: pyarrow, needed only for in-memory data

        memory = memory_input(source, split)
        # the split is said by the in-memory record (not as a subset of a name: the label is the name given)
        provenance = Provenance(name=memory.label, origin=ORIGIN, in_memory=memory.record())
        return MemoryBatches(memory.label, [DataFile("", memory.label)], columns, tuple(optional), batch_rows, None,
                             provenance, False, memory=memory)
    text = file_uri_path(os.fspath(source))
    local = _local_files(text, split)
    if local is not None:
        files, origin, label = local
        provenance = Provenance(name=label, origin=origin, location=text)
        return BatchSource(label, files, columns, tuple(optional), batch_rows, None, provenance, hash_files)
    parsed = parse_hub_id(text)
    if parsed is None:
        raise InputError(f"{text}: no such file, folder or glob, and not a Hub dataset id (owner/name[@revision])")
    repo_id, config, revision = parsed
    hub = open_hub(repo_id, revision, config=config, split=split, filesystem=filesystem)
    provenance = Provenance(name=repo_id, origin=hub.origin, repo_id=repo_id, revision=hub.sha,
                            location=hub.location, subsets=[s for s in (config, split) if s])
    return BatchSource(repo_id, hub.files, columns, tuple(optional), batch_rows, hub.filesystem, provenance,
                       hash_files)


# --- local files -----------------------------------------------------------------------------------


def _local_files(text: str, split: str | None) -> tuple[list[DataFile], str, str] | None:
    """(files, origin, label) of a local file, folder or glob; None when `text` names nothing local."""
    path = Path(text).expanduser()
    if path.is_file():
        if not is_data_file(path.name):
            raise InputError(f"{path}: unsupported file type; use .parquet, .jsonl, .json or .csv "
                             "(optionally .gz or .zst compressed)")
        if split is not None:  # one file has no splits: ignoring the option would read rows the user excluded
            raise InputError(f"{path}: one file has no split '{split}'; --split picks files of a Hub dataset or "
                             "a folder (leave it out, or name the split's file)")
        return [DataFile(str(path), path.name)], "local-file", path.name
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: not a regular file (a FIFO or device); give a data file or a folder")
    if path.is_dir():
        found, unread = [], []
        for entry in folder_entries(path):
            name = entry.relative_to(path).as_posix()
            if any(part.startswith(".") for part in entry.relative_to(path).parts):
                continue
            if entry.name == "_delta_log" and entry.is_dir():
                # its parquet files are every version's, removed rows included: reading them all is wrong
                raise InputError(f"{entry.parent}: a Delta table, whose folder keeps older versions' parquet files "
                                 "beside the current ones; export its current version to parquet (deltalake: "
                                 "DeltaTable(PATH).to_pyarrow_table(), then pyarrow.parquet.write_table) and give "
                                 "that")
            data = is_data_file(entry.name) and not is_metadata(entry.name)
            why = unread_problem(entry, data)
            if why is not None:
                unread.append(((entry, name), why))
            elif data and entry.is_file():
                found.append((entry, name))
        by_card = _card_split(path, split, [name for _, name in found])
        names = _by_split(found, split, str(path)) if by_card is None else [f for f in found if f[1] in by_card]
        refuse_unread([(entry, why) for (entry, name), why in unread if split is None or split_matches(name, split)])
        if not names:
            raise InputError(f"{path}: no data files (.parquet, .jsonl, .json, .csv, optionally .gz/.zst) in "
                             "this folder")
        return [DataFile(str(p), n) for p, n in names], "local-folder", path.name or str(path)
    if globlib.has_magic(text):
        matched = expand_glob(text)
        found = [p for p in matched if p.is_file() and is_data_file(p.name) and not is_metadata(p.name)]
        names = _by_split([(p, str(p)) for p in found], split, text)
        refuse_unread([(p, why) for p in matched
                       if (why := unread_problem(p, is_data_file(p.name) and not is_metadata(p.name))) is not None
                       and (split is None or split_matches(str(p), split))])
        if not names:
            raise InputError(f"{text}: the pattern matches no data file (.parquet, .jsonl, .json, .csv, "
                             "optionally .gz/.zst)")
        return [DataFile(str(p), p.name if len(names) == 1 else n) for p, n in names], "local-glob", text
    return None


def glob_source(pattern: str, split: str | None = None):
    """The files of a local glob as a FileSource, by the names `open_batches` records them under."""
    from .files import NamedFiles

    files, _, _ = _local_files(pattern, split) or ([], "", "")
    return NamedFiles(origin="local-glob", location=pattern, paths={f.name: Path(f.path) for f in files})


def _card_split(folder: Path, split: str | None, names: list[str]) -> set[str] | None:
    """The files of `split` in a folder laid out like a Hub dataset repo whose README.md has `configs:`, as the
    Hub picks them (by the card, not by their names: a clone read by names gave another split's rows), or None
    when no card decides (no split asked, no card or configs, several configs with none the default)."""
    if split is None:
        return None
    readme = folder / "README.md"
    card = read_card(lambda: readme.read_bytes() if readme.is_file() else None, str(readme))
    configs = (card or {}).get("configs")
    configs = [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []
    if not configs or (len(configs) > 1 and not any(c.get("default") or c.get("config_name", "default") == "default"
                                                    for c in configs)):
        return None
    return set(choose_files(names, card, None, split, str(folder), local=True))


def _by_split(names: list[tuple[Any, str]], split: str | None, where: str) -> list[tuple[Any, str]]:
    if split is None:
        return names
    chosen = [(p, n) for p, n in names if split_matches(n, split)]
    if not chosen and names:
        raise InputError(f"{where}: no file of split '{split}' (a folder '{split}/' or files named '{split}-…', "
                         f"'{split}.…'); files: {', '.join(n for _, n in names[:8])}")
    return chosen


# --- the Hub ---------------------------------------------------------------------------------------


@dataclass
class HubFiles:
    """The chosen files of a Hub dataset at a commit, and the filesystem that reads them."""

    repo_id: str
    sha: str
    files: list[DataFile]
    filesystem: Any  # None: the files are local (the Hub cache)
    origin: str  # hub | hub-cache
    location: str | None = None


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _hub_cache_dir() -> str | None:
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return str(Path(os.environ["HF_HOME"]) / "hub")
    return None


def open_hub(repo_id: str, revision: str | None, *, config: str | None = None, split: str | None = None,
             filesystem: Any = None) -> HubFiles:
    """The data files of a Hub dataset at `revision` (resolved to a commit sha), chosen by config and split.

    `filesystem`: an fsspec filesystem with HfFileSystem's paths (`datasets/owner/name@rev/file`); without
    one, `HfFileSystem()`, or the Hub cache when `HF_HUB_OFFLINE=1`.
    """
    if filesystem is None and hub_offline():
        return _open_hub_cache(repo_id, revision, config, split)
    if filesystem is None and (down := hub_net.unreachable()) is not None:
        return _open_hub_cache(repo_id, revision, config, split, down)  # the cache, as offline, or one line
    if filesystem is None:
        from huggingface_hub import HfFileSystem

        filesystem = HfFileSystem()
    sha = _resolve_sha(filesystem, repo_id, revision)
    root = f"datasets/{repo_id}@{sha}"
    try:
        listing = filesystem.find(root, detail=True)
    except FileNotFoundError:
        raise InputError(f"{repo_id}@{sha}: no such Hub dataset (or it is private and no token is set)") from None
    except net_errors() as exc:
        raise HubUnavailableError(f"{repo_id}@{revision or 'main'}: cannot list the repo's files "
                                  f"({type(exc).__name__}); check the network or set HF_HUB_OFFLINE=1 to read "
                                  "the Hub cache") from None
    entries = {}
    for path, info in sorted(listing.items()):
        name = path[len(root):].lstrip("/")
        lfs = info.get("lfs") or {}
        entries[name] = (path, lfs.get("sha256") if isinstance(lfs, dict) else None)
    readme = read_card(lambda: filesystem.cat_file(entries["README.md"][0]) if "README.md" in entries else None,
                          f"{repo_id}@{sha[:12]}: README.md")
    chosen = choose_files(sorted(entries), readme, config, split, f"{repo_id}@{sha[:12]}")
    files = [DataFile(entries[n][0], n, entries[n][1]) for n in chosen]
    return HubFiles(repo_id, sha, files, filesystem, "hub")


def _resolve_sha(filesystem: Any, repo_id: str, revision: str | None) -> str:
    """The commit sha of `revision` (None: the default branch). A filesystem that knows (a fake Hub in
    tests) answers through `resolve_revision`; otherwise the Hub API is asked."""
    if revision and HEX40.match(revision):
        return revision
    if hasattr(filesystem, "resolve_revision"):
        sha = filesystem.resolve_revision(repo_id, revision)
        if sha is None:
            raise InputError(f"{repo_id}: revision '{revision}' not found; give a commit sha, branch or tag that "
                             "exists")
        return sha
    from huggingface_hub import HfApi
    from huggingface_hub import errors as hf_errors

    api = HfApi(endpoint=getattr(filesystem, "endpoint", None), token=getattr(filesystem, "token", None))
    try:
        return api.dataset_info(repo_id, revision=revision).sha
    except hf_errors.RevisionNotFoundError:
        raise InputError(f"{repo_id}: revision '{revision}' not found; give a commit sha, branch or tag that "
                         "exists") from None
    except hf_errors.RepositoryNotFoundError:
        raise InputError(f"{repo_id}: no such Hub dataset (or it is private and no token is set)") from None
    except (*net_errors(), hf_errors.HfHubHTTPError) as exc:
        raise HubUnavailableError(f"{repo_id}@{revision or 'main'}: cannot reach the Hub ({type(exc).__name__}); "
                                  "check the network, or set HF_HUB_OFFLINE=1 to read the Hub cache") from None


def _open_hub_cache(repo_id: str, revision: str | None, config: str | None, split: str | None,
                    down: str | None = None) -> HubFiles:
    """The snapshot of the Hub cache (`down`: why the Hub is not asked: the network is down)."""
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(repo_id, repo_type="dataset", revision=revision,
                                        cache_dir=_hub_cache_dir(), local_files_only=True))
    except Exception:
        why = hub_net.down_hint(down) if down else "HF_HUB_OFFLINE is set"
        cached = cached_revisions(_hub_cache_dir(), repo_id)
        other = (f", or read a revision it holds ({', '.join(f'{repo_id}@{c}' for c in cached[:3])}"
                 f"{' …' if len(cached) > 3 else ''})") if cached else ""
        raise HubUnavailableError(
            f"{repo_id}@{revision or 'main'}: no snapshot of this revision is in the Hub cache, and {why}; run "
            f"once with internet (it fills the cache){other}, or give a local file or folder") from None
    sha = folder.name
    names = snapshot_names(folder)
    readme_path = folder / "README.md"
    readme = read_card(lambda: readme_path.read_bytes() if readme_path.is_file() else None,
                          f"{repo_id}@{sha[:12]}: README.md")
    chosen = choose_files(names, readme, config, split, f"{repo_id}@{sha[:12]}", cached=True)
    check_snapshot(folder, chosen, repo_id)
    files = []
    for name in chosen:
        local = folder / name
        check_blob(local, name, f"{repo_id}@{sha[:12]}")
        # Cached LFS files are links to blobs/<sha256>: the file's checksum without reading it.
        blob = Path(os.path.realpath(local)).name
        files.append(DataFile(str(local), name, blob if re.fullmatch(r"[0-9a-f]{64}", blob) else None))
    return HubFiles(repo_id, sha, files, None, "hub-cache", str(folder))


def choose_files(names: list[str], card: dict | None, config: str | None, split: str | None,
                 where: str, cached: bool = False, local: bool = False) -> list[str]:
    """The data files of a Hub repo that make `config` (and `split`): by the card's `configs:` when it has
    them, else by the Hub's conventions (a folder or file named like the config, files named like the split).
    `cached` / `local`: `names` are what a Hub cache snapshot / a local copy of the repo holds, so a card pattern
    none of them matches is a part of the dataset that is not there (an error), not an empty split."""
    data = sorted(n for n in names if is_data_file(n) and not is_metadata(n)
                  and not any(p.startswith(".") for p in n.split("/")))
    configs = (card or {}).get("configs")
    configs = [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []
    if configs:
        by_name = {card_text(c.get("config_name", "default"), where, "a config_name"): c for c in configs}
        if config is None:
            defaults = [n for n, c in by_name.items() if c.get("default")]
            config = defaults[0] if defaults else ("default" if "default" in by_name else
                                                   next(iter(by_name)) if len(by_name) == 1 else None)
            if config is None:
                raise InputError(f"{where}: the dataset has configs {', '.join(by_name)}; name one "
                                 "(owner/name:CONFIG)")
        if config not in by_name:
            raise InputError(f"{where}: no config '{config}'; its configs: {', '.join(by_name)}")
        # `data_dir` roots the config's files (and its data_files patterns): without it, another config's
        # files were read as this one's
        data_dir = card_data_dir(by_name[config].get("data_dir"), where, config)
        if data_dir:
            data = [n for n in data if n.startswith(data_dir + "/")]
        patterns = card_patterns(by_name[config].get("data_files"), split, where, config)
        if patterns is None:  # no data_files: the config's files, split by their names as the Hub does
            chosen = data if split is None else [n for n, _ in _by_split(
                [(n, n[len(data_dir) + 1:] if data_dir else n) for n in data], split, where)]
            patterns = []
        else:
            patterns = [f"{data_dir}/{p}" if data_dir else p for p in patterns]
            chosen = [n for n in data if any(fnmatch.fnmatch(n, p) for p in patterns)]
        absent = [p for p in patterns if (cached or local) and not any(fnmatch.fnmatch(n, p) for n in data)]
        if absent and local:
            raise InputError(
                f"{where}: the card's config '{config}' reads {absent[0]}, and no file in the folder matches it "
                "(a partial copy of the repo?), so its rows would be left out; add the files the card names, pick "
                "another split (--split), or fix the configs in README.md")
        if absent:
            raise HubUnavailableError(
                f"{where}: the card's config '{config}' reads {absent[0]}, and no file of it is in the Hub cache "
                "(a partial download), so its rows would be left out; run once with internet (without "
                "HF_HUB_OFFLINE) to download the dataset, pick a split that is cached (--split), or pass --data "
                "NAME=DIR with a folder holding every file")
    else:
        chosen = data
        if config is not None:
            chosen = [n for n in data if n.split("/")[0] == config or split_matches(n.rsplit("/", 1)[-1], config)]
            if not chosen:
                raise InputError(f"{where}: no files of config '{config}' (a folder '{config}/' or files named "
                                 f"'{config}…'); data files: {', '.join(data[:8]) or 'none'}")
        if split is not None:
            chosen = _by_split([(n, n) for n in chosen], split, where)
            chosen = [n for n, _ in chosen]
    if not chosen and cached and not data:  # a snapshot of the card alone: its data was never downloaded
        raise HubUnavailableError(
            f"{where}: the Hub cache holds no data file of this dataset (.parquet, .jsonl, .json, .csv; only "
            f"{', '.join(names[:3]) or 'nothing'}{' …' if len(names) > 3 else ''}), so a part of the repo was "
            "downloaded; run once with internet (without HF_HUB_OFFLINE) to download it, or give a local file or "
            "folder")
    if not chosen:
        raise InputError(f"{where}: no data files (.parquet, .jsonl, .json, .csv) for "
                         f"{'config ' + config if config else 'this dataset'}{' split ' + split if split else ''}")
    return chosen


# --- reading one file ------------------------------------------------------------------------------


def read_file_batches(data_file: DataFile, columns: Sequence[str], *, optional: Sequence[str] = (),
                      batch_rows: int = 65536, filesystem: Any = None,
                      text_columns: Sequence[str] = ()) -> Iterator[Any]:
    """Record batches of one file with exactly `columns` (named as asked); see the module docstring."""
    import pyarrow as pa

    refuse_non_utf8_path(data_file.path, data_file.name)
    if filesystem is None:
        refuse_lfs_pointer(data_file.path, data_file.name)
    fmt, compression = data_format(data_file.name if is_data_file(data_file.name) else data_file.path)
    fmt, compression = sniff(data_file.path, filesystem, fmt, compression)
    reader = {"parquet": _parquet_batches, "csv": _csv_batches}.get(fmt, _json_batches)
    if reader is _json_batches and text_columns:
        reader = functools.partial(_json_batches, text_columns=tuple(text_columns))
    try:
        for batch in reader(data_file, list(columns), set(optional), batch_rows, filesystem, compression):
            for start in range(0, batch.num_rows, batch_rows):
                yield batch.slice(start, batch_rows) if batch.num_rows > batch_rows else batch
                if batch.num_rows <= batch_rows:
                    break
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, EOFError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{data_file.name}: cannot read the file as {fmt}"
                         f"{' (' + compression + ')' if compression else ''} ({_first_line(exc)}); is it complete?"
                         ) from None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


class _Projection:
    """How each asked column is taken from a file's schema: a top-level column, or a path into it."""

    def __init__(self, name: str, top: str, path: list[str]) -> None:
        self.name, self.top, self.path = name, top, path

    @property
    def leaf(self) -> str:
        """The parquet column path to read (`extra_info.instance_id`: only that leaf of the struct)."""
        return ".".join([self.top, *self.path]) if self.path and not any(_index(p) for p in self.path) \
            else self.top

    def take(self, table_or_batch) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        array = table_or_batch.column(self.top)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        for part in self.path:
            if pa.types.is_struct(array.type):
                array = pc.struct_field(array, [part])
            else:  # a list too short (or null) has no element there: a null cell, as in a JSON row
                index = int(part)
                long_enough = pc.greater(pc.list_value_length(array), index)
                array = pc.list_element(pc.if_else(long_enough, array, pa.scalar(None, array.type)), index)
        return array


def _index(part: str) -> bool:
    """Whether a dotted-path part is a list index: ASCII digits an int64 holds (`str.isdigit` also takes `²`
    and `０`, which int() then refuses or reads, and a longer number overflows pyarrow's index)."""
    return part.isascii() and part.isdigit() and len(part) <= 18


def _plan(schema, columns: list[str], optional: set[str], file_name: str) -> list[_Projection | None]:
    """The projection of each asked column in a file with `schema` (None: an optional column it lacks)."""
    import pyarrow as pa

    plans: list[_Projection | None] = []
    names = schema.names
    for column in columns:
        for top in {column, column.split(".")[0]}:
            if names.count(top) > 1:  # which of them is meant cannot be told: never pick one silently
                raise InputError(f"{file_name}: column '{top}' appears {names.count(top)} times; rename all but "
                                 "one (or name another column)")
        if column in names:
            plans.append(_Projection(column, column, []))
            continue
        parts = column.split(".")
        plan = None
        if parts[0] in names:
            kind = schema.field(parts[0]).type
            for part in parts[1:]:
                if pa.types.is_struct(kind) and kind.get_field_index(part) >= 0:
                    kind = kind.field(part).type
                elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and _index(part):
                    kind = kind.value_type
                else:
                    break
            else:
                plan = _Projection(column, parts[0], parts[1:])
        if plan is None and column not in optional:
            raise InputError(f"{file_name}: no column '{column}'; the file has {_describe(schema)}; every file read "
                             "must have it (reading on would leave this file's rows out): add it, name the column "
                             "the files have, or move this file out of the set")
        plans.append(plan)
    return plans


def _describe(schema) -> str:
    """The columns of a schema, with one level of struct fields (`extra_info.{instance_id, …}`)."""
    import pyarrow as pa

    out = []
    for item in schema:
        if pa.types.is_struct(item.type):
            inner = ", ".join(item.type.field(i).name for i in range(item.type.num_fields))
            out.append(f"{item.name}.{{{inner}}}")
        else:
            out.append(item.name)
    shown = ", ".join(out[:20])
    return (shown + f", … ({len(out)} columns)") if len(out) > 20 else (shown or "no columns")


def absent(field) -> bool:
    """Whether a batch's column is one its file does not have (its nulls are no cells: `ABSENT`)."""
    return bool(field.metadata) and field.metadata.get(b"overlap.absent") == b"1"


def _batch(source, plans: list[_Projection | None], columns: list[str]):
    import pyarrow as pa

    arrays = [plan.take(source) if plan else pa.nulls(source.num_rows, pa.string()) for plan in plans]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([
        pa.field(name, array.type, metadata=None if plan else ABSENT)
        for name, array, plan in zip(columns, arrays, plans, strict=True)]))


def _parquet_batches(data_file, columns, optional, batch_rows, filesystem, compression):
    import pyarrow.parquet as pq

    if compression:
        handle = pq.ParquetFile(_spooled(data_file, filesystem, compression))
    else:
        # a local file is memory-mapped: its pages are read in place, not copied into buffers first (~10 % of
        # the read's CPU time on snappy-compressed text)
        handle = pq.ParquetFile(data_file.path, memory_map=True) if filesystem is None else \
            pq.ParquetFile(filesystem.open(data_file.path, "rb"))
    plans = _plan(handle.schema_arrow, columns, optional, data_file.name)
    leaves = list(dict.fromkeys(p.leaf for p in plans if p))
    if not leaves:  # only optional columns the file lacks: its rows still count
        import pyarrow as pa

        for group in range(handle.num_row_groups):
            yield _batch(pa.table({"_": pa.nulls(handle.metadata.row_group(group).num_rows)}), plans, columns)
        return
    # threads decode columns side by side: for one or two columns (a text scan's id and text) they only add
    # their hand-off, ~7 % of the read's CPU time
    for batch in handle.iter_batches(batch_size=batch_rows, columns=leaves, use_threads=len(leaves) > 2):
        yield _batch(batch, plans, columns)


def _spooled(data_file: DataFile, filesystem: Any, compression: str):
    """A compressed parquet file decompressed to a temporary file (parquet needs to seek), disk not RAM."""
    import tempfile

    spool = tempfile.TemporaryFile()
    stream = open_stream(data_file.path, filesystem, compression)
    while True:
        block = stream.read(4 << 20)
        if not block:
            break
        spool.write(block)
    spool.seek(0)
    return spool


def _csv_batches(data_file, columns, optional, batch_rows, filesystem, compression):
    import pyarrow as pa

    header, header_bytes = csv_header(data_file.path, data_file.name, filesystem, compression)
    plans = _plan(pa.schema([(name, pa.string()) for name in header]), columns, optional, data_file.name)
    include = list(dict.fromkeys(p.top for p in plans if p)) or header[:1]
    yield from csv_batches(data_file.path, data_file.name, filesystem, compression, include, header_bytes,
                           lambda batch: _batch(batch, plans, columns))


def _json_batches(data_file, columns, optional, batch_rows, filesystem, compression, text_columns=()):
    """JSON lines through pyarrow's streaming reader; a JSON array, a line longer than a block or a column
    whose type changes between blocks through the Python reader (resuming after the rows already given)."""
    import pyarrow as pa
    import pyarrow.json as pjson

    with open_stream(data_file.path, filesystem, compression) as stream:
        first = stream.read(4096).lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()
    if not first:
        return
    refuse_binary(first, data_file.name)
    given = 0
    # pyarrow's reader takes only a file whose first value is an object: a first `null` crashes the process
    # (SIGSEGV) and a first number aborts it at exit, so anything else goes to the Python reader, which names it
    if first.startswith(b"{"):
        try:
            stream = open_stream(data_file.path, filesystem, compression)
            reader = pjson.open_json(stream, read_options=pjson.ReadOptions(block_size=_JSON_BLOCK))
            plans = None
            for batch in reader:
                if plans is None:
                    plans = _plan(batch.schema, columns, optional, data_file.name)
                elif batch.schema != reader.schema:  # pragma: no cover - the reader keeps one schema
                    raise pa.ArrowInvalid("schema changed")
                out = _batch(batch, plans, columns)
                if any(not _texty(out.column(columns.index(c)).type) for c in text_columns if c in columns):
                    raise pa.ArrowInvalid("a text column holds no text")  # the Python reader names the line
                out = exact_numbers(out)
                out.validate(full=True)  # pyarrow takes invalid UTF-8 inside strings; the Python reader names the line
                yield out
                given += out.num_rows
            return
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # the Python reader below says precisely what is wrong, or reads what pyarrow could not
    yield from json_python(data_file, columns, optional, batch_rows, filesystem, compression, skip=given,
                            array=first.startswith(b"["), text_columns=text_columns)


def _texty(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)
