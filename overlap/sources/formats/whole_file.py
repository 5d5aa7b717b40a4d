"""A whole file read at once: a small data file's rows as Python values (`read_records`, `read_json_rows`), or
a text file the user named (`read_text_file`). Every malformed input is an `InputError` that names the file (and
line or column) and says what to do."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..places.files import first_line
from ..places.streams import capped_lines, refuse_binary, refuse_lfs_pointer
from .json_rows import loads_clean

SUPPORTED_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of a regular file the user named (`what` says which, for the message). A FIFO would
    block the reader forever and a device such as /dev/zero never ends: both are refused, one line."""
    path = Path(path)
    if not path.is_file():
        state = "not found" if not path.exists() else "not a regular file (a folder, FIFO or device)"
        raise InputError(f"{path}: {what} {state}; give a text file")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: {what} is not UTF-8 text; re-encode it as UTF-8") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or type(exc).__name__})") from None


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise InputError(f"{path}: unsupported file type; use one of {', '.join(SUPPORTED_SUFFIXES)}")
    refuse_lfs_pointer(str(path), str(path))


def _decode(path: Path, data: bytes | None = None, offset: int = 0, line: int = 1) -> str:
    """UTF-8 text of a file (or of ``data``, a part of it starting at byte ``offset`` on line ``line``); an
    InputError naming the file, line and byte when it is not UTF-8."""
    if data is None:
        data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += data[: exc.start].count(b"\n")
        raise InputError(
            f"{path}: line {line}: not UTF-8 text (byte {offset + exc.start}); re-encode the file as UTF-8"
        ) from None


def _too_deep(path: Path, line_no: int | None) -> InputError:
    where = f"line {line_no}: " if line_no is not None else ""
    return InputError(f"{path}: {where}JSON nested too deeply to read (about {sys.getrecursionlimit()} levels "
                      f"of [ or {{ or more); is this a data file?")


def _deep_line(text: str, limit: int) -> int | None:
    """The line on which the nesting of ``text`` (JSON) first goes deeper than ``limit``, ignoring strings."""
    depth, line = 0, 1
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n]', text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > limit:
                return line
        elif token in "]}":
            depth -= 1
    return None


def read_json_rows(path: Path) -> list[Any]:
    """Rows of a JSON array file, or of a JSON lines file (one value per line; blank lines skipped).

    JSON lines are read line by line (a file never sits in memory twice). Nesting too deep for the parser
    (e.g. 100k ``[``) is an InputError naming the file and line, like any other malformed line.
    """
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    refuse_binary(head, str(path))
    if path.suffix.lower() == ".json" and head.startswith(b"["):
        text = _decode(path).removeprefix("\ufeff")
        try:
            return loads_clean(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg}); is the file complete?") from None
        except RecursionError:
            raise _too_deep(path, _deep_line(text, 500)) from None
    rows = []
    offset = 0
    with open(path, "rb") as handle:
        for line_no, raw in capped_lines(handle, str(path)):
            line = _decode(path, raw, offset, line_no)
            offset += len(raw)
            if line_no == 1:
                line = line.removeprefix("\ufeff")
            if not line.strip():
                continue
            try:
                rows.append(loads_clean(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: line {line_no}: invalid JSON ({exc.msg}); is the file complete?") from None
            except RecursionError:
                raise _too_deep(path, line_no) from None
    return rows


def read_records(path: Path, columns: Iterable[str], required: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Rows of a data file as dicts holding only `columns` (absent optional columns are left out).

    `required` columns must be present in the file; their absence is an InputError naming them.
    """
    path = Path(path)
    _check_readable(path)
    columns = list(dict.fromkeys(columns))
    required = list(required)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            schema_names = pq.read_schema(path).names
            present = [c for c in columns if c in schema_names]
            _require(path, required, schema_names)
            table = pq.read_table(path, columns=present)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"{path}: cannot read parquet ({first_line(exc)}); is the file complete?") from None
        return table.to_pylist()
    if suffix == ".csv":
        import pandas as pd

        try:
            header = pd.read_csv(path, nrows=0).columns.tolist()
            _require(path, required, header)
            frame = pd.read_csv(path, usecols=[c for c in columns if c in header], dtype=str, keep_default_na=False)
        except UnicodeDecodeError:
            _decode(path)  # raises the line-numbered message
            raise
        except pd.errors.ParserError as exc:
            raise InputError(f"{path}: malformed CSV ({first_line(exc)})") from None
        except pd.errors.EmptyDataError:
            raise InputError(f"{path}: the file is empty") from None
        frame = frame.replace({"": None})
        return frame.to_dict(orient="records")
    rows = read_json_rows(path)
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON array of objects or JSON lines")
    out = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InputError(f"{path}: row {index + 1}: expected a JSON object, got {type(row).__name__}")
        seen.update(row)
        out.append({c: row[c] for c in columns if c in row})
    if rows:
        _require(path, required, seen)
    return out


def _require(path: Path, required: list[str], available: Iterable[str]) -> None:
    available = set(available)
    missing = [c for c in required if c not in available]
    if missing:
        raise InputError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}; "
            f"the file has {', '.join(sorted(available)[:12]) or 'no columns'}"
        )
