"""Materialising a private view of the merged image (pass 2): its visible files, written into a private folder.

Pass 2 streams the layers again and writes the visible files into a private folder: git folders whole, other
regular files up to ``scan_file_bytes``, larger ones that the checks read (the run hands in the rule: archives,
bundles, text) up to 16 × ``archive_member_bytes`` while they fit in half of ``materialise_bytes``, and the rest
as sparse files of the right size and time (recorded in ``Merged.sparse``, so the scan counts them as not read
instead of reading zeros); symlinks outside git folders as symlinks that nothing follows. Every write goes
through ``openat``-style calls with ``O_NOFOLLOW``/``O_EXCL`` under the private root; devices and FIFOs are
never created. Names that escape the root are skipped and reported.
"""

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Callable
from pathlib import Path

from ...errors import InputError
from ..model import escape
from .layers import MEntry, Merged
from .model import Image, LimitHit
from .strict_tar import open_tar


def _in_git(path: str) -> bool:
    parts = path.split("/")
    return any(p == ".git" or p.endswith(".git") for p in parts[:-1])


class _Writer:
    """Creates files under ``root`` without following any symlink (dir fds, O_NOFOLLOW, O_EXCL)."""

    def __init__(self, root: Path, budget: int):
        self.root = root
        self.budget = budget
        root.mkdir(mode=0o700)
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)

    def close(self) -> None:
        os.close(self.root_fd)

    def _dir(self, parts: list[str]) -> int:
        fd = os.dup(self.root_fd)
        for p in parts:
            try:
                os.mkdir(p, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            nfd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nfd
        return fd

    def mkdir(self, path: str) -> None:
        os.close(self._dir(path.split("/")))

    def file(self, path: str, chunks, size: int, mode: int, mtime: float, sparse: bool) -> None:
        parts = path.split("/")
        fd = self._dir(parts[:-1])
        try:
            out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd)
            try:
                if sparse:
                    os.ftruncate(out, size)
                else:
                    for chunk in chunks:
                        self.budget -= len(chunk)
                        if self.budget < 0:
                            raise LimitHit("materialise_bytes")
                        os.write(out, chunk)
                os.fchmod(out, 0o755 if mode & 0o111 else 0o644)
                os.utime(out, ns=(int(mtime * 1e9), int(mtime * 1e9)))
            finally:
                os.close(out)
        finally:
            os.close(fd)

    def read(self, path: str):
        """The bytes of a file written here, in chunks (a hard link's second path is copied from its first)."""
        parts = path.split("/")
        fd = self._dir(parts[:-1])
        try:
            src = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        finally:
            os.close(fd)
        with os.fdopen(src, "rb") as fh:
            yield from iter(lambda: fh.read(1 << 20), b"")

    def symlink(self, path: str, target: str) -> None:
        parts = path.split("/")
        fd = self._dir(parts[:-1])
        try:
            os.symlink(target, parts[-1], dir_fd=fd)
        finally:
            os.close(fd)


def materialise(img: Image, merged: Merged, view: Path, limits: dict[str, int],
                read_when_large: Callable[[str, bytes], bool] = lambda path, head: False) -> None:
    """Pass 2: write the visible filesystem's view into ``view`` (private). ``read_when_large(path, head)``:
    whether the checks read a file over ``scan_file_bytes`` from its first 8 KiB (the run hands in the content
    scan's rule; by default such files are left sparse)."""
    w = _Writer(view, limits["materialise_bytes"])
    try:
        want: dict[tuple[int, int], list[str]] = {}
        for path, e in sorted(merged.entries.items()):
            if e.kind == "dir":
                _placed(path, e, w.mkdir, path)
            elif e.kind == "file" and e.src is not None:
                want.setdefault(e.src, []).append(path)
            elif e.kind == "symlink" and e.link and not _in_git(path):
                _placed(path, e, w.symlink, path, e.link)
        budget = [limits["image_bytes"]]
        for layer in img.present_layers:
            raw, plain, stream = img.open_layer(layer, budget)
            with open_tar(stream) as tar:
                for ordinal, m in enumerate(tar):
                    tar.members = []
                    paths = want.get((layer.index, ordinal))
                    if paths:
                        _write_member(w, merged, tar.extractfile(m), m.size, paths, limits, read_when_large)
            while stream.read(1 << 20):
                pass
    finally:
        w.close()
    for path, e in merged.entries.items():  # folders last, so writing their files did not change their mtime
        if e.kind == "dir":
            try:
                os.utime(view / path, ns=(int(e.mtime * 1e9),) * 2, follow_symlinks=False)
            except OSError:
                pass


def _write_member(w: _Writer, merged: Merged, f, size: int, paths: list[str], limits: dict[str, int],
                  read_when_large: Callable[[str, bytes], bool]) -> None:
    """One file's bytes, streamed (a large pack never sits in memory) to its first path and copied to the others
    (hard links); git folders whole, other files up to the scan limit, larger ones when the scan reads them."""
    chunks = iter(lambda: f.read(1 << 20), b"")
    if size > limits["scan_file_bytes"] and not any(_in_git(p) for p in paths):
        head = f.read(LARGE_HEAD)
        why = _not_copied(read_when_large(paths[0], head), size, w.budget, limits)
        if why:
            for p in paths:
                merged.sparse[p] = why
                e = merged.entries[p]
                _placed(p, e, w.file, p, [], size, e.mode, e.mtime, True)
            return
        chunks = itertools.chain([head], chunks)
    first = merged.entries[paths[0]]
    _placed(paths[0], first, w.file, paths[0], chunks, size, first.mode, first.mtime, False)
    for p in paths[1:]:
        e = merged.entries[p]
        _placed(p, e, w.file, p, w.read(paths[0]), size, e.mode, e.mtime, False)


LARGE_HEAD = 8192  # enough to tell text (no NUL byte) and to see an archive's or a bundle's magic


def _not_copied(read: bool, size: int, budget_left: int, limits: dict[str, int]) -> str | None:
    """Why a file over ``scan_file_bytes`` is left sparse (None: copied, the scan reads it)."""
    if not read:
        return "binary, over scan_file_bytes"
    if size > 16 * limits["archive_member_bytes"]:
        return "over 16 × archive_member_bytes"
    if budget_left - size < limits["materialise_bytes"] // 2:  # the rest is kept for git folders and small files
        return "over half of materialise_bytes"
    return None


def _placed(path: str, e: MEntry, write, *args) -> None:
    """``write(*args)``; a path the merged map could not place turns into one line naming it (never a
    traceback, never the host's error about a file the user did not name)."""
    try:
        write(*args)
    except (NotADirectoryError, FileExistsError, IsADirectoryError) as exc:
        raise InputError(f"layer {e.layer}: /{escape(path)}: cannot be placed in the image's file tree "
                         f"({exc.strerror}); fix the image build") from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise InputError(f"layer {e.layer}: /{escape(path)}: its parent is a symlink loop; fix the image "
                         "build") from None
