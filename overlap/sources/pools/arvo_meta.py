"""The ARVO first-release pool (GitHub n132/ARVO-Meta, pinned) and other OSS-Fuzz pools.

A *pool* is the upstream population two datasets were drawn from; chance baselines (`overlap.stats`)
need it with each bug's OSS-Fuzz project. The pool table and pool files are described in `pool.py`; one
ARVO-Meta record is parsed in `arvo_records.py`; the git hashing and GitHub download are in `arvo_git.py`.
Every public name of those stays importable from here.

Where the pool comes from:

- `--data arvo-meta=DIR`: a clone of n132/ARVO-Meta (or any folder laid out like it), read from
  `DIR/archive_data/meta/*.json`; a folder that directly holds the `<id>.json` files works too. The git
  tree id of the folder is computed and compared with the pinned tree, so a clone at the pinned commit is
  recognised as exactly the pinned data.
- `--data arvo-meta=FILE` or `--pool FILE`: a user-given pool file (CSV, JSON lines, JSON array or
  parquet) with columns `id` (any OSS-Fuzz id form: `arvo:1065`, `42470443`, …; `localId` is accepted
  too) and `project` (empty cells allowed); the other columns of the pool table are read when present.
- Online, nothing given: one GitHub API call lists the pinned tree, then the 4,993 files are downloaded
  one by one (8 at a time) into the overlap cache, each checked against its git blob id. **This is
  slow** (minutes) and needs api.github.com; clone the repo once instead:
  `git clone https://github.com/n132/ARVO-Meta && git -C ARVO-Meta checkout 7e1a64f5` then
  `--data arvo-meta=ARVO-Meta`. Offline (HF_HUB_OFFLINE=1 or OVERLAP_OFFLINE=1) only the cache is used.

`arvo-projects` reads ARVO's `arvo/NewTracker/metadata.jsonl` (new tracker id → project) into the same
pool shape.
"""

from __future__ import annotations

import json

from ...errors import InputError
from ..formats.whole_file import read_records
from ..places.files import FileSource, LocalFolder, SingleFile
from ..places.github import GithubRepo
from ..spec import DatasetSpec
from .arvo_git import (  # noqa: F401 - git_tree_sha1, git_blob_sha1, DOWNLOAD_WORKERS re-exported
    DOWNLOAD_WORKERS,
    META_DIR,
    TREE_URL,
    download_meta_files,
    git_blob_sha1,
    git_tree_sha1,
    manifest_record,
    meta_folder,
    read_folder,
)
from .arvo_records import crash_fields, file_id, meta_id, parse_meta  # noqa: F401 - crash_fields re-exported
from .pool import (  # noqa: F401 - Pool, POOL_COLUMNS, fix_commits... re-exported
    POOL_COLUMNS,
    POOL_FILE_COLUMNS,
    Pool,
    build_pool,
    cell_id,
    cell_text,
    fix_commits,
    read_pool_file,
)

# --- ARVO-Meta (the first-release pool) -------------------------------------------------------------


def _pool_from_meta_files(spec: DatasetSpec, source: FileSource, files: list[tuple[str, bytes]],
                          tree: str | None) -> Pool:
    """The pool of the (name, bytes) meta files; unreadable files and id problems are counted, not fatal."""
    rows, problems = [], {}
    for name, data in files:
        from_name = file_id(name)
        try:
            record = json.loads(data.decode("utf-8"))
            row = parse_meta(record, from_name)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            problems.setdefault("malformed_file", []).append((name, f"not a readable ARVO-Meta JSON object ({exc})"))
            continue
        _, problem = meta_id(record, from_name)
        if problem is not None:
            problems.setdefault(problem[0], []).append((name, problem[1]))
        if row["raw_id"] is not None:
            rows.append(row)
    if not rows:
        raise InputError(f"{source.location or source.repo_id}: no readable ARVO-Meta records")
    source.records.append(manifest_record(f"{META_DIR}/*.json", files))
    return build_pool(spec.name, rows, problems, source, spec.name, tree_sha1=tree, pinned_tree=spec.extra.get("tree"))


def load_arvo_meta(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Pool:
    """Adapter of `arvo-meta`: a pool file, a local folder laid out like the repo, or GitHub (slow)."""
    if single or isinstance(source, SingleFile):
        return read_pool_file(source.fetch(""), spec.name, source)
    tree = spec.extra.get("tree")
    if isinstance(source, LocalFolder):
        folder = meta_folder(source.root)
        files, tree_sha = read_folder(folder)
        if tree_sha is not None and tree_sha == tree:
            source.revision = spec.revision  # byte-for-byte the pinned folder
        return _pool_from_meta_files(spec, source, files, tree_sha)
    if isinstance(source, GithubRepo):
        return _pool_from_meta_files(spec, source, download_meta_files(source, tree), tree)
    raise InputError(f"{spec.name}: cannot read a pool from a {source.origin} source")


# --- ARVO new-tracker metadata (project of new ids) -------------------------------------------------

NEW_TRACKER_FILE = "arvo/NewTracker/metadata.jsonl"


def load_arvo_projects(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Pool:
    """`arvo/NewTracker/metadata.jsonl`: `localId` (new tracker id) and `project` per line → a pool table."""
    relpath = "" if single else NEW_TRACKER_FILE
    path = source.fetch(relpath)
    records = read_records(path, ["localId", "project"], required=["localId"])
    rows, problems = [], {}
    for index, record in enumerate(records):
        _, number = cell_id(record.get("localId"), f"{path}: line {index + 1} (localId)")
        if number is None:
            problems.setdefault("malformed_id", []).append((f"line {index + 1}", "localId is not an id; skipped"))
            continue
        rows.append({"raw_id": number, "project": cell_text(record.get("project")), "fix_commit": []})
    if not rows:
        raise InputError(f"{path}: no rows with a localId")
    source.record(relpath or path.name, path, len(records))
    return build_pool(spec.name, rows, problems, source, spec.name)
