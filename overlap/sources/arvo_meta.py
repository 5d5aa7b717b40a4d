"""The ARVO first-release pool (GitHub n132/ARVO-Meta, pinned) and other OSS-Fuzz pools.

A *pool* is the upstream population two datasets were drawn from; chance baselines
(`overlap.stats`) need it with each bug's OSS-Fuzz project. The pool table (`Pool.table`, pandas) has one
row per bug:

| column | meaning |
|---|---|
| `canonical_id` | canonical OSS-Fuzz id (new tracker id when the ARVO mapping knows the old one) |
| `raw_id` | the id as the source gives it (ARVO-Meta: the old Monorail id) |
| `old_id` | the old Monorail id, null for bugs that only have a new id |
| `project` | OSS-Fuzz project (null → the `unknown` stratum of the baselines) |
| `fuzzer`, `sanitizer`, `crash_type`, `severity`, `repo_addr` | as in the ARVO-Meta file |
| `fix_commit` | list of fix commit ids (ARVO-Meta gives a string or a list) |
| `crash_state` | the ClusterFuzz `Crash State:` frames of the first report comment, joined by newlines |

Where the pool comes from:

- `--data arvo-meta=DIR`: a clone of n132/ARVO-Meta (or any folder laid out like it), read from
  `DIR/archive_data/meta/*.json`; a folder that directly holds the `<id>.json` files works too. The git
  tree id of the folder is computed and compared with the pinned tree, so a clone at the pinned commit is
  recognised as exactly the pinned data.
- `--data arvo-meta=FILE` or `--pool FILE`: a user-given pool file (CSV, JSON lines, JSON array or
  parquet) with columns `id` (any OSS-Fuzz id form: `arvo:1065`, `42470443`, …; `localId` is accepted
  too) and `project` (empty cells allowed); the other columns above are read when present.
- Online, nothing given: one GitHub API call lists the pinned tree, then the 4,993 files are downloaded
  one by one (8 at a time) into the overlap cache, each checked against its git blob id. **This is
  slow** (minutes) and needs api.github.com; clone the repo once instead:
  `git clone https://github.com/n132/ARVO-Meta && git -C ARVO-Meta checkout 7e1a64f5` then
  `--data arvo-meta=ARVO-Meta`. Offline (HF_HUB_OFFLINE=1 or OVERLAP_OFFLINE=1) only the cache is used.

`arvo-projects` reads ARVO's `arvo/NewTracker/metadata.jsonl` (new tracker id → project) into the same
pool shape.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import HubUnavailableError, InputError
from ..ids.ossfuzz import OLD_ID_LIMIT, OssFuzzMapping, trailing_int
from ..model import FileRecord, Problem, Provenance
from .files import FileSource, LocalFolder, SingleFile, read_records
from .github import GithubRepo, cache_root, offline
from .registry import DatasetSpec, get_spec, register

META_DIR = "archive_data/meta"
META_TREE = "df107a1b3bc839de773b477a49e86d2d9ee75ff9"  # git tree of archive_data/meta at the pinned commit
TREE_URL = "https://api.github.com/repos/{repo}/git/trees/{tree}"
DOWNLOAD_WORKERS = 8

POOL_COLUMNS = {
    "canonical_id": "Int64",
    "raw_id": "Int64",
    "old_id": "Int64",
    "project": "string",
    "fuzzer": "string",
    "sanitizer": "string",
    "crash_type": "string",
    "severity": "string",
    "fix_commit": "object",
    "crash_state": "string",
    "repo_addr": "string",
}
_TEXT_FIELDS = ("project", "fuzzer", "sanitizer", "crash_type", "severity", "repo_addr")


@dataclass
class Pool:
    """A pool table with where it came from and what was skipped while reading it."""

    name: str
    table: pd.DataFrame
    provenance: Provenance
    problems: list[Problem] = field(default_factory=list)
    mapped: bool = False  # canonical ids derived with an old→new mapping
    tree_sha1: str | None = None  # git tree id of the meta folder as read (None for a pool file)
    pinned_tree: str | None = None

    def __len__(self) -> int:
        return len(self.table)

    def canonicalize(self, mapping: OssFuzzMapping | None) -> Pool:
        """The pool with canonical ids from `mapping` (old → new); repeated canonical ids keep their first
        row and are counted as a `duplicate_id` problem. Without a mapping canonical = raw id."""
        table = self.table.copy()
        raw = table["raw_id"]
        if mapping is not None:
            table["canonical_id"] = raw.map(lambda v: mapping.canonical(int(v)) if pd.notna(v) else pd.NA)
            table["old_id"] = raw.map(lambda v: _old_id(int(v), mapping) if pd.notna(v) else pd.NA)
        else:
            table["canonical_id"] = raw
            table["old_id"] = raw.where(raw < OLD_ID_LIMIT)
        table = _typed(table)
        problems = [p for p in self.problems if p.what != "duplicate_id"]
        dup = table["canonical_id"].duplicated()
        if dup.any():
            problems.append(Problem("duplicate_id", int(dup.sum()), str(table.loc[dup, "raw_id"].iloc[0]),
                                    "the same bug listed twice (e.g. under its old and its new id); first row kept"))
            table = table[~dup].reset_index(drop=True)
        return replace(self, table=table, problems=problems, mapped=mapping is not None)

    @property
    def matches_pinned_tree(self) -> bool | None:
        if self.tree_sha1 is None or self.pinned_tree is None:
            return None
        return self.tree_sha1 == self.pinned_tree

    def summary(self) -> dict[str, Any]:
        """JSON-ready description for reports."""
        projects = self.table["project"]
        return {
            "name": self.name,
            "items": int(len(self.table)),
            "projects": int(projects.dropna().nunique()),
            "items_without_project": int(projects.isna().sum()),
            "canonical_ids_mapped": self.mapped,
            "tree_sha1": self.tree_sha1,
            "matches_pinned_tree": self.matches_pinned_tree,
            "problems": [p.__dict__ for p in self.problems],
            "provenance": self.provenance.to_dict(),
        }


def _old_id(raw: int, mapping: OssFuzzMapping) -> int | None:
    return raw if raw < OLD_ID_LIMIT else mapping.new_to_old.get(raw)


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    out = table.reindex(columns=list(POOL_COLUMNS))
    for column, dtype in POOL_COLUMNS.items():
        if dtype == "object":
            out[column] = out[column].map(lambda v: v if isinstance(v, list) else [])
        else:
            out[column] = out[column].astype(dtype)
    return out


# --- parsing one ARVO-Meta record ------------------------------------------------------------------


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def fix_commits(value: Any) -> list[str]:
    """`fix_commit` as a list: a string, a list of strings, a `;`/`,`/space-separated string or a JSON
    list in a string (pool files); empty → []."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    if hasattr(value, "tolist"):
        return fix_commits(value.tolist())
    text = str(value).strip()
    if text.startswith("["):
        try:
            return fix_commits(json.loads(text))
        except ValueError:
            pass
    return [part for part in re.split(r"[;,\s]+", text) if part]


def crash_fields(content: str | None) -> tuple[str | None, str | None]:
    """(`Crash Type:` value, `Crash State:` frames joined by newlines) of a ClusterFuzz report text.

    The frames are the indented lines after `Crash State:` up to the first blank or unindented line."""
    if not content:
        return None, None
    crash_type, state = None, None
    lines = content.splitlines()
    for index, line in enumerate(lines):
        if crash_type is None and line.startswith("Crash Type:"):
            crash_type = line.partition(":")[2].strip() or None
        if state is None and line.startswith("Crash State:"):
            frames = [line.partition(":")[2].strip()] if line.partition(":")[2].strip() else []
            for follow in lines[index + 1:]:
                if not follow[:1].isspace() or not follow.strip():
                    break
                frames.append(follow.strip())
            state = "\n".join(frames) or None
    return crash_type, state


def _report_text(report: Any) -> str | None:
    """`report.comments[0].content`, else the first comment that has a `Crash State:` line."""
    if not isinstance(report, dict) or not isinstance(report.get("comments"), list):
        return None
    comments = [c for c in report["comments"] if isinstance(c, dict)]
    if comments and isinstance(comments[0].get("content"), str) and "Crash State:" in comments[0]["content"]:
        return comments[0]["content"]
    for comment in comments:
        if isinstance(comment.get("content"), str) and "Crash State:" in comment["content"]:
            return comment["content"]
    return comments[0].get("content") if comments and isinstance(comments[0].get("content"), str) else None


def parse_meta(record: Any, file_id: int | None) -> dict[str, Any]:
    """One ARVO-Meta `<old id>.json` object → a pool row (raises ValueError when it is not an object)."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    local = record.get("localId")
    raw_id = trailing_int(local) if local is not None and not isinstance(local, bool) else None
    if raw_id is None:
        raw_id = file_id
    crash_type, crash_state = crash_fields(_report_text(record.get("report")))
    row = {name: _text(record.get(name)) for name in _TEXT_FIELDS}
    row["crash_type"] = row["crash_type"] or crash_type
    row |= {"raw_id": raw_id, "fix_commit": fix_commits(record.get("fix_commit")), "crash_state": crash_state}
    return row


# --- sources --------------------------------------------------------------------------------------


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git object id


def git_tree_sha1(entries: list[tuple[str, str, str]]) -> str:
    """Git tree id of (mode, name, blob sha1 hex) entries of regular files."""
    body = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                    for mode, name, sha in sorted(entries, key=lambda e: e[1].encode()))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()  # noqa: S324 - git object id


def _meta_folder(root: Path) -> Path:
    for candidate in (root / META_DIR, root):
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    raise InputError(f"{root}: no ARVO-Meta files; the folder must be laid out like n132/ARVO-Meta "
                     f"('{META_DIR}/<id>.json' inside it), e.g. a clone of that repo")


def _read_folder(folder: Path) -> tuple[list[tuple[str, bytes]], str | None]:
    """(name, bytes) of every `*.json` in the folder, and the folder's git tree id when it holds only
    regular files (else None)."""
    files, entries, tree_ok = [], [], True
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if not path.is_file() or path.is_symlink():
            tree_ok = False
            continue
        data = path.read_bytes()
        mode = "100755" if os.access(path, os.X_OK) else "100644"
        entries.append((mode, path.name, git_blob_sha1(data)))
        if path.suffix == ".json":
            files.append((path.name, data))
    return files, git_tree_sha1(entries) if tree_ok else None


def _tree_listing(source: GithubRepo, tree: str) -> list[dict[str, Any]]:
    """Entries of the pinned tree from the GitHub API, cached next to the downloaded files."""
    cached = cache_root() / "github" / str(source.repo_id) / str(source.revision) / f".tree-{tree}.json"
    hint = (f"clone https://github.com/{source.repo_id} once, check out {source.revision}, and pass "
            f"--data arvo-meta=<clone> (or a pool file with columns id,project)")
    if cached.is_file():
        data = cached.read_bytes()
    elif offline():
        raise HubUnavailableError(f"{source.repo_id}: the ARVO-Meta file list is not cached and offline mode "
                                  f"is set; {hint}")
    else:
        request = urllib.request.Request(TREE_URL.format(repo=source.repo_id, tree=tree),
                                         headers={"Accept": "application/vnd.github+json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - fixed https URL
                data = response.read()
        except (urllib.error.URLError, OSError) as exc:
            raise HubUnavailableError(f"cannot list {source.repo_id} tree {tree[:12]} on GitHub ({exc}); "
                                      f"{hint}") from None
    try:
        listing = json.loads(data)
        entries = [e for e in listing["tree"] if e.get("type") == "blob"]
    except (ValueError, KeyError, TypeError):
        raise InputError(f"{cached}: not a GitHub tree listing; delete it to download again") from None
    if listing.get("truncated"):
        raise HubUnavailableError(f"GitHub truncated the listing of tree {tree[:12]}; {hint}")
    computed = git_tree_sha1([(e["mode"], e["path"], e["sha"]) for e in listing["tree"]
                              if e.get("type") == "blob"])
    if len(entries) == len(listing["tree"]) and computed != tree:
        raise InputError(f"the GitHub listing of tree {tree[:12]} hashes to {computed[:12]}; not using it")
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cached.parent, delete=False) as tmp:
            tmp.write(data)
        Path(tmp.name).replace(cached)
    return entries


def _download(source: GithubRepo, tree: str) -> list[tuple[str, bytes]]:
    """Every `*.json` of the pinned tree through the GithubRepo cache, each checked against its blob id."""
    entries = [e for e in _tree_listing(source, tree) if e["path"].endswith(".json")]
    if offline():
        missing = [e["path"] for e in entries if not source.exists(f"{META_DIR}/{e['path']}")]
        if missing:
            raise HubUnavailableError(
                f"{len(missing)} of {len(entries)} ARVO-Meta files are not cached (e.g. {missing[0]}) and offline "
                f"mode is set; clone https://github.com/{source.repo_id} and pass --data arvo-meta=<clone>")

    def fetch(entry: dict[str, Any]) -> tuple[str, bytes]:
        data = source.fetch(f"{META_DIR}/{entry['path']}").read_bytes()
        if git_blob_sha1(data) != entry["sha"]:
            raise InputError(f"{META_DIR}/{entry['path']}: content differs from the pinned blob {entry['sha'][:12]}; "
                             "delete the cached copy to download again")
        return entry["path"], data

    from rich.console import Console
    from rich.progress import Progress

    console = Console(file=sys.stderr)
    with Progress(console=console, disable=not console.is_terminal, transient=True) as progress:
        task = progress.add_task("ARVO-Meta files (slow: consider cloning the repo)", total=len(entries))
        out = []
        with ThreadPoolExecutor(max_workers=DOWNLOAD_WORKERS) as pool:
            for item in pool.map(fetch, entries):
                out.append(item)
                progress.advance(task)
    return out


def _manifest_record(relpath: str, files: list[tuple[str, bytes]]) -> FileRecord:
    """One provenance record for a folder: sha256 of its `sha256sum`-style manifest (sorted by name)."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files))
    return FileRecord(path=relpath, sha256=hashlib.sha256(lines.encode()).hexdigest(), rows=len(files))


def _pool_from_meta_files(spec: DatasetSpec, source: FileSource, files: list[tuple[str, bytes]],
                          tree: str | None) -> Pool:
    rows, problems = [], {}
    for name, data in files:
        stem = Path(name).stem
        file_id = int(stem) if stem.isdigit() else None
        try:
            row = parse_meta(json.loads(data.decode("utf-8")), file_id)
        except (ValueError, UnicodeDecodeError) as exc:
            problems.setdefault("malformed_file", []).append((name, f"not a readable ARVO-Meta JSON object ({exc})"))
            continue
        if row["raw_id"] is None:
            problems.setdefault("missing_id", []).append((name, "no localId and no numeric file name"))
            continue
        if file_id is not None and row["raw_id"] != file_id:
            problems.setdefault("id_mismatch", []).append((name, "localId differs from the file name; localId used"))
        rows.append(row)
    if not rows:
        raise InputError(f"{source.location or source.repo_id}: no readable ARVO-Meta records")
    source.records.append(_manifest_record(f"{META_DIR}/*.json", files))
    provenance = Provenance(name=spec.name, origin=source.origin, repo_id=source.repo_id, revision=source.revision,
                            files=list(source.records), location=source.location, adapter=spec.name)
    return Pool(spec.name, _typed(pd.DataFrame(rows)), provenance, _problems(problems), tree_sha1=tree,
                pinned_tree=spec.extra.get("tree")).canonicalize(None)


def _problems(found: dict[str, list[tuple[str, str]]]) -> list[Problem]:
    return [Problem(what, len(items), items[0][0], items[0][1]) for what, items in sorted(found.items())]


POOL_FILE_COLUMNS = ["id", "localId", *_TEXT_FIELDS, "fix_commit", "crash_state"]


def read_pool_file(path: Path, name: str, source: FileSource | None = None) -> Pool:
    """A user-given pool file: columns `id` (or `localId`) and `project`; others as in the pool table."""
    path = Path(path)
    records = read_records(path, POOL_FILE_COLUMNS)
    columns = {c for r in records for c in r}
    id_column = "id" if "id" in columns else "localId" if "localId" in columns else None
    if id_column is None or "project" not in columns:
        missing = "'id'" if id_column is None else "'project'"
        raise InputError(f"{path}: a pool file needs columns 'id' and 'project' (empty projects allowed); "
                         f"{missing} is missing")
    rows, problems = [], {}
    for index, record in enumerate(records):
        value = record.get(id_column)
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.setdefault("missing_id", []).append((f"row {index + 1}", "rows without an id are skipped"))
            continue
        number = trailing_int(value) if not isinstance(value, float) else (int(value) if value.is_integer() else None)
        if number is None:
            problems.setdefault("malformed_id", []).append((str(value), "no OSS-Fuzz number at the end; skipped"))
            continue
        row = {c: _text(record.get(c)) for c in _TEXT_FIELDS}
        row |= {"raw_id": number, "fix_commit": fix_commits(record.get("fix_commit")),
                "crash_state": _text(record.get("crash_state"))}
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: no pool rows with an OSS-Fuzz id")
    source = source or SingleFile(origin="local-file", location=str(path), path=path)
    source.record(path.name, path, len(records))
    provenance = Provenance(name=name, origin=source.origin, repo_id=source.repo_id, revision=source.revision,
                            files=list(source.records), location=source.location or str(path), adapter="pool-file")
    return Pool(name, _typed(pd.DataFrame(rows)), provenance, _problems(problems)).canonicalize(None)


def load_arvo_meta(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Pool:
    """Adapter of `arvo-meta`: a pool file, a local folder laid out like the repo, or GitHub (slow)."""
    if single or isinstance(source, SingleFile):
        return read_pool_file(source.fetch(""), spec.name, source)
    tree = spec.extra.get("tree")
    if isinstance(source, LocalFolder):
        folder = _meta_folder(source.root)
        files, tree_sha = _read_folder(folder)
        if tree_sha is not None and tree_sha == tree:
            source.revision = spec.revision  # byte-for-byte the pinned folder
        return _pool_from_meta_files(spec, source, files, tree_sha)
    if isinstance(source, GithubRepo):
        return _pool_from_meta_files(spec, source, _download(source, tree), tree)
    raise InputError(f"{spec.name}: cannot read a pool from a {source.origin} source")


ARVO_META = register(
    DatasetSpec(
        name="arvo-meta",
        title="ARVO first-release pool (4,993 OSS-Fuzz bugs with project)",
        hub_repo="n132/ARVO-Meta",
        revision="7e1a64f52520a5d63c766d5546a32fd748f23e21",
        files={"": f"{META_DIR}/*.json"},
        extracts="localId (old id) → canonical id; project (stratum); fuzzer, sanitizer, crash_type, severity, "
        "fix_commit, repo_addr; report.comments[0] Crash State frames",
        adapter=load_arvo_meta,
        aliases=("arvo-pool",),
        host="github",
        role="pool",
        notes="4,993 files: downloading them is slow; clone the repo once and pass --data arvo-meta=<clone>",
        extra={"tree": META_TREE},
    )
)


# --- ARVO new-tracker metadata (project of new ids) -------------------------------------------------

NEW_TRACKER_FILE = "arvo/NewTracker/metadata.jsonl"


def load_arvo_projects(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Pool:
    """`arvo/NewTracker/metadata.jsonl`: `localId` (new tracker id) and `project` per line → a pool table."""
    relpath = "" if single else NEW_TRACKER_FILE
    path = source.fetch(relpath)
    records = read_records(path, ["localId", "project"], required=["localId"])
    rows, problems = [], {}
    for index, record in enumerate(records):
        value = record.get("localId")
        number = trailing_int(value) if value is not None and not isinstance(value, bool) else None
        if number is None:
            problems.setdefault("malformed_id", []).append((f"line {index + 1}", "localId is not an id; skipped"))
            continue
        rows.append({"raw_id": number, "project": _text(record.get("project")), "fix_commit": []})
    if not rows:
        raise InputError(f"{path}: no rows with a localId")
    source.record(relpath or path.name, path, len(records))
    provenance = Provenance(name=spec.name, origin=source.origin, repo_id=source.repo_id, revision=source.revision,
                            files=list(source.records), location=source.location, adapter=spec.name)
    return Pool(spec.name, _typed(pd.DataFrame(rows)), provenance, _problems(problems)).canonicalize(None)


ARVO_PROJECTS = register(
    DatasetSpec(
        name="arvo-projects",
        title="OSS-Fuzz project of each new-tracker bug (ARVO)",
        hub_repo="n132/ARVO",
        revision="bc2a373c6b32fb3d9e7f86c516b1844885dcec51",
        files={"": NEW_TRACKER_FILE},
        extracts="JSON lines localId (new tracker id) → project",
        adapter=load_arvo_projects,
        aliases=("arvo-newtracker",),
        host="github",
        role="mapping",
    )
)


POOL_ADAPTERS = (load_arvo_meta, load_arvo_projects)


# --- entry point ----------------------------------------------------------------------------------


def load_pool(which: str | Path = "arvo-meta", data: dict[str, Path] | None = None,
              mapping: OssFuzzMapping | None = None) -> Pool:
    """A pool by registered name (`arvo-meta`, `arvo-projects`; honours `--data NAME=PATH`) or by path
    (a folder laid out like ARVO-Meta, or a pool file with columns id, project), with canonical ids
    from `mapping` when given."""
    from .load import load_identity

    path = Path(which)
    if path.exists():
        spec = get_spec("arvo-meta")
        if path.is_dir():
            source: FileSource = LocalFolder(origin="local-folder", location=str(path), root=path)
            pool = load_arvo_meta(source, spec, (), False)
            pool.name = pool.provenance.name = path.name
        else:
            pool = read_pool_file(path, path.stem)
    else:
        spec = get_spec(str(which))
        if spec.adapter not in POOL_ADAPTERS:
            raise InputError(f"'{which}' is {spec.role} data, not a pool; give arvo-meta, arvo-projects, a folder "
                             "laid out like ARVO-Meta or a file with columns id,project")
        value, provenance = load_identity(spec.name, data)
        provenance.adapter = spec.name
        value.provenance = provenance
        pool = value
    return pool.canonicalize(mapping) if mapping is not None else pool
