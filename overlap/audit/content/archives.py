"""Members of zip-family archives (wheels, jars, eggs, zips), gzip files and gzipped tars (Gradle
build-cache entries), read within the audit's limits: each member up to ``archive_member_bytes`` (16 MiB),
each archive up to 16 times that in total, counted on decompressed bytes as they stream. The format is
chosen by magic bytes, not by name (cache entries have none). Nothing is extracted to disk."""

from __future__ import annotations

import gzip
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..tree import open_regular

ARCHIVE_SUFFIXES = (".whl", ".zip", ".jar", ".egg", ".war", ".gz")
MAX_MEMBERS = 100_000
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"


def is_archive(head: bytes) -> bool:
    """Bytes that start a gzip stream or a zip file (a zip may also hide behind a prefix: zipfile copes)."""
    return head.startswith((GZIP_MAGIC, ZIP_MAGIC))


def has_zip_directory(path: Path) -> bool:
    """A zip central directory at the end of the file, whatever precedes it (pip's old HTTP cache stores a
    serialised response header before the wheel's bytes)."""
    fd = open_regular(path)
    if fd is None:
        return False
    with os.fdopen(fd, "rb") as fh:
        try:
            return zipfile.is_zipfile(fh)
        except OSError:
            return False


def members(path: Path, member_limit: int) -> Iterator[tuple[str, bytes | None]]:
    """(member name, bytes) of an archive; bytes is None for a member over the limit (skipped, counted)."""
    fd = open_regular(path)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:
            fh.seek(0)
            yield from _gzip_members(fh, path.name, member_limit)
            return
        fh.seek(0)
        yield from _zip_members(fh, member_limit)


def _gzip_members(fh, name: str, member_limit: int) -> Iterator[tuple[str, bytes | None]]:
    """A gzipped tar yields its regular members; any other gzip stream is one member (the name without .gz)."""
    try:
        with gzip.GzipFile(fileobj=fh) as gz:
            head = gz.read(512)
    except (OSError, EOFError):
        return
    if len(head) == 512 and head[257:262] == b"ustar":
        fh.seek(0)
        yield from _tar_members(fh, member_limit)
        return
    fh.seek(0)
    try:
        with gzip.GzipFile(fileobj=fh) as gz:
            data = gz.read(member_limit + 1)
    except (OSError, EOFError):
        return
    yield name[:-3] if name.endswith(".gz") else name, data if len(data) <= member_limit else None


def _tar_members(fh, member_limit: int) -> Iterator[tuple[str, bytes | None]]:
    total = 0
    try:
        with tarfile.open(fileobj=fh, mode="r|gz") as tar:
            for n, m in enumerate(tar):
                tar.members = []  # stream mode keeps every TarInfo otherwise
                # skipping a member still inflates it: the budget counts declared sizes too
                total += m.size
                if n >= MAX_MEMBERS or total > member_limit * 16:
                    return
                if not m.isreg():
                    continue
                if m.size > member_limit:
                    yield m.name, None
                    continue
                f = tar.extractfile(m)
                yield m.name, f.read(member_limit + 1) if f is not None else None
    except (tarfile.TarError, OSError, EOFError):
        return


def _zip_members(fh, member_limit: int) -> Iterator[tuple[str, bytes | None]]:
    total = 0
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    with zf:
        for n, info in enumerate(zf.infolist()):
            if n >= MAX_MEMBERS or total > member_limit * 16:
                return
            if info.is_dir():
                continue
            if info.file_size > member_limit:
                yield info.filename, None
                continue
            try:
                with zf.open(info) as m:
                    data = m.read(member_limit + 1)  # the declared size can lie: read at most the limit
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError, ValueError):
                yield info.filename, None
                continue
            total += len(data)
            yield info.filename, data if len(data) <= member_limit else None
