"""Reading the audited tree safely.

Walks use ``os.scandir`` without following symlinks and never cross into another filesystem. Files are
opened only when ``lstat`` shows a regular file, with ``O_NOFOLLOW|O_NONBLOCK``, re-checked with
``fstat``, and read up to a limit. Nothing here writes.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class TooLarge(Exception):
    """A file is larger than the limit it was read with."""

    def __init__(self, path: Path, size: int, limit: int):
        super().__init__(f"{path}: {size} bytes, over the {limit}-byte limit")
        self.size = size
        self.limit = limit


def read_regular(path: Path | str, limit: int) -> bytes | None:
    """The bytes of a regular file (None when missing or not a regular file); TooLarge over ``limit``."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size > limit:
        raise TooLarge(Path(path), st.st_size, limit)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        st2 = os.fstat(fd)
        if not stat.S_ISREG(st2.st_mode) or (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
            return None
        chunks = []
        size = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TooLarge(Path(path), size, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_regular(path: Path | str) -> int | None:
    """A read-only descriptor of a regular file (lstat first, ``O_NOFOLLOW|O_NONBLOCK``, re-checked with fstat);
    None for anything else, which is never opened (a FIFO would block, a device never ends)."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    st2 = os.fstat(fd)
    if not stat.S_ISREG(st2.st_mode) or (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        return None
    return fd


def read_head(path: Path | str, n: int) -> bytes:
    """The first ``n`` bytes of a regular file (empty when missing or not a regular file; lstat first, so a
    device is never opened)."""
    if not is_regular(path):
        return b""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return b""
    try:
        return os.read(fd, n) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)


def is_regular(path: Path | str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_dir(path: Path | str) -> bool:
    """A real folder (a symlink to one does not count)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class FileEntry:
    rel: str  # POSIX path relative to the walk root
    path: Path
    st: os.stat_result


def walk(root: Path, *, skip_dir: Callable[[str, str], bool] | None = None,
         max_depth: int | None = None, notes: list[str] | None = None) -> Iterator[FileEntry]:
    """Every non-folder entry below ``root`` (symlinks included, never followed), in a stable order.

    ``skip_dir(rel, name)`` prunes a folder. Folders on another device are skipped with a note.
    """
    try:
        root_dev = os.lstat(root).st_dev
    except OSError:
        return
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    while stack:
        folder, rel, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            _note(notes, rel, exc)
            continue
        subdirs = []
        for e in items:
            r = f"{rel}/{e.name}" if rel else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                _note(notes, r, exc)
                continue
            if stat.S_ISDIR(st.st_mode):
                if st.st_dev != root_dev:
                    if notes is not None:
                        notes.append(f"{r}: on another filesystem, not walked")
                    continue
                if skip_dir is not None and skip_dir(r, e.name):
                    continue
                if max_depth is None or depth + 1 <= max_depth:
                    subdirs.append((Path(e.path), r, depth + 1))
                continue
            yield FileEntry(r, Path(e.path), st)
        stack.extend(reversed(subdirs))


def _note(notes: list[str] | None, rel: str, exc: OSError) -> None:
    """An entry the walk could not look at (e.g. nested past the host's PATH_MAX, which a container's own
    paths need not reach): what is in it is never read, so the report must say so."""
    if notes is not None and rel and exc.errno != errno.ENOENT:  # gone meanwhile: nothing to miss
        shown = rel if len(rel) <= 160 else f"{rel[:80]}…{rel[-60:]}"
        notes.append(f"{shown}: {os.strerror(exc.errno) if exc.errno else exc}, not walked")


def list_dir(path: Path) -> list[os.DirEntry]:
    """Entries of a real folder, sorted by name (empty when missing or not a folder)."""
    if not is_dir(path):
        return []
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []
