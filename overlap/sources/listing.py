"""The data files of a dataset's repository: the Hub's file list (or the cached snapshot when offline), a local
folder laid out like the repo, or a written split's shards."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import HubUnavailableError, InputError
from .files import FileSource, HubRepo, LocalFolder, SplitSource


def list_files(source: FileSource, suffix: str) -> list[str]:
    """Repo-relative paths of all files ending in `suffix`: the Hub's file list (HfApi.list_repo_files), or
    the local folder (glob), or the cached snapshot when offline. Sorted; hidden folders left out."""
    if isinstance(source, SplitSource):
        return source.listed(suffix)
    if isinstance(source, LocalFolder):
        root = Path(source.root)
        found = [p.relative_to(root).as_posix() for p in root.rglob(f"*{suffix}") if p.is_file()]
        return sorted(f for f in found if not any(part.startswith(".") for part in f.split("/")))
    if isinstance(source, HubRepo):
        return sorted(f for f in _hub_files(source) if f.endswith(suffix)
                      and not any(part.startswith(".") for part in f.split("/")))
    raise InputError(f"{source.location}: a listing needs a folder or a Hub repo")  # pragma: no cover


def _hub_files(source: HubRepo) -> list[str]:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub import errors as hf_errors

    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
    try:
        if offline:
            raise hf_errors.OfflineModeIsEnabled("HF_HUB_OFFLINE is set")
        return list(HfApi().list_repo_files(source.repo_id, repo_type="dataset", revision=source.revision))
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
    return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
