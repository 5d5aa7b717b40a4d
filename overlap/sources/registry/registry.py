"""The dataset registry: datasets are registered by name (with aliases) and resolved from a spec string.

Declarations come from three places, read when a dataset is first named: the built-in TOML files in
`overlap/sources/registry/declarations/`, installed packages' entry points in the group `overlap.datasets`, and
`--registry FILE` (`add_declarations`). A name declared twice by different files is refused, naming both.

A spec is `NAME`, `NAME@REVISION`, `NAME:SUBSET[,SUBSET]`, a Hub repo id (`owner/name[@rev]`) of a
registered dataset, or a local file/folder. `--data NAME=PATH` points a name at a local folder laid out
like the repo, or at a single file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from importlib.resources import files as package_files
from pathlib import Path
from typing import Any

from ...errors import InputError, UnknownDatasetError
from ..spec import DatasetSpec, read_declaration, read_declaration_file, spec_from_table

ENTRY_POINT_GROUP = "overlap.datasets"

_REGISTRY: dict[str, DatasetSpec] = {}
_ALIASES: dict[str, str] = {}
_BUILTIN_READ: list[bool] = []  # non-empty once the built-in declarations are registered


def _same_declaration(a: str, b: str) -> bool:
    """Whether two origins are one declaration: the same text, or one file spelt two ways (`reg.toml` and its
    absolute path, a link to it) at the same `[[dataset]]` position."""
    if a == b:
        return True
    (file_a, _, table_a), (file_b, _, table_b) = a.partition(" [[dataset]] "), b.partition(" [[dataset]] ")
    try:
        return table_a == table_b and os.path.samefile(file_a, file_b)
    except (OSError, ValueError):  # a built-in's bare file name, an entry point's description
        return False


def register(spec: DatasetSpec) -> DatasetSpec:
    keys = [name.lower() for name in (spec.name, *spec.aliases)]
    repeated = next((name for i, name in enumerate((spec.name, *spec.aliases)) if keys.index(name.lower()) < i), None)
    if repeated is not None:  # `aliases = ["x", "X"]`, or the name again: one name given twice, said as such
        raise InputError(f"{spec.origin or spec.name}: dataset name {repeated!r} is given twice in one declaration "
                         "(names and aliases are compared without case); remove the repeat")
    for name in (spec.name, *spec.aliases):  # every name checked before any is taken: a refused declaration
        key = name.lower()                       # leaves no name behind that leads nowhere
        if key in _ALIASES and (_ALIASES[key] != spec.name or spec.name not in _REGISTRY
                                or not _same_declaration(_REGISTRY[spec.name].origin, spec.origin)):
            raise InputError(f"{spec.origin or spec.name}: dataset name {name!r} is already declared by "
                             f"{_REGISTRY[_ALIASES[key]].origin or _ALIASES[key]}; choose another name")
    for key in keys:
        _ALIASES[key] = spec.name
    if spec.hub_repo:
        _ALIASES.setdefault(spec.hub_repo.lower(), spec.name)
    _REGISTRY[spec.name] = spec
    return spec


def _load_builtin() -> None:
    # The built-in declarations are read once, when a dataset is first named (keeps `overlap --help` cheap).
    if _BUILTIN_READ:
        return
    _BUILTIN_READ.append(True)
    folder = package_files("overlap.sources.registry") / "declarations"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            register(replace(read_declaration(entry.read_text(encoding="utf-8"), entry.name), builtin=True))
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: (p.name, p.value)):
        for spec in _entry_point_specs(point):
            register(spec)


def _entry_point_specs(point: Any) -> list[DatasetSpec]:
    """An `overlap.datasets` entry point's declarations. It may load a path to a TOML file or a folder of them,
    a declaration table (dict), a DatasetSpec, a list of these, or a function returning any of these."""
    where = f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP})"
    try:
        value = point.load()
        if callable(value) and not isinstance(value, DatasetSpec):
            value = value()
    except Exception as exc:  # a broken plug-in names itself and what failed, never a traceback
        raise InputError(f"{where}: cannot load it ({type(exc).__name__}: {exc})") from None
    values = value if isinstance(value, list | tuple) else [value]
    specs: list[DatasetSpec] = []
    for item in values:
        if isinstance(item, DatasetSpec):
            specs.append(item)
        elif isinstance(item, dict):
            specs.append(spec_from_table(item, where))
        elif isinstance(item, str | Path):
            specs += declarations_at(Path(item))
        else:
            raise InputError(f"{where}: gives a {type(item).__name__}; give a TOML path, a dict or a DatasetSpec")
    return specs


def declarations_at(path: Path) -> list[DatasetSpec]:
    """The declarations in a TOML file, or in every `*.toml` file of a folder (sorted by name)."""
    if path.is_dir():
        # regular files only: a pipe or device named *.toml would block the read forever
        found = sorted(f for f in path.glob("*.toml") if f.is_file())
        if not found:
            raise InputError(f"{path}: a folder with no .toml declaration in it")
        return [s for f in found for s in _declared_in(f)]
    if not path.is_file():
        raise InputError(f"{path}: no such declaration file (a TOML file, or a folder of them)")
    return _declared_in(path)


def _declared_in(path: Path) -> list[DatasetSpec]:
    specs = read_declaration_file(path)
    if not specs:  # `dataset = []`: else its names are unknown later, with no word of this file
        raise InputError(f"{path}: declares no dataset (its [[dataset]] list is empty); add a [[dataset]] table "
                         "with name, path or repo, and [columns] id")
    return specs


def add_declarations(paths: list[Path] | list[str]) -> list[DatasetSpec]:
    """Register the declarations in each file or folder (`--registry FILE`, repeatable), after the built-in
    ones, so a name that is already taken is refused with both files named."""
    _load_builtin()
    added = []
    for path in paths:
        for spec in declarations_at(Path(path)):
            added.append(register(spec))
    return added


def all_specs() -> list[DatasetSpec]:
    _load_builtin()
    return sorted(_REGISTRY.values(), key=lambda s: (not s.is_dataset, s.name))


def get_spec(name: str) -> DatasetSpec:
    _load_builtin()
    key = name.lower()
    if key not in _ALIASES:
        known = ", ".join(s.name for s in all_specs())
        raise UnknownDatasetError(f"unknown dataset '{name}'; known datasets: {known} (or give a local file)")
    return _REGISTRY[_ALIASES[key]]


def is_known(name: str) -> bool:
    _load_builtin()
    return name.lower() in _ALIASES


def is_registered(text: str) -> bool:
    """Whether a dataset argument names a registered dataset (`NAME`, `NAME@REV`, `NAME:SUBSET`) rather than
    a local file or folder or a user's own Hub dataset."""
    return not Path(text).exists() and is_known(text.split("@")[0].split(":")[0])


@dataclass(frozen=True)
class Selection:
    """A parsed dataset argument."""

    name: str  # registered name, or a label for a local path
    revision: str | None = None
    subsets: tuple[str, ...] = ()
    path: Path | None = None  # a local file/folder given directly


def selection_label(text: str) -> str:
    """A dataset argument as a short label for default output names: the name, then `-SUBSET+SUBSET` and
    `@REV` when given, so `cybergym:arvo` and `cybergym` never share a report folder. A dataset that is not
    registered (a Hub id, a glob, a missing path: read by its columns, or refused later with the reason) is
    labelled by its text, so naming the output never decides whether the input can be read."""
    if not is_registered(text.strip()) and not Path(text.strip()).exists():
        return text.strip().removeprefix("hf://").removeprefix("datasets/").rstrip("/") or "dataset"
    selection = parse_selection(text)
    label = selection.name
    if selection.subsets:
        label += "-" + "+".join(selection.subsets)
    if selection.revision:
        label += "@" + selection.revision[:12]
    return label


def parse_selection(text: str) -> Selection:
    """Parse `NAME[@REV][:SUBSET,...]` (also `NAME:SUBSET@REV`) or a local path."""
    if isinstance(text, os.PathLike):
        text = os.fspath(text)
    if not isinstance(text, str):  # a library caller's None or number: said here, not as a failed `.strip`
        raise InputError(f"expected a dataset name or a path, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise InputError("empty dataset name; run `overlap datasets` to list the known ones")
    candidate = Path(text)
    if candidate.exists():
        return Selection(name=candidate.stem or candidate.name, path=candidate)
    name, revision, subsets = text, None, ()
    if "@" in name:
        name, _, rest = name.partition("@")
        revision, _, subset_text = rest.partition(":")
        if subset_text:
            subsets = tuple(s for s in subset_text.split(",") if s)
    if ":" in name:
        name, _, subset_text = name.partition(":")
        subsets = tuple(s for s in subset_text.split(",") if s)
    if not is_known(name) and ("/" in name or "\\" in name or name.endswith(SUFFIXES)):
        raise InputError(f"{text}: no such file or folder, and not a registered dataset or Hub id")
    spec = get_spec(name)
    if revision is not None and not revision:
        raise InputError(f"{text}: empty revision after '@'")
    unknown = [s for s in subsets if s not in spec.subset_names]
    if unknown:
        choices = ", ".join(spec.subset_names) or "none"
        raise InputError(f"{text}: unknown subset '{unknown[0]}' of {spec.name}; its subsets: {choices}")
    return Selection(name=spec.name, revision=revision, subsets=subsets)


SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")
