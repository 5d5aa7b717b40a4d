"""Where a dataset's files come from (Hub, Hub cache, local folder, single file, a glob's files, a written split).

A `FileSource` hands out local paths for repo-relative file names and records what was read
(sha256, rows) for provenance; `formats/` reads them.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import HubUnavailableError, InputError
from ...model import FileRecord
from ...progress import progress_enabled
from . import hub_net
from .hub_cache import check_blob

HEX40 = re.compile(r"^[0-9a-f]{40}$")
COMPRESSED_SUFFIXES = (".gz", ".zst")  # the forms every reader of a format also takes (`naming.COMPRESSIONS`)


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
