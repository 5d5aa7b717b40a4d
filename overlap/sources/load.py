"""Resolve a dataset argument to files (Hub, Hub cache, `--data` folder or file, bare local path) and run
its adapter."""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import InputError, OverlapError
from ..ids.ossfuzz import OssFuzzMapping
from ..model import Dataset, Provenance
from .formats.whole_file import read_records
from .places.files import FileSource, HubRepo, LocalFolder, SingleFile, SplitSource
from .places.github import GithubRepo
from .places.naming import is_data_file
from .pools import arvo_meta
from .pools.pool import Pool
from .registry.adapters import adapter_of
from .registry.declared import read_in_place, reads_files, streamable_columns
from .registry.registry import Selection, all_specs, get_spec, is_known, parse_selection
from .rows.columns import GenericColumns
from .rows.generic import read_generic
from .spec import DatasetSpec


def parse_data_options(values: list[str] | None) -> dict[str, Path]:
    """`--data NAME=PATH` options → {registered name: path}."""
    out: dict[str, Path] = {}
    for value in values or []:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--data {value!r}: expected NAME=PATH, e.g. --data cybergym=./cybergym")
        spec = get_spec(name)
        out[spec.name] = _data_target(f"--data {value}", spec, Path(path).expanduser())
    return out


def _data_target(where: str, spec: DatasetSpec, target: Path) -> Path:
    """`target`, checked to exist; or, for a dataset declared by its columns alone (no files named), a pattern
    matching some file (read as its declared `path` may be: the files it matches)."""
    if not target.exists() and glob.has_magic(str(target)):
        if spec.adapter != "columns" or spec.files:  # a layout of named files is found in its folder
            raise InputError(f"{where}: {spec.name} is read from its folder; give the folder, not a pattern")
        from .places.local_glob import expand_glob

        if not expand_glob(str(target)):
            raise InputError(f"{where}: no file matches {target}")
    elif not target.exists():
        raise InputError(f"{where}: {target} does not exist")
    return target


def open_source(spec: DatasetSpec, revision: str | None, local: Path | None) -> tuple[FileSource, bool]:
    """The file source for a dataset, and whether it is a single file."""
    if local is not None:
        if local.is_dir():
            return LocalFolder(origin="local-folder", location=str(local), root=local,
                               repo_id=spec.hub_repo, revision=revision), False
        if not local.exists() and glob.has_magic(str(local)):  # `path = "shards/*.parquet"`: the files it matches
            from .places.local_files import glob_source

            return glob_source(str(local), spec.split), False
        return SingleFile(origin="local-file", location=str(local), path=local), True
    revision = revision or spec.revision
    if spec.host == "github":
        return GithubRepo(origin="github", repo_id=spec.hub_repo, revision=revision,
                          pins=spec.extra.get("sha256")), False
    return HubRepo(origin="hub", repo_id=spec.hub_repo, revision=revision), False


def _detect(path: Path) -> DatasetSpec:
    """Which registered dataset a bare local file or folder holds."""
    specs = [s for s in all_specs() if s.is_dataset]
    if path.is_dir():
        for spec in specs:
            # a [columns] declaration names no files: it is read by its own path, never detected in a folder
            if spec.files and all((path / f).is_file() for f in spec.files.values()):
                return spec
        raise InputError(f"{path}: not laid out like any registered dataset; say which dataset it holds "
                         f"(CLI: --data NAME={path}; library: data={{NAME: path}})")
    columns: set[str] = set()
    for row in read_records(path, _all_detect_columns(specs))[:50]:
        columns.update(row)
    for spec in specs:
        if spec.detect and set(spec.detect) <= columns:
            return spec
    raise InputError(f"{path}: cannot tell which dataset this file holds; say which one, a name from "
                     f"`overlap datasets` (CLI: --data NAME={path}; library: data={{NAME: path}})")


def _all_detect_columns(specs: list[DatasetSpec]) -> list[str]:
    return sorted({c for s in specs for c in s.detect})


def _declared_path(spec: DatasetSpec) -> Path | None:
    """The local file, folder or glob a declaration names (`path`), checked to exist."""
    if not spec.path:
        return None
    if not glob.has_magic(spec.path) and not Path(spec.path).exists():
        raise InputError(f"{spec.origin or spec.name}: path {spec.path} does not exist; fix the declaration's path "
                         "(relative paths are relative to the declaration file)")
    return Path(spec.path)


def data_paths(data: Any) -> dict[str, Path]:
    """`data` as {registered name: absolute Path}: names may be aliases, paths str or Path, relative to the
    current folder or absolute (resolved once, here). A library caller's alias key or str path would otherwise
    be passed over without a word (the Hub read instead of the local folder) or fail deep in the reader."""
    if not data:
        return {}
    if not isinstance(data, Mapping):
        raise InputError("data: expected a dict {dataset name: local folder or file}, e.g. {'arvo': './ARVO'}")
    out: dict[str, Path] = {}
    for name, path in data.items():
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"data[{name!r}]: expected a folder or file path, got {type(path).__name__}")
        spec = get_spec(str(name))
        out[spec.name] = _data_target(f"data[{name!r}]", spec, Path(path).expanduser().resolve())
    return out


def load_dataset(text: str, data: dict[str, Path] | None = None) -> Dataset:
    """Load a dataset named by `text` (see `parse_selection`), honouring `--data` overrides."""
    data = data_paths(data)
    selection: Selection = parse_selection(text)
    if selection.path is not None:
        spec = _detect(selection.path)
        local = selection.path
        label = selection.name
    else:
        spec = get_spec(selection.name)
        local = data.get(spec.name) or _declared_path(spec)
        label = spec.name
    if not spec.is_dataset:
        raise InputError(f"'{spec.name}' is {spec.role} data, not a dataset to compare")
    source, single = open_source(spec, selection.revision, local)
    dataset = adapter_of(spec)(source, spec, selection.subsets, single)
    dataset.source = source
    dataset.provenance.subsets = list(selection.subsets)
    if label != dataset.name:
        dataset.name = label
        dataset.provenance.name = label
    return dataset


@dataclass(frozen=True)
class StreamableSource:
    """A registered dataset as `overlap.keyjoin.stream_train` reads it: the place, its columns and split."""

    name: str  # the registered name (what `load_dataset` names the dataset)
    where: Any  # a local file or folder, or a Hub id `owner/name@revision`
    columns: GenericColumns
    split: str | None


def streamable_source(text: str, data: dict[str, Path] | None = None) -> StreamableSource | None:
    """How to stream the registered dataset `text` (honouring `--data NAME=PATH`) instead of loading it whole,
    when `load_dataset` would read it as one source by its `[columns]` alone (`declared.streamable_columns`,
    `declared.read_in_place`): the same rows, ids and keys. None otherwise (a subset selected, a bare path,
    identity data, a transform or more columns than an id, a project, a fix or a CVE), and the dataset is loaded
    whole. Nothing is read here."""
    selection = parse_selection(text)
    if selection.path is not None or selection.subsets:
        return None
    spec = get_spec(selection.name)
    columns = streamable_columns(spec) if spec.is_dataset else None
    if columns is None:
        return None
    source, single = open_source(spec, selection.revision, (data or {}).get(spec.name) or _declared_path(spec))
    place = read_in_place(source, spec, single)
    return None if place is None else StreamableSource(spec.name, place[0], columns, place[1])


def _reread_by_columns(dataset: Dataset, source: SplitSource, columns: GenericColumns) -> Dataset:
    """A written split of a dataset read by columns, read back with the same columns. The shards are linked in
    the order of the files they were cut from, each under its file's name (in a folder of its own: the names
    of an absolute glob's files are absolute paths), and the items labelled back with those files' labels."""
    labels: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="overlap-reread-") as folder:
        for number, (label, shard) in enumerate(source.shards.items()):
            if not label:
                continue  # "" stands for the one file of a single-file input, also listed by its name
            # an in-memory dataset's label names no file: its shard's name says how to read it
            name = f"{number:06d}/{PurePosixPath(label).name if is_data_file(label) else Path(shard).name}"
            labels[name] = label
            link = Path(folder, name)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(Path(shard).resolve())
        try:
            again = read_generic(folder, columns, name=dataset.name, allow_empty=True)  # a split may keep no row
        except InputError as exc:
            # The links' folder is a temporary one: a message must name the user's file, not `000000/<name>`.
            message = str(exc)
            for name in sorted(labels, key=len, reverse=True):
                message = message.replace(str(Path(folder, name)), labels[name]).replace(name, labels[name])
            raise InputError(message) from None
    for frame in (again.items, again.repeats):
        if "file" in frame:
            frame["file"] = frame["file"].map(lambda name: labels.get(name, name)).astype(frame["file"].dtype)
    again.source = source
    return again


def reread(dataset: Dataset, source: FileSource) -> Dataset:
    """The dataset read again, the same way and with the same subsets, over `source` (e.g. a written split)."""
    prov = dataset.provenance
    try:
        spec = get_spec(prov.adapter or dataset.name)
    except OverlapError:
        spec = None
    columns = getattr(dataset, "generic_columns", None)
    if (spec is None or not reads_files(spec)) and columns is not None and isinstance(source, SplitSource):
        return _reread_by_columns(dataset, source, columns)
    if spec is None:
        raise InputError(f"{dataset.name}: cannot tell how it was read; read the split with `overlap compare`")
    again = adapter_of(spec)(source, spec, tuple(prov.subsets), prov.origin == "local-file")
    again.name = again.provenance.name = dataset.name
    again.source = source
    return again


def load_identity(name: str, data: dict[str, Path] | None = None) -> tuple[Any, Provenance]:
    """Load identity data (e.g. the `arvo` mapping) with its provenance."""
    spec = get_spec(name)
    local = (data or {}).get(spec.name)
    source, _ = open_source(spec, None, local)
    if local is not None and local.is_file():
        # A single file stands for the one file this identity source has.
        source = SingleFile(origin="local-file", location=str(local), path=local)
    value = adapter_of(spec)(source, spec, (), source.origin == "local-file")
    provenance = Provenance(name=spec.name, origin=source.origin, repo_id=source.repo_id,
                            revision=source.revision, files=list(source.records), location=source.location)
    return value, provenance


# Adapters whose value is a Pool: ARVO-Meta (role pool) and ARVO's project file (role mapping, read as a pool
# of new-tracker ids with their projects).
POOL_ADAPTERS = ("arvo-meta", "arvo-projects")


def check_pool(pool: str | os.PathLike | None) -> None:
    """A `pool` that can name nothing, said before any dataset is read: empty, or a path that does not exist and
    no registered name."""
    if pool is None or not isinstance(pool, (str, os.PathLike)) or os.fspath(pool) in ("auto", "none"):
        return
    text = os.fspath(pool)
    if not text.strip():
        raise InputError("pool: empty; give auto, none, a pool name (arvo-meta, arvo-projects) or a path to one")
    if not Path(text).exists() and not is_known(text):
        raise InputError(f"pool {text}: no such file or folder, and no registered pool; give auto, none, "
                         "arvo-meta, arvo-projects, a folder laid out like ARVO-Meta or a file with columns id,project")


def load_pool(which: str | Path = "arvo-meta", data: dict[str, Path] | None = None,
              mapping: OssFuzzMapping | None = None) -> Pool:
    """A pool by registered name (`arvo-meta`, `arvo-projects`; honours `--data NAME=PATH`) or by path
    (a folder laid out like ARVO-Meta, or a pool file with columns id, project), with canonical ids
    from `mapping` when given."""
    path = Path(which)
    if path.exists():
        spec = get_spec("arvo-meta")
        if path.is_dir():
            source: FileSource = LocalFolder(origin="local-folder", location=str(path), root=path)
            pool = arvo_meta.load_arvo_meta(source, spec, (), False)
            pool.name = pool.provenance.name = path.name
        else:
            pool = arvo_meta.read_pool_file(path, path.stem)
    else:
        spec = get_spec(str(which))
        if spec.role != "pool" and spec.adapter not in POOL_ADAPTERS:
            raise InputError(f"'{which}' is {spec.role} data, not a pool; give arvo-meta, arvo-projects, a folder "
                             "laid out like ARVO-Meta or a file with columns id,project")
        value, provenance = load_identity(spec.name, data)
        provenance.adapter = spec.name
        value.provenance = provenance
        pool = value
    return pool.canonicalize(mapping) if mapping is not None else pool
