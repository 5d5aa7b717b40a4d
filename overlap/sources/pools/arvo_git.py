"""The ARVO-Meta files as git objects: blob and tree ids of a local folder, and the pinned tree from GitHub.

A clone's `archive_data/meta` folder is hashed as git would (`git_tree_sha1`), so a clone at the pinned
commit is recognised as exactly the pinned data. Online, one GitHub API call lists the pinned tree, then
the files are downloaded one by one (8 at a time) into the overlap cache, each checked against its git
blob id; offline only the cache is used.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ...errors import HubUnavailableError, InputError
from ...model import FileRecord
from ...progress import progress_enabled
from ..places.github import GithubRepo, cache_root, offline

META_DIR = "archive_data/meta"
TREE_URL = "https://api.github.com/repos/{repo}/git/trees/{tree}"
DOWNLOAD_WORKERS = 8


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git object id


def git_tree_sha1(entries: list[tuple[str, str, str]]) -> str:
    """Git tree id of (mode, name, blob sha1 hex) entries of regular files."""
    # Git hashes a name's bytes as the file system holds them: os.fsencode gives back the bytes of a name
    # that is not UTF-8 (held as surrogates in a str), where str.encode would raise.
    body = b"".join(mode.encode() + b" " + os.fsencode(name) + b"\0" + bytes.fromhex(sha)
                    for mode, name, sha in sorted(entries, key=lambda e: os.fsencode(e[1])))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()  # noqa: S324 - git object id


def meta_folder(root: Path) -> Path:
    for candidate in (root / META_DIR, root):
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    raise InputError(f"{root}: no ARVO-Meta files; the folder must be laid out like n132/ARVO-Meta "
                     f"('{META_DIR}/<id>.json' inside it), e.g. a clone of that repo")


def read_folder(folder: Path) -> tuple[list[tuple[str, bytes]], str | None]:
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
            # A name of bytes that are not UTF-8 is held as surrogates, which no report or JSON can write:
            # it is shown with backslash escapes (the tree id above still hashes its bytes).
            files.append((os.fsencode(path.name).decode("utf-8", "backslashreplace"), data))
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
    except (ValueError, KeyError, TypeError, RecursionError):
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


def download_meta_files(source: GithubRepo, tree: str) -> list[tuple[str, bytes]]:
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
    with Progress(console=console, disable=not progress_enabled(), transient=True) as progress:
        task = progress.add_task("ARVO-Meta files (slow: consider cloning the repo)", total=len(entries))
        out = []
        with ThreadPoolExecutor(max_workers=DOWNLOAD_WORKERS) as pool:
            for item in pool.map(fetch, entries):
                out.append(item)
                progress.advance(task)
    return out


def manifest_record(relpath: str, files: list[tuple[str, bytes]]) -> FileRecord:
    """One provenance record for a folder: sha256 of its `sha256sum`-style manifest (sorted by name)."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files))
    return FileRecord(path=relpath, sha256=hashlib.sha256(lines.encode()).hexdigest(), rows=len(files))
