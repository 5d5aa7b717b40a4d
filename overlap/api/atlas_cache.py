"""The atlas's caches, under one folder (`overlap atlas --cache`, default the user cache):

    keys/<fingerprint>/   a dataset read whole: its items (the columns the cells need) and keys
    sides/<fingerprint>.json   a streamed training set: its name, provenance, problems and whole-side counts
    cells/<key>.json      one cell: its row and pairs

A fingerprint is what a dataset's keys depend on (`fingerprint`); a cell's key is both fingerprints and what
else its numbers depend on (the atlas builds it). Every entry is written whole or not at all (a temporary
name, then a rename) with the sha256 of what it holds; a damaged, edited or missing one, or one that is not a
regular file (a FIFO, a device: never opened), is a miss: read again and written anew.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import io
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import asdict
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .. import __version__
from ..atlas_model import CELL_SCHEMA, PAIR_SCHEMA
from ..errors import InputError, OverlapError
from ..model import Dataset, FileRecord, Problem, Provenance
from ..sources.places.files import sha256_of
from ..sources.places.github import cache_root
from ..sources.places.local_glob import expand_glob
from ..sources.registry.declared import member_places
from ..sources.registry.registry import get_spec, parse_selection
from ..sources.spec import DatasetSpec

# Item columns the cells need; texts, patches and crash reports are not cached (the atlas joins ids).
_CACHED_ITEM_COLUMNS = ("item_id", "row", "file", "file_row", "subset", "project", "repo", "base_commit", "pr")


# The folders of the cache that hold its entries (the module docstring).
ENTRY_FOLDERS = ("keys", "sides", "cells")


def cache_folder(cache: str | os.PathLike | None) -> Path:
    if cache is not None and not os.fspath(cache).strip():  # else the current folder, where nobody asked for it
        raise InputError("cache: empty; give a folder (--cache DIR), or none for the user cache (OVERLAP_CACHE)")
    return Path(cache) if cache is not None else cache_root() / "atlas"


def _files_digest(path: Path) -> list[tuple[str, str]]:
    """(relative path, sha256) of a local file, or of every file under a local folder (hidden ones too:
    a dataset's folder holds only what it is read from) or matched by a glob. A link to a file is hashed by
    what it points to, as the reader reads it through the link (a Hub snapshot folder is all links)."""
    if path.is_file():
        return [(path.name, sha256_of(path))]
    if not path.exists() and glob.has_magic(str(path)):
        return [(p.as_posix(), _digest(p)) for p in expand_glob(str(path)) if not p.is_dir()]
    entries = sorted(p for p in path.rglob("*") if not p.is_dir())
    return [(p.relative_to(path).as_posix(), _digest(p)) for p in entries]


def _digest(path: Path) -> str:
    """A regular file's sha256; anything else (a link to nothing, a FIFO, a socket) by what it is, never
    opened: the reader refuses such an entry, so it must change the fingerprint and miss the cache, or a folder
    the reader would refuse is served the cells of the same folder without it."""
    if path.is_file():
        return sha256_of(path)
    if path.is_symlink():
        return f"link to nothing: {os.readlink(path)}"
    return "not a regular file"


# A pin is a full commit sha: a branch or tag (`main`, `v1`) moves, and a short sha is a prefix the Hub may
# resolve to another commit once one more shares it, so neither names one content.
_PINNED = re.compile(r"[0-9a-f]{40}", re.ASCII)


def fingerprint(name: str, data: Mapping[str, Path]) -> str | None:
    """What a dataset's keys depend on, hashed: its declaration and either the sha256 of every local file it
    is read from (`-d NAME=PATH` or a declared path) or its pinned Hub/GitHub revision (a full 40-hex sha). None
    for an unpinned remote dataset, a branch, tag or short sha included (its content can change under the same
    name: never cached)."""
    selection = parse_selection(name)
    spec = get_spec(selection.name)
    # the path the reader reads (`load_dataset`): a name that is also a local file or folder is that path; a
    # declaration's `path` is already relative to its file (read_declaration_file)
    local = selection.path or data.get(spec.name) or (Path(spec.path) if spec.path else None)
    parts: dict[str, Any] = {"tool": __version__, "selection": name, "declaration": _declared(spec)}
    if local is not None:
        parts["files"] = _files_digest(Path(local))
        if spec.extra.get("member_of"):
            parts["member_of"] = _member_digest(spec.extra["member_of"], Path(local))
    elif _PINNED.fullmatch((selection.revision or spec.revision or "").lower()):
        parts["remote"] = [spec.host, spec.hub_repo, selection.revision or spec.revision]
    else:
        return None
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _member_digest(member_of: Any, local: Path) -> list[str]:
    """The file a local folder's subset flag is read from, by what it holds (`sources.registry.declared.member_places`:
    inside the dataset's folder or beside it). Beside it, it is no file of the folder's digest, so without
    this a changed or newly added membership file would leave the cached flag and provenance of the old one."""
    try:
        places = member_places(member_of, Path(local).resolve())
    except (TypeError, ValueError, OSError):
        return [repr(member_of)]  # a declaration of another shape: the reader says what is wrong with it
    return [_digest(place) if place.exists() or place.is_symlink() else "absent" for place in places]


def _declared(spec: DatasetSpec) -> Any:
    """The fields of one declaration, not the text of its file: a file of several `[[dataset]]` tables changes
    as a whole when one of them is bumped, and only that dataset's cells are to be made again. Its `path` is
    left to the files' digest (the same files reached through another spelling of the path are the same data)."""
    fields = {f.name: getattr(spec, f.name) for f in dataclass_fields(spec)
              if f.name not in ("declaration", "origin", "builtin", "path")}
    return json.loads(json.dumps(fields, sort_keys=True, default=str))  # a TOML date is its text


def _provenance(record: dict[str, Any]) -> Provenance:
    prov = dict(record)
    prov["files"] = [FileRecord(**f) for f in prov.get("files", [])]
    return Provenance(**prov)


def _meta(dataset: Dataset) -> dict[str, Any]:
    return {"name": dataset.name, "provenance": dataset.provenance.to_dict(),
            "problems": [asdict(p) for p in dataset.problems]}


def _cache_write(function):
    """An OS error writing the cache (a read-only folder, a file where a folder should be, a full disk) as one
    line about `--cache`, not the `--out` folder the generic message names."""
    @functools.wraps(function)
    def writing(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except OSError as exc:
            where = exc.filename if exc.filename is not None else args[0]
            reason = exc.strerror or type(exc).__name__
            raise InputError(f"{where}: {reason} while writing the atlas cache; choose another --cache folder (or "
                             "free some space, or fix its permissions)") from None
    return writing


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file; None for anything else (missing, a folder, a FIFO, a device), which is
    opened without blocking and never read: a FIFO put in place of an entry would block the atlas for good."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _checksum(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


_KEY_PARTS = ("items.parquet", "keys.parquet")


@_cache_write
def save_keys(folder: Path, dataset: Dataset) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + f".{os.getpid()}.tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    items = dataset.items[[c for c in dataset.items.columns
                           if c in _CACHED_ITEM_COLUMNS or c.startswith("in_")]]
    items.to_parquet(tmp / "items.parquet", index=False)
    dataset.keys.to_parquet(tmp / "keys.parquet", index=False)
    # meta.json holds the sha256 of both tables: an edited table misses, whatever it holds
    meta = _meta(dataset) | {"sha256": {part: sha256_of(tmp / part) for part in _KEY_PARTS}}
    (tmp / "meta.json").write_text(json.dumps({"checksum": _checksum(meta), "entry": meta}, sort_keys=True),
                                   encoding="utf-8")
    for part in (*_KEY_PARTS, "meta.json"):
        os.replace(tmp / part, folder / part)
    tmp.rmdir()


def load_keys(folder: Path) -> Dataset | None:
    meta = _read_json(folder / "meta.json")
    parts = {part: _read_regular(folder / part) for part in _KEY_PARTS}
    try:  # an entry of another shape (edited, another version's) is damaged too, never an error of the run
        if any(data is None or hashlib.sha256(data).hexdigest() != meta["sha256"][part]
               for part, data in parts.items()):
            return None  # not cached, or a table that is not the one written: read the dataset again
        items = pd.read_parquet(io.BytesIO(parts["items.parquet"]))
        keys = pd.read_parquet(io.BytesIO(parts["keys.parquet"]))
        return Dataset(meta["name"], items, keys, _provenance(meta["provenance"]),
                       [Problem(**p) for p in meta["problems"]])
    except (OverlapError, KeyError, TypeError, ValueError, AttributeError, OSError):
        return None


@_cache_write
def _write_json(target: Path, value: Any) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"checksum": _checksum(value), "entry": value}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, target)


def _read_json(target: Path) -> Any:
    """The value `_write_json` kept at `target`; None when it is not cached, not a regular file, damaged, or
    edited (a well-formed value whose checksum is not the one written): the entry is then made again."""
    data = _read_regular(target)
    try:
        record = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or set(record) != {"checksum", "entry"} or \
            record["checksum"] != _checksum(record["entry"]):
        return None
    return record["entry"]


def save_side(folder: Path, fp: str | None, dataset: Dataset) -> None:
    """What the atlas needs of a streamed training set it does not read again: name, provenance, problems and
    the whole side's counts (whether it has OSS-Fuzz ids decides its cells' cache keys)."""
    if fp is None or dataset.totals is None:
        return
    totals = dataset.totals
    _write_json(folder / "sides" / f"{fp}.json", _meta(dataset) | {
        "items": totals.items, "keys_by_kind": totals.keys_by_kind, "projects": totals.projects,
        "pr_repos": totals.pr_repos, "same_pr": totals.same_pr})


def load_side(folder: Path, fp: str | None) -> tuple[str, Provenance, list[Problem], dict[str, Any]] | None:
    """(name, provenance, problems, counts: items, keys_by_kind, projects, pr_repos, same_pr) of a streamed
    training set, as `save_side` kept them; None when not cached (an entry of an older version, without
    `pr_repos`, too: the side is read again)."""
    record = _read_json(folder / "sides" / f"{fp}.json") if fp is not None else None
    try:
        counts = {k: record[k] for k in ("items", "keys_by_kind", "projects", "pr_repos", "same_pr")}
        return record["name"], _provenance(record["provenance"]), [Problem(**p) for p in record["problems"]], counts
    except (KeyError, TypeError):
        return None  # not cached, or a damaged entry: the side is read again


def load_cell(folder: Path, key: str | None, train: str, bench: str) -> dict | None:
    """The cached cell (row, pairs) of `train` × `bench`, or None when it is not cached or the entry is not
    one `save_cell` wrote for them (damaged, edited, another cell's): it is then joined again, never read
    into the atlas as it is."""
    cell = _read_json(folder / "cells" / f"{key}.json") if key is not None else None
    if cell is None or not _whole_cell(cell, train, bench):
        return None
    return {"row": cell["row"], "pairs": cell["pairs"]}


# what every joined cell's row holds (the baseline and text columns depend on the run)
CELL_ROW_KEYS = frozenset(CELL_SCHEMA.names) - {"train", "train_role", "train_revision", "bench", "bench_revision"} \
    - {name for name in CELL_SCHEMA.names if name.startswith(("baseline_", "text_"))}


def _whole_cell(cell: Any, train: str, bench: str) -> bool:
    if not isinstance(cell, dict) or set(cell) != {"train", "bench", "row", "pairs"} or \
            (cell["train"], cell["bench"]) != (train, bench):
        return False
    row, pairs = cell["row"], cell["pairs"]
    if not isinstance(row, dict) or not CELL_ROW_KEYS <= set(row) <= set(CELL_SCHEMA.names) or \
            not isinstance(pairs, list):
        return False
    if any(not isinstance(p, dict) or set(p) != set(PAIR_SCHEMA.names) or p["train"] != train or p["bench"] != bench
           for p in pairs):
        return False
    try:  # every value of the type its column has
        pa.Table.from_pylist([row], schema=pa.schema([CELL_SCHEMA.field(name) for name in row]))
        pa.Table.from_pylist(pairs, schema=PAIR_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return False
    return True


def save_cell(folder: Path, key: str | None, cell: dict, train: str, bench: str) -> None:
    """Keep a cell (row, pairs) under its key, named by its datasets (so `load_cell` knows it for theirs)."""
    if key is not None:
        _write_json(folder / "cells" / f"{key}.json", {"train": train, "bench": bench} | cell)
