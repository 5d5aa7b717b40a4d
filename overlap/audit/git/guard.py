"""Refusing a git store that holds something other than regular files (hostile input).

git opens the files of a store itself (``HEAD``, ``config``, ``packed-refs``, ``refs/**``, ``logs/**``,
``index``, ``objects/**`` with ``info/alternates`` and the commit-graph, ``shallow``, ``info/grafts``…),
follows symlinks and knows no "regular files only" option: a FIFO blocks it until the timeout, a device
feeds it endless bytes, a symlink to ``/etc/passwd`` turns into a bogus ref list. So the audit refuses
before calling git: every entry of the store's folders (the git folder, its common folder, and the object
folders its alternates name) is ``lstat``-ed first, without opening anything. A FIFO, device or socket,
or a symlink leading out of the audited tree (or to anything but a regular file or a folder), blocks the
git route for that store, and the checks that need it become ``incomplete`` naming the entries. The
tool's own readers (``tree.read_regular``) never open such entries either.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

MAX_LISTED = 10  # entries named in a reason; the rest are counted
SKIPPED = frozenset({"hooks"})  # never read: the runner sets core.hooksPath=/dev/null
HARMLESS_SOCKETS = frozenset({"fsmonitor--daemon.ipc"})  # git's own fsmonitor daemon socket; never opened


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISREG, "a regular file"))


def kind_of(mode: int) -> str:
    """What an entry is, in words (``a FIFO``)."""
    return next((words for test, words in _KINDS if test(mode)), "an entry of unknown type")


def within(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def link_problem(path: Path, roots: Iterable[str]) -> tuple[str | None, str | None]:
    """(problem, real target) of a symlink: None when it leads, inside ``roots``, to a regular file or folder.

    Only ``readlink``/``realpath``/``lstat`` are used: the target is never opened."""
    try:
        text = os.readlink(path)
    except OSError:
        return "a symlink that cannot be read", None
    real = os.path.realpath(path)
    if not within(real, [os.path.realpath(r) for r in roots]):
        return f"a symlink to {text}, outside the audited tree (not followed, its target was not read)", None
    try:
        mode = os.lstat(real).st_mode
    except OSError:
        return None, None  # dangling inside the tree: git sees a missing file, like the audit
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None, real
    return f"a symlink to {text}, which is {kind_of(mode)} (never opened)", None


def unsafe_entries(folders: Iterable[Path], roots: Iterable[Path | str], shown) -> list[str]:
    """Every entry of ``folders`` (walked without following links; a link to a folder inside ``roots`` is
    walked too) that git could open and that is not a regular file or a folder, as ``"<shown>: <what>"``.

    ``roots`` are the folders links may lead into; ``shown(path)`` names an entry for the report."""
    allowed = [os.path.realpath(r) for r in roots]
    tops = [Path(f) for f in folders]
    out: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(tops))
    while stack:
        folder = stack.pop()
        key = os.path.realpath(folder)
        if key in seen:
            continue
        seen.add(key)
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in items:
            path = Path(e.path)
            if e.name in SKIPPED and folder in tops:
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(path)
                    continue
                if e.is_file(follow_symlinks=False):
                    continue
                if e.is_symlink():
                    problem, real = link_problem(path, allowed)
                    if problem is None and real is not None and os.path.isdir(real):
                        stack.append(Path(real))  # git follows it: its entries are checked too
                    if problem is not None:
                        out.append(f"{shown(path)}: {problem}")
                    continue
                mode = e.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISSOCK(mode) and e.name in HARMLESS_SOCKETS:
                continue
            out.append(f"{shown(path)}: {kind_of(mode)} (never opened)")
    return sorted(out)


def unsafe_reason(entries: list[str], note: str | None = None) -> str:
    """The incomplete reason naming the refused entries (capped)."""
    listed = "; ".join(entries[:MAX_LISTED])
    more = f"; and {len(entries) - MAX_LISTED} more" if len(entries) > MAX_LISTED else ""
    return "git not run: the store holds entries git would open that are not regular files" \
        + (f" ({note})" if note else "") + f": {listed}{more}"
