"""Removing the audit's private folder, whatever an image put in it.

An image can nest folders thousands deep (each member name stays under ``path_bytes``, the folders do not):
``shutil.rmtree`` recurses once per level on Python < 3.13 and fails with ``RecursionError`` there, which
``ignore_errors`` does not catch, so the folder stayed behind and the audit ended in an internal error. Here
every subfolder is moved up to the top before it is emptied, so removal needs no recursion, holds two
descriptors at a time and never builds a path longer than one name.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it; errors are ignored (what cannot go stays)."""
    try:
        shutil.rmtree(path, ignore_errors=True)
        return
    except RecursionError:
        pass
    try:
        top = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    try:
        _flatten(top)
    finally:
        os.close(top)
    shutil.rmtree(path, ignore_errors=True)


def _flatten(top: int) -> None:
    """Empty every folder below ``top`` (the descriptor of a folder), moving its subfolders up to ``top``."""
    fresh = (f".rm-{n}" for n in itertools.count())
    pending = [e.name for e in os.scandir(top) if e.is_dir(follow_symlinks=False)]
    while pending:
        name = pending.pop()
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=top)
        except OSError:
            continue
        try:
            for e in list(os.scandir(fd)):
                try:
                    if e.is_dir(follow_symlinks=False):
                        new = next(fresh)
                        while _exists(new, top):  # a rename onto an empty folder would replace it
                            new = next(fresh)
                        os.rename(e.name, new, src_dir_fd=fd, dst_dir_fd=top)
                        pending.append(new)
                    else:
                        os.unlink(e.name, dir_fd=fd)
                except OSError:
                    pass
        finally:
            os.close(fd)
        try:
            os.rmdir(name, dir_fd=top)
        except OSError:
            pass


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
