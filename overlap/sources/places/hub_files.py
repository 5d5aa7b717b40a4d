"""Which files of a Hub dataset make a config and split, at a revision resolved to its commit sha: listed on the
Hub (read through `huggingface_hub.HfFileSystem`, ranged reads), or, with `HF_HUB_OFFLINE=1` or no network,
found in the Hub cache (its snapshot folder names the commit)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import HubUnavailableError, InputError
from . import hub_net
from .card import choose_files, read_card
from .files import HEX40, net_errors
from .hub_cache import cached_revisions, check_blob, check_snapshot, snapshot_names
from .naming import DataFile


@dataclass
class HubFiles:
    """The chosen files of a Hub dataset at a commit, and the filesystem that reads them."""

    repo_id: str
    sha: str
    files: list[DataFile]
    filesystem: Any  # None: the files are local (the Hub cache)
    origin: str  # hub | hub-cache
    location: str | None = None


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _hub_cache_dir() -> str | None:
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return str(Path(os.environ["HF_HOME"]) / "hub")
    return None


def open_hub(repo_id: str, revision: str | None, *, config: str | None = None, split: str | None = None,
             filesystem: Any = None) -> HubFiles:
    """The data files of a Hub dataset at `revision` (resolved to a commit sha), chosen by config and split.

    `filesystem`: an fsspec filesystem with HfFileSystem's paths (`datasets/owner/name@rev/file`); without
    one, `HfFileSystem()`, or the Hub cache when `HF_HUB_OFFLINE=1`.
    """
    if filesystem is None and hub_offline():
        return _open_hub_cache(repo_id, revision, config, split)
    if filesystem is None and (down := hub_net.unreachable()) is not None:
        return _open_hub_cache(repo_id, revision, config, split, down)  # the cache, as offline, or one line
    if filesystem is None:
        from huggingface_hub import HfFileSystem

        filesystem = HfFileSystem()
    sha = _resolve_sha(filesystem, repo_id, revision)
    root = f"datasets/{repo_id}@{sha}"
    try:
        listing = filesystem.find(root, detail=True)
    except FileNotFoundError:
        raise InputError(f"{repo_id}@{sha}: no such Hub dataset (or it is private and no token is set)") from None
    except net_errors() as exc:
        raise HubUnavailableError(f"{repo_id}@{revision or 'main'}: cannot list the repo's files "
                                  f"({type(exc).__name__}); check the network or set HF_HUB_OFFLINE=1 to read "
                                  "the Hub cache") from None
    entries = {}
    for path, info in sorted(listing.items()):
        name = path[len(root):].lstrip("/")
        lfs = info.get("lfs") or {}
        entries[name] = (path, lfs.get("sha256") if isinstance(lfs, dict) else None)
    readme = read_card(lambda: filesystem.cat_file(entries["README.md"][0]) if "README.md" in entries else None,
                          f"{repo_id}@{sha[:12]}: README.md")
    chosen = choose_files(sorted(entries), readme, config, split, f"{repo_id}@{sha[:12]}")
    files = [DataFile(entries[n][0], n, entries[n][1]) for n in chosen]
    return HubFiles(repo_id, sha, files, filesystem, "hub")


def _resolve_sha(filesystem: Any, repo_id: str, revision: str | None) -> str:
    """The commit sha of `revision` (None: the default branch). A filesystem that knows (a fake Hub in
    tests) answers through `resolve_revision`; otherwise the Hub API is asked."""
    if revision and HEX40.match(revision):
        return revision
    if hasattr(filesystem, "resolve_revision"):
        sha = filesystem.resolve_revision(repo_id, revision)
        if sha is None:
            raise InputError(f"{repo_id}: revision '{revision}' not found; give a commit sha, branch or tag that "
                             "exists")
        return sha
    from huggingface_hub import HfApi
    from huggingface_hub import errors as hf_errors

    api = HfApi(endpoint=getattr(filesystem, "endpoint", None), token=getattr(filesystem, "token", None))
    try:
        return api.dataset_info(repo_id, revision=revision).sha
    except hf_errors.RevisionNotFoundError:
        raise InputError(f"{repo_id}: revision '{revision}' not found; give a commit sha, branch or tag that "
                         "exists") from None
    except hf_errors.RepositoryNotFoundError:
        raise InputError(f"{repo_id}: no such Hub dataset (or it is private and no token is set)") from None
    except (*net_errors(), hf_errors.HfHubHTTPError) as exc:
        raise HubUnavailableError(f"{repo_id}@{revision or 'main'}: cannot reach the Hub ({type(exc).__name__}); "
                                  "check the network, or set HF_HUB_OFFLINE=1 to read the Hub cache") from None


def _open_hub_cache(repo_id: str, revision: str | None, config: str | None, split: str | None,
                    down: str | None = None) -> HubFiles:
    """The snapshot of the Hub cache (`down`: why the Hub is not asked: the network is down)."""
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(repo_id, repo_type="dataset", revision=revision,
                                        cache_dir=_hub_cache_dir(), local_files_only=True))
    except Exception:
        why = hub_net.down_hint(down) if down else "HF_HUB_OFFLINE is set"
        cached = cached_revisions(_hub_cache_dir(), repo_id)
        other = (f", or read a revision it holds ({', '.join(f'{repo_id}@{c}' for c in cached[:3])}"
                 f"{' …' if len(cached) > 3 else ''})") if cached else ""
        raise HubUnavailableError(
            f"{repo_id}@{revision or 'main'}: no snapshot of this revision is in the Hub cache, and {why}; run "
            f"once with internet (it fills the cache){other}, or give a local file or folder") from None
    sha = folder.name
    names = snapshot_names(folder)
    readme_path = folder / "README.md"
    readme = read_card(lambda: readme_path.read_bytes() if readme_path.is_file() else None,
                          f"{repo_id}@{sha[:12]}: README.md")
    chosen = choose_files(names, readme, config, split, f"{repo_id}@{sha[:12]}", cached=True)
    check_snapshot(folder, chosen, repo_id)
    files = []
    for name in chosen:
        local = folder / name
        check_blob(local, name, f"{repo_id}@{sha[:12]}")
        # Cached LFS files are links to blobs/<sha256>: the file's checksum without reading it.
        blob = Path(os.path.realpath(local)).name
        files.append(DataFile(str(local), name, blob if re.fullmatch(r"[0-9a-f]{64}", blob) else None))
    return HubFiles(repo_id, sha, files, None, "hub-cache", str(folder))
