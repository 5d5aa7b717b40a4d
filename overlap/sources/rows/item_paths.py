"""Where a task's own files live, for datasets that keep per-task files beside their rows (CyberGym's patch.diff
and error.txt): functions a declaration names in `extra.item_path`."""

from __future__ import annotations

import re

from ...ids.ossfuzz import issue_number


def cybergym_task_path(task_id: str, name: str) -> str | None:
    """Repo-relative path of a per-task file: `arvo:1065` → `data/arvo/1065/<name>`."""
    kind, sep, number = task_id.partition(":")
    # Stripped as the id's key is (`trailing_int`): ` arvo:10102 ` is task 10102, whose files are its own.
    kind, number = kind.strip().lower(), number.strip()
    # Both parts become a path: a kind other than a plain name (`../../etc`) or a number that is not an
    # issue number names no task file.
    if not sep or not _TASK_KIND.fullmatch(kind) or issue_number(number) is None:
        return None
    return f"data/{kind}/{number}/{name}"


_TASK_KIND = re.compile(r"[a-z0-9][a-z0-9-]*", re.ASCII)
