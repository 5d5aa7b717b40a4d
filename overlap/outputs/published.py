"""What may leave the machine: provenance without local paths, and data-derived names made safe as file names.

- `public_provenance(prov)`: a provenance dict (as `Provenance.to_dict()` writes it) with repo id,
  revision, adapter, subsets and every file's name, sha256 and rows, and no local path: `location` goes,
  an absolute or `..` file path becomes its file name. Published files (the card section, `.overlap/*.json`,
  a pushed split's metadata) use it; local reports (summary.json, report.html) keep the full provenance.
- `describe_source(prov)`: one line naming a source for a reader: `owner/name@<revision>`, or for local
  inputs `local files a.parquet (sha256 7eaf47c1…)`.
- `safe_name(name)`: the one rule that turns a dataset/benchmark name into a file or folder name: no
  separators, no leading dot, nothing outside `[A-Za-z0-9._+=@-]`, at most 100 characters. Every place a
  data-derived name becomes a path uses it (`.overlap/<bench>.json`, `<bench>_clean_ids.txt`, …).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

PUBLIC_PROVENANCE_KEYS = ("name", "origin", "repo_id", "revision", "adapter", "subsets", "files")
LOCAL_ORIGINS = {"local-folder", "local-file"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]+")
MAX_NAME = 100


def _public_file_path(path: Any) -> str:
    text = str(path or "")
    posix, windows = PurePosixPath(text), PureWindowsPath(text)
    if posix.is_absolute() or windows.is_absolute() or text.startswith("~") or ".." in posix.parts \
            or ".." in windows.parts:
        return windows.name if "\\" in text else posix.name
    return text


def public_provenance(prov: dict[str, Any] | None) -> dict[str, Any]:
    """`prov` without anything that names a local path (see the module docstring)."""
    prov = dict(prov or {})
    out: dict[str, Any] = {k: prov.get(k) for k in PUBLIC_PROVENANCE_KEYS if k != "files"}
    out["subsets"] = list(prov.get("subsets") or [])
    if out.get("name") is not None:
        out["name"] = _public_file_path(out["name"])
    out["files"] = [
        {"path": _public_file_path(f.get("path")), "sha256": f.get("sha256"), "rows": f.get("rows")}
        for f in prov.get("files") or [] if isinstance(f, dict)
    ]
    if isinstance(prov.get("in_memory"), dict):  # what an in-memory input was: names no local path
        out["in_memory"] = dict(prov["in_memory"])
    return out


def memory_description(memory: dict[str, Any]) -> str:
    """An in-memory input as a reader names it: `datasets.Dataset (split train, fingerprint 5823…, 11 rows)`."""
    parts = [f"split {memory['split']}" if memory.get("split") else "",
             f"fingerprint {memory['fingerprint']}" if memory.get("fingerprint") else "",
             f"{memory['rows']:,} rows" if isinstance(memory.get("rows"), int) else ""]
    detail = ", ".join(p for p in parts if p)
    return f"in-memory {memory.get('type') or 'dataset'}" + (f" ({detail})" if detail else "")


def describe_source(prov: dict[str, Any] | None) -> str:
    """`repo@revision` for a pinned Hub source, what was given for an in-memory one, else the local files with
    their sha256 (no path)."""
    if isinstance((prov or {}).get("in_memory"), dict):
        return memory_description(prov["in_memory"])
    prov = public_provenance(prov)
    if prov.get("origin") not in LOCAL_ORIGINS and prov.get("repo_id") and prov.get("revision"):
        return f"{prov['repo_id']}@{prov['revision']}"
    files = ", ".join(f"{f['path']} (sha256 {str(f['sha256'])[:12]}…)" for f in prov["files"][:5])
    more = f" and {len(prov['files']) - 5} more" if len(prov["files"]) > 5 else ""
    label = f"{prov.get('repo_id') or prov.get('name')} files"
    if prov.get("origin") in LOCAL_ORIGINS:
        label = f"{prov['repo_id']} as local files" if prov.get("repo_id") else "local files"
    return f"{label} {files}{more}" if files else f"{prov.get('repo_id') or prov.get('name')} (no files recorded)"


def safe_name(name: Any) -> str:
    """`name` as one safe path component (see the module docstring); a changed or cut name gets a short
    hash of the original so two different names never meet in one file."""
    text = str(name)
    safe = _UNSAFE.sub("_", text).lstrip(".-_") or "dataset"
    if safe != text or len(safe) > MAX_NAME:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe[:MAX_NAME - 9]}-{digest}"
    return safe


# An absolute path inside a string: POSIX (`/home/me/x`, not the `//host/…` of a URL), `~/…` or `C:\…`. The
# closing tag of HTML in Markdown (`</sub>`, `</a>`, or escaped as text: `\</b\>`) is `/` + one word right between
# `<` and `>`: not a path.
_ABS_PATH = re.compile(r"(?<![\w.:/~-])(?!(?<=<)/[A-Za-z][A-Za-z0-9-]*\s*\\?>)(?:~|/(?=[^\s/]))[^\s'\"<>()\[\],;|`]*"
                       r"|\b[A-Za-z]:\\[^\s'\"<>()\[\],;|`]*")


def _path_name(match: re.Match) -> str:
    text = match.group(0).rstrip("\\/")
    name = re.split(r"[\\/]", text)[-1]
    return name or "…"


def scrub_paths(value: Any) -> Any:
    """`value` (JSON-like) with every absolute local path inside its strings replaced by its last part:
    the safety net under `public_provenance` for free text (reasons, parameters) in published files."""
    if isinstance(value, str):
        return _ABS_PATH.sub(_path_name, value)
    if isinstance(value, dict):
        return {k: scrub_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_paths(v) for v in value]
    return value
