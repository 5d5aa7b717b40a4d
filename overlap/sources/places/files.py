"""Where a dataset's files come from (Hub, Hub cache, local folder, single file) and how they are read.

A `FileSource` hands out local paths for repo-relative file names and records what was read
(sha256, rows) for provenance. Readers turn `.jsonl`, `.json`, `.parquet` and `.csv` files into
records, reading only the columns an adapter asks for, and turn every malformed input into an
`InputError` that names the file (and line or column) and says what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import HubUnavailableError, InputError
from ...model import FileRecord
from ...progress import progress_enabled
from ..json_rows import loads_clean
from . import hub_net
from .hub_cache import check_blob
from .streams import capped_lines, refuse_binary, refuse_lfs_pointer

HEX40 = re.compile(r"^[0-9a-f]{40}$")
SUPPORTED_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")
COMPRESSED_SUFFIXES = (".gz", ".zst")  # the forms every reader of a format also takes (`batches.COMPRESSIONS`)


def of_format(name: str, suffix: str) -> bool:
    """Whether a file is of the format `suffix` names, plain or compressed (`x.jsonl`, `x.jsonl.gz`,
    `x.jsonl.zst`): a layout that reads a format reads it in every form the readers take."""
    for codec in COMPRESSED_SUFFIXES:
        if name.lower().endswith(codec):
            name = name[: -len(codec)]
            break
    return name.endswith(suffix)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class FileSource:
    """Base: resolves repo-relative names to local files and remembers what was read."""

    origin: str
    location: str | None = None
    repo_id: str | None = None
    revision: str | None = None
    records: list[FileRecord] = field(default_factory=list)

    def fetch(self, relpath: str) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    def exists(self, relpath: str) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def record(self, relpath: str, path: Path, rows: int | None) -> None:
        self.records.append(FileRecord(path=relpath, sha256=sha256_of(path), rows=rows))


@dataclass
class LocalFolder(FileSource):
    """A local folder laid out like the Hub (or GitHub) repo."""

    root: Path = Path(".")

    def fetch(self, relpath: str) -> Path:
        path = self.root / relpath
        if not path.is_file():
            raise InputError(
                f"{path}: file not found; the folder given for this dataset must be laid out like its "
                f"repo (expected '{relpath}' inside {self.root}){self._nearby(relpath)}"
            )
        return path

    def _nearby(self, relpath: str) -> str:
        """Where the file is when the folder given is one level off the repo's (its parent, or a folder in it)."""
        name = relpath.rsplit("/", 1)[-1]
        parts = relpath.split("/")
        if len(parts) > 1 and (self.root / name).is_file() and self.root.name == parts[-2]:
            return f"; this folder holds {name} itself: give {self.root.parent}, or the file"
        try:
            below = sorted(p for p in self.root.iterdir() if p.is_dir() and (p / relpath).is_file())
        except OSError:
            return ""
        return f"; {below[0]} is laid out so: give that folder" if below else ""

    def exists(self, relpath: str) -> bool:
        return (self.root / relpath).is_file()


@dataclass
class HubRepo(FileSource):
    """A Hub dataset repo at a revision, through huggingface_hub (honours HF_HOME, HF_HUB_CACHE,
    HF_HUB_OFFLINE, read when called so a changed environment is respected)."""

    def _cache_dir(self) -> str | None:
        if os.environ.get("HF_HUB_CACHE"):
            return os.environ["HF_HUB_CACHE"]
        if os.environ.get("HF_HOME"):
            return str(Path(os.environ["HF_HOME"]) / "hub")
        return None

    def fetch(self, relpath: str) -> Path:
        from huggingface_hub import errors as hf_errors
        from huggingface_hub import hf_hub_download  # imported here: heavy, needed only to download

        if not progress_enabled():  # huggingface_hub's own bars follow the same rule as ours
            from huggingface_hub.utils import disable_progress_bars

            disable_progress_bars()
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
        # No network: the cache, at once, instead of half a minute of retries (hub_net).
        down = None if offline else hub_net.unreachable()
        hint = (
            f"download '{relpath}' from the Hub dataset {self.repo_id} at {self.revision} on a machine "
            f"with internet (or fill the Hub cache), or pass --data NAME=DIR with a folder laid out like "
            f"the repo"
        )
        try:
            local = hf_hub_download(
                self.repo_id,
                relpath,
                repo_type="dataset",
                revision=self.revision,
                cache_dir=self._cache_dir(),
                local_files_only=offline or down is not None,
            )
        except (hf_errors.LocalEntryNotFoundError, hf_errors.OfflineModeIsEnabled):
            why = hub_net.down_hint(down) if down else "HF_HUB_OFFLINE is set"
            raise HubUnavailableError(
                f"{self.repo_id}@{self.revision}: '{relpath}' is not in the Hub cache and {why}; {hint}"
            ) from None
        except _remote_entry_missing(hf_errors):
            raise InputError(f"{self.repo_id}@{self.revision}: the repo has no file '{relpath}'") from None
        except hf_errors.RevisionNotFoundError:
            raise InputError(
                f"{self.repo_id}: revision '{self.revision}' not found; give a commit sha, branch or tag "
                "that exists"
            ) from None
        except hf_errors.RepositoryNotFoundError:
            raise InputError(f"{self.repo_id}: no such Hub dataset (or it is private and no token is set)") from None
        except (*net_errors(), hf_errors.HfHubHTTPError) as exc:
            raise HubUnavailableError(
                f"{self.repo_id}@{self.revision}: download of '{relpath}' failed ({type(exc).__name__}); "
                f"{hint}"
            ) from None
        path = Path(local)
        # The snapshot folder name is the resolved commit, whatever revision (branch, tag) was asked for.
        parts = path.parts
        if "snapshots" in parts:
            snap = parts[parts.index("snapshots") + 1]
            if HEX40.match(snap):
                self.revision = snap
        if self.origin == "hub" and (offline or down is not None):
            self.origin = "hub-cache"
        check_blob(path, relpath, f"{self.repo_id}@{self.revision}")
        return path


@dataclass
class SingleFile(FileSource):
    """One local file holding a dataset's rows (any of the supported formats)."""

    path: Path = Path(".")

    def fetch(self, relpath: str) -> Path:
        # Only a regular file: a FIFO blocks the reader forever and /dev/zero never ends.
        if not self.path.is_file():
            what = "not found" if not self.path.exists() else "not a regular file (a folder, FIFO or device)"
            raise InputError(f"{self.path}: {what}; give the dataset's file or its folder")
        return self.path

    def exists(self, relpath: str) -> bool:
        return self.path.is_file()


@dataclass
class NamedFiles(FileSource):
    """Local files under the names the provenance records them by (the files a glob matched)."""

    paths: dict[str, Path] = field(default_factory=dict)

    def fetch(self, relpath: str) -> Path:
        if relpath not in self.paths or not self.paths[relpath].is_file():
            raise InputError(f"{relpath}: no longer matched by {self.location} (or not a file); run the compare "
                             "again")
        return self.paths[relpath]

    def exists(self, relpath: str) -> bool:
        return relpath in self.paths and self.paths[relpath].is_file()


def net_errors() -> tuple[type[BaseException], ...]:
    """What a failed Hub request raises: OS errors, and the HTTP client's own (httpx, not OSError)."""
    try:
        import httpx  # huggingface_hub's HTTP client (>= 1.0)
    except ImportError:  # pragma: no cover - older huggingface_hub (requests: its errors are OSErrors)
        return (OSError,)
    return (OSError, httpx.HTTPError)


def _remote_entry_missing(hf_errors: Any) -> type[BaseException]:
    # huggingface_hub >= 1.0 splits the remote case out of EntryNotFoundError (whose local subclass
    # means "not cached"); older versions only have EntryNotFoundError.
    return getattr(hf_errors, "RemoteEntryNotFoundError", hf_errors.EntryNotFoundError)


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


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass
class SplitSource(FileSource):
    """The shards of a written split standing in for the files they were cut from (repo-relative name →
    shard), so the same adapter can read a filtered split back and re-derive its keys."""

    shards: dict[str, Path] = field(default_factory=dict)

    def fetch(self, relpath: str) -> Path:
        return self.shards[relpath]

    def exists(self, relpath: str) -> bool:
        return relpath in self.shards

    def listed(self, suffix: str) -> list[str]:
        return sorted(name for name in self.shards if of_format(name, suffix))
