"""A dataset declaration: what the registry knows of one dataset, read from a TOML file.

Every built-in dataset is a file in `overlap/sources/registry/declarations/`; users add theirs the same way. A
declaration names its Hub (or GitHub) repo, the pinned revision, its files and subsets, and the adapter that
turns rows into items and keys, by name (`overlap.sources.registry.adapters` maps names to code). Fields a declaration
cannot express as plain values (e.g. how to find a task's per-item files) are names of code too.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w

from ..errors import InputError
from ..ids import LABEL, SCHEMES

# What a declaration holds: a dataset of tasks (`training`, `benchmark`, `reference` — what the atlas pairs —
# or plain `dataset` when unsaid), or identity data (`mapping`, `pool`).
DATASET_ROLES = ("dataset", "training", "benchmark", "reference")
ROLES = (*DATASET_ROLES, "mapping", "pool")
HOSTS = ("hub", "github")


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    hub_repo: str | None  # Hub dataset repo id, or GitHub `owner/name` when host == "github"
    revision: str | None  # pinned 40-hex commit (None: a user's dataset, resolved to a sha when read)
    files: dict[str, str]  # subset -> repo-relative file ("" when the dataset has one file)
    extracts: str  # what the adapter takes from the rows (shown by `overlap datasets`)
    adapter: str  # name of the code that reads the rows (`overlap.sources.registry.adapters.ADAPTERS`)
    aliases: tuple[str, ...] = ()
    host: str = "hub"  # hub | github
    role: str = "dataset"  # ROLES
    default_subsets: tuple[str, ...] = ()  # subsets read when none is selected ("" = all files)
    detect: tuple[str, ...] = ()  # columns that identify this dataset's rows in a bare local file
    notes: str = ""
    extra: dict = field(default_factory=dict)
    origin: str = ""  # the declaration file, as its name (built-in) or the path the user gave
    # A dataset read by named columns (adapter "columns"): {"id": "instance_id", "repo": "repo", …}; see
    # overlap.sources.rows.columns.GenericColumns for the names.
    columns: dict[str, str] = field(default_factory=dict)
    path: str | None = None  # a local file, folder or glob (a user's dataset), relative to the declaration
    split: str | None = None  # the Hub split to read (columns adapter)
    # How `overlap audit --benchmark` names each instance's image and which record fields are its reference
    # (the `[audit]` table; read by overlap.audit.study.naming, listed in AUDIT_FIELDS).
    audit: dict = field(default_factory=dict)
    declaration: str = field(default="", compare=False)  # the TOML text, shown by `overlap datasets --show`
    builtin: bool = field(default=False, compare=False)  # shipped with overlap: how its ids read is known

    @property
    def is_dataset(self) -> bool:
        """A dataset of tasks (any of DATASET_ROLES), not identity data."""
        return self.role in DATASET_ROLES

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


# Names are typed on the command line (`NAME@REV:SUBSET`) and name report folders; aliases may be Hub ids.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,99})?", re.ASCII)
_REQUIRED = ("name", "title", "revision", "adapter", "files", "extracts")
_KNOWN = (*_REQUIRED, "repo", "aliases", "host", "role", "default_subsets", "detect", "notes", "extra", "columns",
          "path", "split", "audit")
_TEXT_FIELDS = ("name", "title", "revision", "adapter", "extracts", "repo", "host", "role", "notes", "path", "split")
_LIST_FIELDS = ("aliases", "default_subsets", "detect")
_TABLE_FIELDS = ("files", "extra", "columns", "audit")
# The fields of an `[audit]` table: the image template, the instance-name rule, the tags, where the repository
# sits in the image, and the record columns of the id and the reference (docs/audit.md, "Auditing an image set").
AUDIT_FIELDS = ("image", "lower", "replace", "tags", "repo_path", "instance", "id", "base_commit", "patch",
                "test_patch", "fix_commit", "repo", "version", "created_at", "package")
# The column roles a `[columns]` table may name (overlap.sources.rows.columns.GenericColumns).
COLUMN_ROLES = ("id", "repo", "pr", "base", "patch", "text", "project", "fix", "cve", "scheme")


def _check_types(table: dict[str, Any], origin: str) -> None:
    """Each field of the type it is read as: a number where a path is expected, or a string where a list is
    (`aliases = "abc"` would be read letter by letter), is one line naming the declaration and field."""
    for key in _TEXT_FIELDS:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{origin}: {key} = {value!r} is a {_kind(value)}; give a string, e.g. "
                             f"{key} = \"{_EXAMPLES.get(key, '…')}\"")
    for key in _LIST_FIELDS:
        value = table.get(key)
        if value is not None and (not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value)):
            raise InputError(f"{origin}: {key} = {value!r}: give a list of strings, e.g. {key} = [\"one\", \"two\"]")
    for key in _TABLE_FIELDS:
        value = table.get(key)
        if value is not None and not isinstance(value, dict):
            raise InputError(f"{origin}: {key} = {value!r} is a {_kind(value)}; give a table [{key}]")


_EXAMPLES = {"repo": "owner/name", "path": "shards/*.parquet", "revision": "main", "split": "train"}


def _kind(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", list: "list", tuple: "list", dict: "table"}.get(
        type(value), type(value).__name__)


def _terminal_safe(text: str, keep: str = "") -> str:
    """A declaration's free text without control or format characters (terminal escapes such as OSC/CSI,
    bidi overrides): it is printed to the terminal by `overlap datasets` and in reports."""
    import unicodedata

    return "".join(c for c in text if c in keep or unicodedata.category(c) not in ("Cc", "Cf"))


def _columns_defaults(table: dict[str, Any], origin: str) -> dict[str, Any]:
    """A declaration with a `[columns]` table needs no code: adapter "columns", and only name, a repo or a
    path, and the id column are required."""
    columns = table["columns"]
    if not isinstance(columns, dict) or not all(isinstance(v, bool) if k == "id_fills_blanks" else isinstance(v, str)
                                                for k, v in columns.items()):
        raise InputError(f"{origin}: columns must be a table role = \"column\" (e.g. id = \"instance_id\")")
    unknown = sorted(set(columns) - set(COLUMN_ROLES) - {"id_fills_blanks"})
    if unknown:
        raise InputError(f"{origin}: unknown column role {unknown[0]!r}; use {', '.join(COLUMN_ROLES)}")
    if "id" not in columns:
        raise InputError(f"{origin}: columns needs id = \"<the id column>\" (dotted for nested fields)")
    empty = next((role for role, column in columns.items() if isinstance(column, str) and not column.strip()), None)
    if empty:
        raise InputError(f"{origin}: columns.{empty} is empty; name its column"
                         + ("" if empty == "id" else " or leave it out"))
    if columns.get("scheme", LABEL) not in (*SCHEMES, LABEL):
        raise InputError(f"{origin}: columns.scheme {columns['scheme']!r}; use one of {', '.join(SCHEMES)} (or "
                         f"{LABEL}: the id only names the row)")
    if not table.get("repo") and not table.get("path"):
        raise InputError(f"{origin}: say where the rows are: repo = \"owner/name\" (a Hub dataset) or "
                         "path = \"file, folder or glob\"")
    named = ", ".join(f"{role}={column}" for role, column in columns.items())
    return {"adapter": "columns", "title": table["name"], "revision": None, "files": {},
            "extracts": f"columns: {named}", **table}


def spec_from_table(table: dict[str, Any], origin: str, text: str = "") -> DatasetSpec:
    """One declaration table as a DatasetSpec; a missing or unknown field is an InputError naming `origin`."""
    if not isinstance(table, dict):
        raise InputError(f"{origin}: a declaration is a table of fields, not a {_kind(table)}")
    _check_types(table, origin)
    for key, example in _EXAMPLES.items():  # an empty value would be read as none given (`revision = ""`: main)
        if isinstance(table.get(key), str) and not table[key].strip():
            raise InputError(f"{origin}: {key} is empty; give one (e.g. {key} = \"{example}\") or leave the field out")
    if "name" in table and "columns" in table:
        table = _columns_defaults(table, origin)
    missing = [k for k in _REQUIRED if k not in table]
    if missing:
        raise InputError(f"{origin}: declaration lacks {', '.join(missing)}; see `overlap datasets --show cybergym` "
                         "for a complete one, or give a [columns] table (docs/datasets.md)")
    unknown = sorted(set(table) - set(_KNOWN))
    if unknown:
        raise InputError(f"{origin}: unknown field {unknown[0]!r}; a declaration has {', '.join(_KNOWN)}")
    if not isinstance(table["files"], dict) or not all(isinstance(v, str) for v in table["files"].values()):
        raise InputError(f"{origin}: files must be a table subset = \"path\" (\"\" for a one-file dataset)")
    _check_audit(table.get("audit", {}), origin)
    for key, allowed in (("role", ROLES), ("host", HOSTS)):
        if table.get(key, allowed[0]) not in allowed:
            raise InputError(f"{origin}: {key} {table[key]!r}; use one of {', '.join(allowed)}")
    for name in (table["name"], *table.get("aliases", ())):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InputError(f"{origin}: dataset name {name!r}: use letters, digits, '.', '_' and '-' (it is typed "
                             "on the command line and names report folders)")
    values = _frozen(table)
    return DatasetSpec(
        name=values["name"], title=_terminal_safe(values["title"]), hub_repo=values.get("repo"),
        revision=values["revision"], files=dict(values["files"]), extracts=_terminal_safe(values["extracts"], "\n"),
        adapter=values["adapter"],
        aliases=tuple(values.get("aliases", ())), host=values.get("host", "hub"), role=values.get("role", "dataset"),
        default_subsets=tuple(values.get("default_subsets", ())), detect=tuple(values.get("detect", ())),
        notes=_terminal_safe(values.get("notes", ""), "\n"), extra=dict(values.get("extra", {})), origin=origin,
        columns=dict(values.get("columns", {})), path=values.get("path"), split=values.get("split"),
        audit=dict(values.get("audit", {})), declaration=text)


def _check_audit(table: Any, origin: str) -> None:
    """The shape of an `[audit]` table (its template is checked when a benchmark is audited)."""
    if not isinstance(table, dict):
        raise InputError(f"{origin}: audit must be a table ([audit] image = \"…\")")
    unknown = sorted(set(table) - set(AUDIT_FIELDS))
    if unknown:
        raise InputError(f"{origin}: [audit] has an unknown field {unknown[0]!r}; use {', '.join(AUDIT_FIELDS)}")
    if table and not isinstance(table.get("image"), str):
        raise InputError(f"{origin}: [audit] needs image = \"<template>\" "
                         "(e.g. \"registry/name.{instance}:{tag}\")")


def read_declarations(text: str, origin: str) -> list[DatasetSpec]:
    """A TOML file's declarations: the file is one declaration, or holds several as `[[dataset]]` tables."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{origin}: not valid TOML ({exc}); fix the file") from None
    except RecursionError:  # arrays or tables nested thousands deep: no declaration is shaped so
        raise InputError(f"{origin}: not valid TOML here (values nested too deep to read); fix the file") from None
    if set(table) == {"dataset"} and isinstance(table["dataset"], list):
        return [spec_from_table(t, f"{origin} [[dataset]] {i + 1}", text) for i, t in enumerate(table["dataset"])]
    return [spec_from_table(table, origin, text)]


def read_declaration(text: str, origin: str) -> DatasetSpec:
    """A TOML text holding one declaration as a DatasetSpec."""
    (spec,) = read_declarations(text, origin)
    return spec


def read_declaration_file(path: Path) -> list[DatasetSpec]:
    """The declarations of a TOML file; a relative `path` in one is relative to the file's folder."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark (Windows editors write one) is no TOML
    except OSError as exc:
        raise InputError(f"{path}: cannot read the declaration ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file; a declaration is TOML text") from None
    specs = read_declarations(text, str(path))
    return [replace(s, path=str(path.parent / s.path)) if s.path and not Path(s.path).is_absolute() else s
            for s in specs]


def declaration_text(spec: DatasetSpec) -> str:
    """The TOML of a declaration: as written in its file, else (a declaration made in Python) serialised."""
    if spec.declaration:
        return spec.declaration if spec.declaration.endswith("\n") else spec.declaration + "\n"
    table: dict[str, Any] = {"name": spec.name, "title": spec.title}
    optional = {"aliases": list(spec.aliases), "role": spec.role, "host": spec.host, "repo": spec.hub_repo,
                "revision": spec.revision, "path": spec.path, "split": spec.split, "adapter": spec.adapter,
                "default_subsets": list(spec.default_subsets), "detect": list(spec.detect),
                "extracts": spec.extracts, "notes": spec.notes, "files": spec.files, "columns": spec.columns,
                "extra": spec.extra, "audit": spec.audit}
    table |= {k: v for k, v in optional.items() if v not in (None, "", [], {})}
    return tomli_w.dumps(_plain(table))


def _plain(value: Any) -> Any:
    """Tuples back to lists, for the TOML writer."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
