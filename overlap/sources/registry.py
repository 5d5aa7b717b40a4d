"""The dataset registry: datasets are registered by name (with aliases) and resolved from a spec string.

A spec is `NAME`, `NAME@REVISION`, `NAME:SUBSET[,SUBSET]`, a Hub repo id (`owner/name[@rev]`) of a
registered dataset, or a local file/folder. `--data NAME=PATH` points a name at a local folder laid out
like the repo, or at a single file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, UnknownDatasetError

if TYPE_CHECKING:
    from ..model import Dataset
    from .files import FileSource

# An adapter turns the resolved files of a dataset into Items + Keys. `subsets` is the selection
# (empty = all); `single` is True when the user gave one file instead of the repo layout.
Adapter = Callable[["FileSource", "DatasetSpec", tuple[str, ...], bool], "Dataset"]


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    hub_repo: str | None  # Hub dataset repo id, or GitHub `owner/name` when host == "github"
    revision: str  # pinned 40-hex commit
    files: dict[str, str]  # subset -> repo-relative file ("" when the dataset has one file)
    extracts: str  # what the adapter takes from the rows (shown by `overlap datasets`)
    adapter: Adapter
    aliases: tuple[str, ...] = ()
    host: str = "hub"  # hub | github
    role: str = "dataset"  # dataset | mapping | pool
    default_subsets: tuple[str, ...] = ()  # subsets read when none is selected ("" = all files)
    detect: tuple[str, ...] = ()  # columns that identify this dataset's rows in a bare local file
    notes: str = ""
    extra: dict = field(default_factory=dict)


    @property
    def subset_names(self) -> tuple[str, ...]:
        """Selectable subsets: one per file, or values of a column named in `extra['subset_values']`."""
        return tuple(k for k in self.files if k) or tuple(self.extra.get("subset_values", ()))


_REGISTRY: dict[str, DatasetSpec] = {}
_ALIASES: dict[str, str] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    for name in (spec.name, *spec.aliases):
        key = name.lower()
        if key in _ALIASES and _ALIASES[key] != spec.name:
            raise ValueError(f"dataset name {name!r} registered twice")
        _ALIASES[key] = spec.name
    if spec.hub_repo:
        _ALIASES.setdefault(spec.hub_repo.lower(), spec.name)
    _REGISTRY[spec.name] = spec
    return spec


def _load_builtin() -> None:
    # Adapter modules register themselves on import; importing them here keeps `overlap --help` cheap
    # (the registry is only populated when a dataset is actually named).
    from . import arvo, arvo_meta, cyber, swe  # noqa: F401


def all_specs() -> list[DatasetSpec]:
    _load_builtin()
    return sorted(_REGISTRY.values(), key=lambda s: (s.role != "dataset", s.name))


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


@dataclass(frozen=True)
class Selection:
    """A parsed dataset argument."""

    name: str  # registered name, or a label for a local path
    revision: str | None = None
    subsets: tuple[str, ...] = ()
    path: Path | None = None  # a local file/folder given directly


def selection_label(text: str) -> str:
    """A dataset argument as a short label for default output names: the name, then `-SUBSET+SUBSET` and
    `@REV` when given, so `cybergym:arvo` and `cybergym` never share a report folder."""
    selection = parse_selection(text)
    label = selection.name
    if selection.subsets:
        label += "-" + "+".join(selection.subsets)
    if selection.revision:
        label += "@" + selection.revision[:12]
    return label


def parse_selection(text: str) -> Selection:
    """Parse `NAME[@REV][:SUBSET,...]` (also `NAME:SUBSET@REV`) or a local path."""
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
