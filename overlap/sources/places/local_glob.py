"""The files a local glob names, each once, in finite time.

Python's `glob` follows symbolic links to folders under `**` without remembering where it has been: a link
`self -> .` makes it list the same files once per level (40 times), and two such links make the walk
exponential (it never ends). Here the folder tree is walked once: a linked folder is entered only if its
real folder has not been entered yet, and a file reached through several names is listed once, under the
first name in sorted order.
"""

from __future__ import annotations

import fnmatch
import glob as globlib
import os
import re
from pathlib import Path


def expand_glob(pattern: str) -> list[Path]:
    """The existing paths matching `pattern` (glob syntax, `**` = any folders), sorted, each real file once; a
    link to nothing that matches is listed too (the caller says it cannot be read)."""
    pattern = os.path.expanduser(pattern)
    parts = re.split(r"[/\\]+" if os.sep == "\\" else "/+", pattern)
    fixed = []
    for part in parts:
        if globlib.has_magic(part):
            break
        fixed.append(part)
    rest = parts[len(fixed):]
    root = "/".join(fixed) if fixed else "."
    if fixed == [""]:
        root = "/"
    if not rest:
        return [Path(pattern)] if os.path.lexists(pattern) else []
    out: list[Path] = []
    seen_files: set[tuple[int, int]] = set()
    for path in sorted(_matches(root, rest, set(), fixed != [])):
        try:
            info = os.stat(path)
        except OSError:
            if os.path.islink(path):
                out.append(Path(path))  # a link to nothing: listed, so the reader names it instead of skipping it
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen_files:
            continue
        seen_files.add(key)
        out.append(Path(path))
    return out


def _matches(folder: str, rest: list[str], walked: set[tuple[int, int, int]], prefixed: bool):
    """Paths under `folder` matching the pattern parts `rest`. `walked`: (real folder, parts left) already
    done, so a folder reached again (a loop, or a second link to it) is not walked again: the work is
    bounded by folders × pattern parts."""
    try:
        info = os.stat(folder)
    except OSError:
        return
    key = (info.st_dev, info.st_ino, len(rest))
    if key in walked:
        return
    walked.add(key)
    part, tail = rest[0], rest[1:]
    if part == "**":
        if tail:
            yield from _matches(folder, tail, walked, prefixed)  # `**` matching no folder
        else:
            yield from _children(folder, "*", prefixed, files=True, folders=True)
        for child in _children(folder, "*", prefixed, files=False, folders=True):
            yield from _matches(child, rest, walked, True)
        return
    if not tail:
        yield from _children(folder, part, prefixed, files=True, folders=True)
        return
    for child in _children(folder, part, prefixed, files=False, folders=True):
        yield from _matches(child, tail, walked, True)


def _children(folder: str, part: str, prefixed: bool, *, files: bool, folders: bool):
    """Entries of `folder` whose name matches `part` (hidden names only when `part` starts with a dot)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if name.startswith(".") and not part.startswith("."):
            continue
        if not fnmatch.fnmatchcase(name, part):
            continue
        path = os.path.join(folder, name) if prefixed or folder not in (".", "") else name
        is_dir = os.path.isdir(path)
        if (is_dir and folders) or (not is_dir and files):
            yield path
