"""What a result folder is, recognised from what is in it, and the one check every folder-reading command makes.

`folder_kind(folder)` reads the folder's marker (`.overlap-output`, when the writer left one) and its
summary.json (`kind` and `schema_version`, see `jsonout.versioned`), and looks at the files otherwise: a
compare, matrix or ngram result, a filtered split (filter.json), a card folder (README.md + .overlap/),
an empty folder, or something else. `require_kind(folder, kind, command)` returns the parsed summary when
the folder is of `kind` and raises InputError (exit 2, one line: what the folder is and which command reads
it) otherwise, so a command never reads another command's folder and crashes on a missing key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..jsonout import SCHEMA_VERSION, validate_output

MARKER_FILE = ".overlap-output"
# Folder kind → the command that writes it and reads it back.
WRITERS = {
    "compare": "overlap compare --out",
    "matrix": "overlap matrix --out",
    "ngram": "overlap ngram --out",
    "filter": "overlap filter --out",
    "card": "overlap card --out",
}
READERS = {
    "compare": "`overlap report` and `overlap card`",
    "matrix": "no other command (open its summary.json and CSV files directly)",
    "ngram": "no other command (open its summary.json and CSV files directly)",
    "filter": "training and `overlap filter --push-to-hub` (it is a dataset, not a result to report)",
    "card": "the Hub (upload README.md and .overlap/, or use `overlap card --push`)",
}
# The kinds whose writer leaves a summary.json (filter writes filter.json, card README.md and .overlap/).
SUMMARY_KINDS = ("compare", "matrix", "ngram")
# Top-level keys a compare summary must have for the report and card to be drawn from it.
_COMPARE_KEYS = {"train": dict, "benches": list, "tool": dict}


@dataclass
class FolderKind:
    """What a folder holds: `kind` (compare, matrix, ngram, filter, card, empty, other), why it is not
    readable (`problem`, empty when it is) and its parsed summary.json when it has one."""

    kind: str
    problem: str = ""
    summary: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        if self.kind in WRITERS:
            return f"a result folder of `{WRITERS[self.kind].removesuffix(' --out')}`"
        if self.kind == "empty":
            return "an empty folder"
        return "not an overlap result folder"


def _marker_kind(folder: Path) -> str | None:
    """The kind the writer recorded in `.overlap-output` (JSON with `kind`, or the kind as plain text)."""
    path = folder / MARKER_FILE
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text.split()[0] if text else None
    if isinstance(data, dict):
        return str(data.get("kind") or data.get("command") or "") or None
    return str(data) if isinstance(data, str) else None


def _summary_kind(summary: dict[str, Any]) -> str:
    """The kind of a summary.json: its `kind`, or for files without one (older overlap) its shape."""
    kind = summary.get("kind")
    if isinstance(kind, str) and kind:
        return kind
    if "cells" in summary and "couples" in summary:
        return "matrix"
    if "flags" in summary and "params" in summary:
        return "ngram"
    if isinstance(summary.get("benches"), list) and isinstance(summary.get("train"), dict):
        return "compare"
    return "other"


def _no_constant(name: str) -> Any:
    """NaN and ±Infinity, which Python's JSON reader takes but JSON has not: overlap never writes them, and a
    NaN share passes every schema bound (no comparison holds) to be printed as "nan%" in a published card."""
    raise ValueError(f"{name} is not a JSON number")


def folder_kind(folder: Path) -> FolderKind:
    """Recognise what `folder` holds (see the module docstring); never raises on its content."""
    folder = Path(folder)
    if not folder.is_dir():
        return FolderKind("other", f"{folder}: not a folder")
    marker = _marker_kind(folder)
    summary_path = folder / "summary.json"
    if summary_path.is_file():
        try:
            summary = json.loads(summary_path.read_bytes().decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, json.JSONDecodeError, OSError, RecursionError, ValueError) as exc:
            line = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
            why = f" ({exc})" if type(exc) is ValueError else line
            return FolderKind(marker or "other", f"its summary.json is not valid JSON{why}")
        if not isinstance(summary, dict):
            return FolderKind(marker or "other", "its summary.json is not a JSON object")
        kind = marker if marker in WRITERS else _summary_kind(summary)
        version = summary.get("schema_version")
        if version is None:
            return FolderKind(kind, "its summary.json has no schema_version (written by an older overlap)",
                              summary)
        if version != SCHEMA_VERSION:
            return FolderKind(kind, f"its summary.json has schema_version {version!r} (this overlap reads "
                                    f"{SCHEMA_VERSION})", summary)
        return FolderKind(kind if kind in WRITERS else "other", "", summary)
    if marker in WRITERS:  # a result whose summary.json was lost is said so, not read as one without its keys
        return FolderKind(marker, "its summary.json is missing" if marker in SUMMARY_KINDS else "")
    if (folder / "filter.json").is_file():
        return FolderKind("filter")
    if (folder / "README.md").is_file() and (folder / ".overlap").is_dir():
        return FolderKind("card")
    if not any(folder.iterdir()):
        return FolderKind("empty", "no summary.json")
    return FolderKind("other", "it has no summary.json")


def require_kind(folder: Path, kind: str, command: str) -> dict[str, Any]:
    """The parsed summary.json of `folder` when it is a readable `kind` folder; else InputError, one line:
    what the folder is and which command reads it."""
    found = folder_kind(folder)
    wanted = f"`overlap {command}` reads a folder written by `{WRITERS[kind]}`"
    if found.kind != kind:
        what = found.describe()
        why = f" ({found.problem})" if found.problem else ""
        reader = f"; it is read by {READERS[found.kind]}" if found.kind in READERS else ""
        raise InputError(f"{folder}: {what}{why}{reader}; {wanted}")
    if found.problem:
        raise InputError(f"{folder}: {found.problem}; re-run `{WRITERS[kind]}` with this overlap ({wanted})")
    if kind == "compare":
        missing = [k for k, t in _COMPARE_KEYS.items() if not isinstance(found.summary.get(k), t)]
        bad = [b for b in found.summary.get("benches") or [] if not isinstance(b, dict) or "bench" not in b]
        if missing or bad:
            what = f"no '{missing[0]}'" if missing else "a benchmark without its name"
            raise InputError(f"{folder}/summary.json: a compare summary with {what}; re-run `{WRITERS[kind]}`")
        _valid_summary(folder, found.summary, kind)
    return found.summary


def _valid_summary(folder: Path, summary: dict[str, Any], kind: str) -> None:
    """The summary as its shipped JSON schema says (a count written as text, a table that is null): an edited
    or damaged file is one line naming the field, never an internal error midway through a report."""
    import jsonschema

    try:
        validate_output(kind, summary)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise InputError(f"{folder}/summary.json: {where}: {exc.message[:200]}; re-run `{WRITERS[kind]}`") from None
