"""Targets of a batch audit: read from a CSV or JSON-lines file, each with its own reference and a key.

A row names what to audit (``image``: a registry reference ``docker://…``; or ``path``: a local target) and
optionally ``set``, ``instance_id``, ``base_commit``, ``patch``, ``test_patch``, ``fix_commit``,
``repo_path`` (and, for the network route, ``repo``, ``version``, ``created_at``, ``package``). ``patch`` and
``test_patch`` hold the diff text, or (a value without a line break) the name of a file holding it, relative to
the targets file. A row that cannot be used becomes a failed target with
its reason, so one bad row never stops the others; a file that cannot be read at all is an InputError.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ... import __version__
from ...errors import InputError

COLUMNS = ("image", "path", "set", "instance_id", "base_commit", "patch", "test_patch", "fix_commit", "repo_path")
# what the network route reads of a task besides its fix (overlap.audit.network): optional, a row without them
# is audited as before
RECORD_COLUMNS = ("repo", "version", "created_at", "package")
TEXT_LIMIT = 64 << 20  # a patch file larger than this is refused (the audit's own patch limit)


@dataclass(frozen=True)
class BatchTarget:
    set: str
    target: str  # "docker://…" (kind image) or an absolute local path (kind path); "" when the row had none
    kind: str  # image | path
    instance_id: str | None = None
    base_commit: str | None = None
    patch: str | None = None  # the fix as diff text
    test_patch: str | None = None  # the hidden tests as diff text
    fix_commit: str | None = None
    repo_path: str | None = None
    error: str | None = None  # why the row cannot be audited (reported as a failed target)
    repo: str | None = None  # owner/name of the repository (the network route's package)
    version: str | None = None  # the task's release series (SWE-bench's version column)
    created_at: str | None = None  # when the task was opened
    package: str | None = None  # ECOSYSTEM:NAME, overriding the mapping

    @property
    def label(self) -> str:
        return self.instance_id or self.target or "?"

    def to_dict(self) -> dict:
        return asdict(self)

    def reference(self) -> dict:
        """What the report records of the reference: ids as given, patches by their SHA-256."""
        return {"base_commit": self.base_commit, "fix_commit": self.fix_commit,
                "patch_sha256": _sha(self.patch), "test_patch_sha256": _sha(self.test_patch)}

    def key(self, options: dict, image_digest: str | None = None) -> str:
        """Same inputs, same key: the set, the target, the reference and every option that changes a result
        (and the tool's version, so an upgraded audit runs again). An image's inputs are the manifest its
        reference resolves to (``image_digest``), not the reference: a tag pushed again with other content is
        another target."""
        data = {"v": 1, "tool": __version__, "set": self.set, "kind": self.kind, "target": self.target,
                "instance_id": self.instance_id, "repo_path": self.repo_path, "options": options,
                **self.reference()}
        if options.get("index") is not None:  # the network route reads these too
            data["record"] = {k: getattr(self, k) for k in RECORD_COLUMNS}
        if image_digest is not None:
            data["image_digest"] = image_digest
        if self.error is not None:
            # rows that cannot be used share an empty target: without their reason (which names the row) every
            # bad row after the first would count as a repeat of it and its own reason would never be shown
            data["error"] = self.error
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _sha(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest() if text else None


def file_name(target: BatchTarget, key: str) -> str:
    """The result file of a target: readable (its id) and unique (its key)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", target.label.replace("docker://", "")).strip("._")[:80] or "target"
    return f"{slug}-{key[:16]}.json"


def image_reference(value: str) -> str:
    """A registry reference as ``docker://HOST/REPO:TAG`` (the scheme added when missing)."""
    value = value.strip()
    return value if value.startswith("docker://") else "docker://" + value


def _cell(row: dict, name: str) -> str | None:
    value = row.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        value = json.dumps(value) if isinstance(value, list | dict) else str(value)
    return value if value.strip() else None


def _patch(value: str | None, folder: Path, column: str) -> str:
    """A diff given as text, or a file named relative to the targets file (a value without a line break)."""
    if value is None or "\n" in value:
        return value
    path = Path(value) if os.path.isabs(value) else folder / value
    try:
        if not path.is_file():
            raise InputError(f"{column} {value}: neither diff text nor a file")
        if path.stat().st_size > TEXT_LIMIT:
            raise InputError(f"{column} {value}: larger than {TEXT_LIMIT >> 20} MiB")
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if not text.strip():  # an empty file would run the row with no reference at all, silently
            raise InputError(f"{column} {value}: the file is empty; give the diff")
        return text
    except OSError as exc:
        raise InputError(f"{column} {value}: cannot read it ({exc.strerror or exc})") from None


def target_of(row: dict, folder: Path, default_set: str, where: str) -> BatchTarget:
    """One row as a target; a row that cannot be used keeps its reason in ``error``."""
    if not isinstance(row, dict):
        return BatchTarget(default_set, "", "path", error=f"{where}: not an object")
    if None in row:  # csv.DictReader keeps the cells past the header's last column under None
        extra = row[None]
        return BatchTarget(default_set, "", "path",
                           error=f"{where}: {len(row) - 1 + len(extra)} cells, the header has {len(row) - 1} "
                                 "(quote a cell that holds a comma)")
    image, path = _cell(row, "image"), _cell(row, "path")
    fields = {k: _cell(row, k) for k in ("instance_id", "base_commit", "fix_commit", "repo_path", *RECORD_COLUMNS)}
    set_name = _cell(row, "set") or default_set
    if image and path:
        return BatchTarget(set_name, "", "path", **fields, error=f"{where}: both image and path; give one")
    if not image and not path:
        return BatchTarget(set_name, "", "path", **fields, error=f"{where}: neither image nor path")
    if image:
        kind, target = "image", image_reference(image)
    else:
        kind, target = "path", os.path.abspath(path if os.path.isabs(path) else folder / path)
    try:
        patch = _patch(_cell(row, "patch"), folder, "patch")
        test_patch = _patch(_cell(row, "test_patch"), folder, "test_patch")
    except InputError as exc:
        return BatchTarget(set_name, target, kind, **fields, error=f"{where}: {exc}")
    return BatchTarget(set_name, target, kind, patch=patch, test_patch=test_patch, **fields)


def read_rows(path: Path) -> list[dict]:
    """The rows of a CSV file (by its suffix) or of JSON lines / a JSON array."""
    if path.is_dir():
        raise InputError(f"--targets {path}: a folder, not a file; give a CSV or JSON-lines file of targets")
    if not path.is_file():
        raise InputError(f"--targets {path}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is no part of the header
    except UnicodeDecodeError:
        raise InputError(f"--targets {path}: not UTF-8 text (give CSV or JSON lines)") from None
    except OSError as exc:
        raise InputError(f"--targets {path}: cannot read it ({exc.strerror or exc})") from None
    if path.suffix.lower() == ".csv" or not text.lstrip().startswith(("{", "[")):
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # patches in cells are long
        try:
            # lines end at \n, \r\n or \r only: `str.splitlines` also cuts at U+2028, U+0085, \f… inside a cell
            rows = list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise InputError(f"--targets {path}: malformed CSV ({exc})") from None
        header = next(csv.reader(io.StringIO(text, newline="")), [])
        repeated = sorted({h for h in header if header.count(h) > 1})
        if repeated:  # the reader would keep only the last cell of a repeated column, silently
            raise InputError(f"--targets {path}: column {repeated[0]!r} appears twice in the header; keep one")
        if rows and not ({"image", "path"} & set(rows[0])):
            raise InputError(f"--targets {path}: no image or path column (columns: {', '.join(COLUMNS)})")
        return rows
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            rows = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"--targets {path}: invalid JSON ({exc})") from None
        if not isinstance(rows, list):
            raise InputError(f"--targets {path}: expected a JSON array of objects or JSON lines")
        return rows
    rows = []
    for n, line in enumerate(text.split("\n"), 1):  # JSON lines end at \n alone; U+2028 may sit in a string
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"--targets {path}: line {n}: invalid JSON ({exc.msg if hasattr(exc, 'msg') else exc})"
                             ) from None
    return rows


def read_targets(path: str | Path, default_set: str | None = None) -> list[BatchTarget]:
    """The targets of a file; ``default_set`` names the set of rows without one (default: the file's stem)."""
    path = Path(path)
    rows = read_rows(path)
    if not rows:
        raise InputError(f"--targets {path}: holds no target")
    folder = path.resolve().parent
    name = default_set or path.stem
    return [target_of(row, folder, name, f"row {i}") for i, row in enumerate(rows, 1)]
