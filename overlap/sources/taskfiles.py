"""Per-item files fetched on demand (CyberGym's `error.txt` and `patch.diff` live per task on the Hub).

Only the files the candidate pairs need are fetched, from the same source and revision the dataset was
read from (Hub, Hub cache or a `--data` folder). A file that cannot be had is returned with the reason,
so the check that needed it reports `not_run` for that item instead of failing the run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import HubUnavailableError, InputError

MAX_FILE_BYTES = 4 * 1024 * 1024  # reports and patches above this are not parsed (said in the reason)


@dataclass(frozen=True)
class TaskFile:
    text: str | None
    reason: str = ""  # why `text` is None (or was cut)


def _progress(total: int, label: str):
    from rich.progress import Progress

    enabled = sys.stderr.isatty() and total > 20
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
    unreachable = ""
    progress, task = _progress(len(ids), f"{dataset.name}: {name}")
    with progress:
        for item_id in ids:
            progress.advance(task)
            relpath = path_of(item_id, name)
            if relpath is None:
                out[item_id] = TaskFile(None, f"no {name} for this item")
                continue
            if unreachable:  # one failed download means the Hub is unreachable: do not wait N times
                out[item_id] = TaskFile(None, unreachable)
                continue
            try:
                path = source.fetch(relpath)
            except HubUnavailableError:
                unreachable = f"{name} not cached and the Hub is unreachable"
                out[item_id] = TaskFile(None, unreachable)
                continue
            except InputError:
                out[item_id] = TaskFile(None, f"{relpath} not found")
                continue
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                out[item_id] = TaskFile(None, f"{relpath} is {size} bytes, above the {MAX_FILE_BYTES}-byte cap")
                continue
            out[item_id] = TaskFile(path.read_bytes().decode("utf-8", errors="replace"))
    return out
