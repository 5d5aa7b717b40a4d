"""Where an opened image's files are read from: a tar archive (a zstd-compressed one through a plain copy), an
image layout folder, or a rootfs tar that is its own only layer; member names normalised so none escapes."""

from __future__ import annotations

import os
import posixpath
import tarfile
from pathlib import Path

from ...errors import InputError
from .. import zstd_input
from ..tar_headers import BoundedInfo, HeaderTooLarge
from ..targets import inside
from ..tree import TooLarge, open_regular, read_regular
from .model import LimitHit

JSON_LIMIT = 64 << 20


class _TarSource:
    def __init__(self, path: Path, spool: Path | None = None, max_bytes: int | None = None):
        file = path
        if zstd_input.is_zstd(path):  # members are opened in any order: tarfile needs a plain, seekable copy
            try:
                self.copy = zstd_input.PlainCopy(path, spool, max_bytes)  # removed with this source
            except zstd_input.PastLimit:
                raise LimitHit("image_bytes") from None
            file = self.copy.tar
        try:
            self.tar = tarfile.open(file, "r:*", tarinfo=BoundedInfo)
            self.members = {}
            for m in self.tar.getmembers():
                self.members.setdefault(_norm(m.name) or m.name, m)
        except HeaderTooLarge as exc:
            raise InputError(f"{path}: unreadable image archive: {exc}; save the image again") from None
        except (tarfile.TarError, OSError, EOFError) as exc:  # tarfile's "r:*" error spans lines: one line
            raise InputError(f"{path}: unreadable image archive ({' '.join(str(exc).split())}); save the image "
                             "again") from None
        self.path = path

    def _member(self, name: str, depth: int = 0) -> tarfile.TarInfo:
        m = self.members.get(name)
        if m is None:
            raise InputError(f"{self.path}: the archive has no member {name}")
        if m.issym() or m.islnk():
            if depth >= 8:
                raise InputError(f"{self.path}: member link chain too deep at {name}")
            base = posixpath.dirname(name) if m.issym() else ""
            target = _norm(posixpath.join(base, m.linkname))
            if target is None:
                raise InputError(f"{self.path}: member {name} links outside the archive")
            return self._member(target, depth + 1)
        if not m.isreg():
            raise InputError(f"{self.path}: member {name} is not a regular file")
        return m

    def has(self, name: str) -> bool:
        return name in self.members

    def read_small(self, name: str) -> bytes:
        m = self._member(name)
        if m.size > JSON_LIMIT:
            raise InputError(f"{self.path}: {name} is larger than {JSON_LIMIT >> 20} MiB")
        return self.tar.extractfile(m).read()

    def open(self, name: str):
        return self.tar.extractfile(self._member(name))


class _DirSource:
    def __init__(self, path: Path):
        self.path = path

    def _file(self, name: str) -> Path:
        p = inside(self.path, "/" + name)
        if p is None or not p.is_file():
            raise InputError(f"{self.path}: no regular file {name} in the image folder")
        return p

    def has(self, name: str) -> bool:
        p = inside(self.path, "/" + name)
        return p is not None and p.is_file()

    def read_small(self, name: str) -> bytes:
        try:
            data = read_regular(self._file(name), JSON_LIMIT)
        except TooLarge:
            raise InputError(f"{self.path}: {name} is larger than {JSON_LIMIT >> 20} MiB") from None
        if data is None:
            raise InputError(f"{self.path}: cannot read {name}")
        return data

    def open(self, name: str):
        fd = open_regular(self._file(name))
        if fd is None:
            raise InputError(f"{self.path}: {name} is not a regular file")
        return os.fdopen(fd, "rb")


class _FileSource:
    """A rootfs tar (``docker export``): the file itself is the only layer."""

    def __init__(self, path: Path):
        self.path = path

    def open(self, name: str):
        fd = open_regular(self.path)
        if fd is None:
            raise InputError(f"{self.path}: not a regular file")
        return os.fdopen(fd, "rb")


def _norm(name: str) -> str | None:
    """Layer member names: one leading ``./`` or ``/`` stripped (as a prefix), normalised; None when it escapes."""
    if name.startswith("./"):
        name = name[2:]
    elif name.startswith("/"):
        name = name[1:]
    if not name:
        return None
    name = posixpath.normpath(name)
    if name == "." or name.startswith("../") or name == ".." or name.startswith("/"):
        return None
    return name

