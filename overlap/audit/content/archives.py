"""Members of archives left in an environment, read within the audit's limits: zip-family archives (wheels,
jars, eggs, zips), tars (plain or compressed: gzip, bzip2, xz, zstd; Gradle build-cache entries are gzipped
tars) and single compressed files (`calc.py.gz`, `.xz`, `.bz2`, `.zst`): each member up to
``archive_member_bytes`` (16 MiB), each archive up to 16 times that in total, counted on decompressed bytes as
they stream, the members of archives nested in it included. The format is chosen by magic bytes, not by name
(a `.tgz`, a `.tar` or a cache entry named by its hash reads alike). A member that is itself an archive (a zip
inside a tgz, a tgz inside a tar) is opened too, up to ``NESTED_DEPTH`` levels below the file, its members named
``outer!/inner``; the budget of bytes and members is shared by every level. Nothing is extracted to disk."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..tar_headers import BoundedInfo, HeaderTooLarge
from ..tree import open_regular

ARCHIVE_SUFFIXES = (".whl", ".zip", ".jar", ".egg", ".war", ".gz", ".tgz", ".tar", ".bz2", ".tbz2", ".xz", ".txz",
                    ".zst", ".tzst")
MAX_MEMBERS = 100_000
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
# bzip2's magic with its first block's (`BZh` alone starts ordinary text)
COMPRESSED = {GZIP_MAGIC: ".gz", b"BZh": ".bz2", b"\xfd7zXZ\x00": ".xz", b"\x28\xb5\x2f\xfd": ".zst"}
HEAD_BYTES = 262  # enough to see a tar header's `ustar` magic (at 257)
NESTED_DEPTH = 3  # archive levels opened below the file itself
BUNDLE_MAGIC = (b"# v2 git bundle\n", b"# v3 git bundle\n")


def read_when_large(name: str, head: bytes) -> bool:
    """Whether a file over ``scan_file_bytes`` is still read, judged by its name and first bytes (8 KiB): an
    archive (read member by member), a git bundle (its header) or a text (streamed line by line)."""
    return name.endswith(ARCHIVE_SUFFIXES) or is_archive(head[:HEAD_BYTES]) or head.startswith(BUNDLE_MAGIC) \
        or b"\0" not in head


def is_archive(head: bytes) -> bool:
    """Bytes that start a compressed stream, a zip file or a tar (a zip may also hide behind a prefix:
    zipfile copes, `has_zip_directory` finds it)."""
    if head.startswith(b"BZh"):
        return len(head) >= 10 and head[3:4].isdigit() and head[4:10] == b"1AY&SY"
    return head.startswith((*COMPRESSED, ZIP_MAGIC)) or _is_tar(head)


def _is_tar(head: bytes) -> bool:
    return len(head) >= HEAD_BYTES and head[257:262] == b"ustar"


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
    """(member name, bytes) of an archive and of the archives nested in it; bytes is None for a member over the
    limit, or the one at which the archive's budget ran out (skipped, counted)."""
    fd = open_regular(path)
    if fd is None:
        return
    budget = [member_limit * 16, MAX_MEMBERS]  # decompressed bytes and members left, shared by every level
    with os.fdopen(fd, "rb") as fh:
        yield from _nested(_members_of(fh, path.name, member_limit, budget), member_limit, budget, NESTED_DEPTH)


def _nested(items: Iterator[tuple[str, bytes | None]], member_limit: int, budget: list[int],
            depth: int) -> Iterator[tuple[str, bytes | None]]:
    for name, data in items:
        yield name, data
        if depth and data is not None and is_archive(data[:HEAD_BYTES]):
            inner = _members_of(io.BytesIO(data), name.rpartition("/")[2], member_limit, budget)
            yield from _nested(((f"{name}!/{n}", d) for n, d in inner), member_limit, budget, depth - 1)


def _members_of(fh, name: str, member_limit: int, budget: list[int]) -> Iterator[tuple[str, bytes | None]]:
    head = fh.read(HEAD_BYTES)
    fh.seek(0)
    suffix = next((s for magic, s in COMPRESSED.items() if head.startswith(magic)), None)
    if suffix is not None:
        opener = _decompressor(suffix)
        if opener is not None:
            yield from _compressed_members(fh, opener, name, suffix, member_limit, budget)
        return
    if _is_tar(head):
        yield from _tar_members(fh, member_limit, budget)
        return
    yield from _zip_members(fh, member_limit, budget)


def _spend(budget: list[int], size: int) -> bool:
    """Take one member of ``size`` bytes from the budget; whether it was still there."""
    budget[0] -= size
    budget[1] -= 1
    return budget[0] >= 0 and budget[1] >= 0


def _decompressor(suffix: str) -> Callable | None:
    """A function opening a decompressing stream over a file object (None: zstd without a zstd package)."""
    if suffix == ".gz":
        return lambda fh: gzip.GzipFile(fileobj=fh)
    if suffix == ".bz2":
        return bz2.BZ2File
    if suffix == ".xz":
        return lzma.LZMAFile
    try:  # optional, as for image layers
        import zstandard
    except ImportError:
        return None
    # closefd=False: the archive's file is read again (its head, then its members), and closed by its owner
    return lambda fh: zstandard.ZstdDecompressor().stream_reader(fh, closefd=False)


def _unreadable(exc: Exception) -> bool:
    """A damaged or cut archive: what the readers raise for it (zstandard's ZstdError is its own type)."""
    return isinstance(exc, (tarfile.TarError, OSError, EOFError, ValueError, lzma.LZMAError)) or \
        type(exc).__name__ == "ZstdError"


def _compressed_members(fh, opener: Callable, name: str, suffix: str, member_limit: int,
                        budget: list[int]) -> Iterator[tuple[str, bytes | None]]:
    """A compressed tar yields its regular members; any other compressed stream is one member (the name
    without its suffix)."""
    try:
        with opener(fh) as stream:
            head = stream.read(512)
    except Exception as exc:  # noqa: BLE001 - a damaged archive is no members, never an error
        if _unreadable(exc):
            return
        raise
    fh.seek(0)
    if len(head) == 512 and head[257:262] == b"ustar":
        with opener(fh) as stream:
            yield from _tar_members(stream, member_limit, budget)
        return
    try:
        with opener(fh) as stream:
            data = stream.read(member_limit + 1)
    except Exception as exc:  # noqa: BLE001
        if _unreadable(exc):
            return
        raise
    fits = _spend(budget, len(data)) and len(data) <= member_limit
    yield name[:-len(suffix)] if name.endswith(suffix) else name, data if fits else None


def _tar_members(stream, member_limit: int, budget: list[int]) -> Iterator[tuple[str, bytes | None]]:
    """The regular members of a tar read as a stream (decompressed already, or plain)."""
    try:
        # extended headers read only up to 1 MiB: a huge PAX header in a small archive is never held in memory
        with tarfile.open(fileobj=stream, mode="r|", tarinfo=BoundedInfo) as tar:
            for m in tar:
                tar.members = []  # stream mode keeps every TarInfo otherwise
                # skipping a member still reads it: the budget counts declared sizes too
                if not _spend(budget, m.size):
                    if m.isreg():
                        yield m.name, None
                    return
                if not m.isreg():
                    continue
                if m.size > member_limit:
                    yield m.name, None
                    continue
                f = tar.extractfile(m)
                yield m.name, f.read(member_limit + 1) if f is not None else None
    except HeaderTooLarge:
        return  # read as far as the runtime reads it, as a damaged archive is
    except Exception as exc:  # noqa: BLE001
        if not _unreadable(exc):
            raise


def _zip_members(fh, member_limit: int, budget: list[int]) -> Iterator[tuple[str, bytes | None]]:
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    with zf:
        for info in zf.infolist():
            if budget[0] < 0 or budget[1] <= 0:
                if not info.is_dir():
                    yield info.filename, None
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
            fits = _spend(budget, len(data)) and len(data) <= member_limit
            yield info.filename, data if fits else None
