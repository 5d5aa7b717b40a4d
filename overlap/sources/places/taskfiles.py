"""Per-item files fetched on demand (CyberGym's `error.txt` and `patch.diff` live per task on the Hub).

Only the files the candidate pairs need are fetched, from the same source and revision the dataset was
read from (Hub, Hub cache or a `--data` folder). A file that cannot be had is returned with the reason,
so the check that needed it reports `not_run` for that item instead of failing the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...errors import HubUnavailableError, InputError
from ...progress import progress_enabled
from .github import offline

MAX_FILE_BYTES = 4 * 1024 * 1024
HUB_WORKERS = 8  # reports and patches above this are not parsed (said in the reason)


@dataclass(frozen=True)
class TaskFile:
    text: str | None
    reason: str = ""  # why `text` is None (or was cut)


def _progress(total: int, label: str):
    from rich.progress import Progress

    enabled = progress_enabled() and total > 20
    progress = Progress(transient=True, disable=not enabled)
    return progress, progress.add_task(label, total=total)


def fetch_item_files(dataset, item_ids: Iterable[str], name: str,
                     path_of: Callable[[str, str], str | None]) -> dict[str, TaskFile]:
    """Fetch file `name` for each item through `dataset.source`; `path_of(item_id, name)` gives the
    repo-relative path (None when the item has no such file by construction)."""
    ids = sorted(set(item_ids))
    out: dict[str, TaskFile] = {}
    source = getattr(dataset, "source", None)
    if source is None or source.origin == "local-file":
        reason = "per-item files need the dataset's repo layout (a Hub repo or a --data folder)"
        return {i: TaskFile(None, reason) for i in ids}
    unreachable: list[str] = []  # set by the first failed download: the Hub is unreachable, stop trying
    cache_only = offline()

    def fetch_one(item_id: str) -> TaskFile:
        relpath = path_of(item_id, name)
        if relpath is None:
            return TaskFile(None, f"no {name} for this item")
        if unreachable:
            return TaskFile(None, unreachable[0])
        try:
            path = source.fetch(relpath)
        except HubUnavailableError:
            if cache_only:  # offline: a miss is this file not being cached, the others may be
                return TaskFile(None, f"{relpath} not in the Hub cache (offline)")
            unreachable.append(f"{name} not cached and the Hub is unreachable")
            return TaskFile(None, unreachable[0])
        except InputError:
            return TaskFile(None, f"{relpath} not found")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return TaskFile(None, f"{relpath} is {size} bytes, above the {MAX_FILE_BYTES}-byte cap")
        return TaskFile(path.read_bytes().decode("utf-8", errors="replace"))

    # Hub downloads are network-bound: a few in flight at once. Local folders are read in order.
    workers = HUB_WORKERS if source.origin.startswith("hub") else 1
    progress, task = _progress(len(ids), f"{dataset.name}: {name}")
    with progress, ThreadPoolExecutor(max_workers=workers) as pool:
        for item_id, result in zip(ids, pool.map(fetch_one, ids), strict=True):
            out[item_id] = result
            progress.advance(task)
    return out
