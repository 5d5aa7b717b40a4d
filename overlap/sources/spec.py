"""A dataset declaration: what the registry knows of one dataset, read from a TOML file.

Every built-in dataset is a file in `overlap/sources/declarations/`; users add theirs the same way. A
declaration names its Hub (or GitHub) repo, the pinned revision, its files and subsets, and the adapter that
turns rows into items and keys, by name (`overlap.sources.adapters` maps names to code). Fields a declaration
cannot express as plain values (e.g. how to find a task's per-item files) are names of code too.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

ROLES = ("dataset", "mapping", "pool")
HOSTS = ("hub", "github")


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    hub_repo: str | None  # Hub dataset repo id, or GitHub `owner/name` when host == "github"
    revision: str  # pinned 40-hex commit
    files: dict[str, str]  # subset -> repo-relative file ("" when the dataset has one file)
    extracts: str  # what the adapter takes from the rows (shown by `overlap datasets`)
    adapter: str  # name of the code that reads the rows (`overlap.sources.adapters.ADAPTERS`)
    aliases: tuple[str, ...] = ()
    host: str = "hub"  # hub | github
    role: str = "dataset"  # dataset | mapping | pool
    default_subsets: tuple[str, ...] = ()  # subsets read when none is selected ("" = all files)
    detect: tuple[str, ...] = ()  # columns that identify this dataset's rows in a bare local file
    notes: str = ""
    extra: dict = field(default_factory=dict)
    origin: str = ""  # the declaration file, as its name (built-in) or the path the user gave

    @property
    def subset_names(self) -> tuple[str, ...]:
        """Selectable subsets: one per file, or values of a column named in `extra['subset_values']`."""
        return tuple(k for k in self.files if k) or tuple(self.extra.get("subset_values", ()))


def _frozen(value: Any) -> Any:
    """TOML arrays as tuples (declarations are compared and hashed, never changed)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


_REQUIRED = ("name", "title", "revision", "adapter", "files", "extracts")
_KNOWN = (*_REQUIRED, "repo", "aliases", "host", "role", "default_subsets", "detect", "notes", "extra")


def spec_from_table(table: dict[str, Any], origin: str) -> DatasetSpec:
    """One declaration table as a DatasetSpec; a missing or unknown field is an InputError naming `origin`."""
    missing = [k for k in _REQUIRED if k not in table]
    if missing:
        raise InputError(f"{origin}: declaration lacks {', '.join(missing)}; see `overlap datasets --show cybergym` "
                         "for a complete one")
    unknown = sorted(set(table) - set(_KNOWN))
    if unknown:
        raise InputError(f"{origin}: unknown field {unknown[0]!r}; a declaration has {', '.join(_KNOWN)}")
    if not isinstance(table["files"], dict) or not all(isinstance(v, str) for v in table["files"].values()):
        raise InputError(f"{origin}: files must be a table subset = \"path\" (\"\" for a one-file dataset)")
    for key, allowed in (("role", ROLES), ("host", HOSTS)):
        if table.get(key, allowed[0]) not in allowed:
            raise InputError(f"{origin}: {key} {table[key]!r}; use one of {', '.join(allowed)}")
    values = _frozen(table)
    return DatasetSpec(
        name=values["name"], title=values["title"], hub_repo=values.get("repo"), revision=values["revision"],
        files=dict(values["files"]), extracts=values["extracts"], adapter=values["adapter"],
        aliases=tuple(values.get("aliases", ())), host=values.get("host", "hub"), role=values.get("role", "dataset"),
        default_subsets=tuple(values.get("default_subsets", ())), detect=tuple(values.get("detect", ())),
        notes=values.get("notes", ""), extra=dict(values.get("extra", {})), origin=origin)


def read_declaration(text: str, origin: str) -> DatasetSpec:
    """A TOML declaration's text as a DatasetSpec."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{origin}: not valid TOML ({exc}); fix the file") from None
    return spec_from_table(table, origin)


def read_declaration_file(path: Path) -> DatasetSpec:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the declaration ({exc})") from None
    return read_declaration(text, str(path))
