"""The data files of a dataset's repository: the Hub's file list (or the cached snapshot when offline), a local
folder laid out like the repo, or a written split's shards."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...errors import HubUnavailableError, InputError
from .files import FileSource, HubRepo, LocalFolder, SplitSource, of_format
from .folder_contents import folder_entries
from .hub_cache import check_snapshot, snapshot_names


def list_files(source: FileSource, suffix: str, keep: Callable[[str], bool] | None = None) -> list[str]:
    """Repo-relative paths of all files ending in `suffix`, or in `suffix` and `.gz` / `.zst`, that `keep` keeps
    (default all): the Hub's file list (HfApi.list_repo_files), or the local folder, or the cached snapshot when
    offline (the kept files checked complete, `hub_cache`: a file the caller leaves unread never stops it).
    Sorted; hidden folders left out; a link to nothing is an error naming it."""
    if isinstance(source, SplitSource):
        return source.listed(suffix)
    if isinstance(source, LocalFolder):
        root = Path(source.root)
        found = sorted(p for p in folder_entries(root) if of_format(p.name, suffix)
                       and not any(part.startswith(".") for part in p.relative_to(root).parts)
                       and (keep is None or keep(p.relative_to(root).as_posix())))
        dangling = [p for p in found if p.is_symlink() and not p.exists()]
        if dangling:
            raise InputError(f"{dangling[0]}: a link to {os.readlink(dangling[0])}, which does not exist, so its rows "
                             "cannot be read; fix or remove the link")
        return [p.relative_to(root).as_posix() for p in found if p.is_file()]
    if isinstance(source, HubRepo):
        names, snapshot = _hub_files(source)
        listed = sorted(f for f in names if of_format(f, suffix)
                        and not any(part.startswith(".") for part in f.split("/")) and (keep is None or keep(f)))
        if snapshot is not None:
            check_snapshot(snapshot, listed, source.repo_id or str(source.location))
        return listed
    raise InputError(f"{source.location}: a listing needs a folder or a Hub repo")  # pragma: no cover


def _hub_files(source: HubRepo) -> tuple[list[str], Path | None]:
    """The repo's files, and the cached snapshot folder when they were listed from it (offline)."""
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub import errors as hf_errors

    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
    try:
        if offline:
            raise hf_errors.OfflineModeIsEnabled("HF_HUB_OFFLINE is set")
        return list(HfApi().list_repo_files(source.repo_id, repo_type="dataset", revision=source.revision)), None
    except hf_errors.RepositoryNotFoundError:
        raise InputError(f"{source.repo_id}: no such Hub dataset (or it is private and no token is set)") from None
    except hf_errors.RevisionNotFoundError:
        raise InputError(f"{source.repo_id}: revision '{source.revision}' not found; give a commit sha, branch "
                         "or tag that exists") from None
    except Exception:  # offline, no network, server error: fall back to a cached snapshot
        pass
    try:
        folder = snapshot_download(source.repo_id, repo_type="dataset", revision=source.revision,
                                   cache_dir=source._cache_dir(), local_files_only=True)
    except Exception:
        raise HubUnavailableError(
            f"{source.repo_id}@{source.revision}: cannot list the repo's files (no network) and no snapshot is "
            "cached; run once with internet, or pass --data NAME=DIR with a folder laid out like the repo"
        ) from None
    root = Path(folder)
    source.origin = "hub-cache"
    return snapshot_names(root), root
