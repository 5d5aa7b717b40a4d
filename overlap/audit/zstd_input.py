"""zstd-compressed input: the decompressor, and a compressed archive read as the plain tar it holds.

tarfile reads gzip, bzip2 and xz itself (``r:*``) but not zstd before Python 3.14, so a zstd-compressed
``docker save`` archive, OCI layout tar or root filesystem tar is read here: its member names by streaming
(kind detection needs nothing else), and for the image readers, which open members in any order, as a plain
copy decompressed into a temporary folder. The copy counts against the same limit as the layers a gzip
archive holds (``image_bytes``): decompression stops there, so a small file that inflates hugely never fills
the disk. The decompressor is the optional ``zstandard`` package, else Python 3.14's ``compression.zstd``.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError
from .tree import open_regular, read_head

MAGIC = b"\x28\xb5\x2f\xfd"
NO_DECOMPRESSOR = "neither the zstandard package nor compression.zstd is available (pip install zstandard)"


def is_zstd(path: Path) -> bool:
    """Whether a regular file starts with the zstd frame magic (what it holds, whatever its name)."""
    return read_head(path, 4) == MAGIC


def decompressor(buf):
    """A streaming reader of the zstd data in ``buf``, or None when no zstd decompressor is installed."""
    # imported on demand: optional packages, needed only for zstd data (and the tests hide them)
    try:
        import zstandard
    except ImportError:
        try:
            from compression import zstd  # Python 3.14+
        except ImportError:
            return None
        return zstd.ZstdFile(buf)
    return zstandard.ZstdDecompressor().stream_reader(buf)


def corrupt(exc: Exception) -> bool:
    """Whether ``exc`` is a zstd decompressor's complaint about its input: each package names it ZstdError,
    and ``compression.zstd`` ends a cut stream with EOFError."""
    return type(exc).__name__ == "ZstdError" or isinstance(exc, EOFError)


class PastLimit(Exception):
    """The decompressed archive passes ``limit`` bytes."""

    def __init__(self, limit: int):
        super().__init__(limit)
        self.limit = limit


_SKIPPABLE = range(0x184D2A50, 0x184D2A60)


def cut_short(raw) -> str | None:
    """Where the zstd frames of the file ``raw`` end early or stop being zstd, else None. zstandard's stream
    reader ends a cut stream without a word, and an archive has no digest to catch it (a layer has): so the
    frame and block headers are walked first (RFC 8878; contents are skipped, not decompressed)."""
    size = raw.seek(0, os.SEEK_END)
    pos = 0
    while pos < size:
        raw.seek(pos)
        head = raw.read(4)
        magic = int.from_bytes(head, "little") if len(head) == 4 else None
        if magic in _SKIPPABLE:
            length = raw.read(4)
            pos += 8 + (int.from_bytes(length, "little") if len(length) == 4 else size)
            continue
        if head != MAGIC:
            return f"no zstd frame at byte {pos}"
        flags = raw.read(1)
        if not flags:
            return "the data ends inside a frame"
        fcs, single, checksum, did = flags[0] >> 6, flags[0] >> 5 & 1, flags[0] >> 2 & 1, flags[0] & 3
        pos += 5 + (0 if single else 1) + (0, 1, 2, 4)[did] + ((1 if single else 0), 2, 4, 8)[fcs]
        last = False
        while not last and pos + 3 <= size:
            raw.seek(pos)
            block = int.from_bytes(raw.read(3), "little")
            last, kind, length = bool(block & 1), block >> 1 & 3, block >> 3
            pos += 3 + (1 if kind == 1 else length)
        if not last:
            return "the data ends inside a frame"
        pos += 4 * checksum
    return None if pos == size else "the data ends inside a frame"


@contextmanager
def _opened(path: Path) -> Iterator:
    """The decompressed stream of ``path``; one line naming the file when it cannot be read."""
    fd = open_regular(path)
    if fd is None:
        raise InputError(f"{path}: not a regular file")
    with os.fdopen(fd, "rb") as raw:
        stream = decompressor(raw)
        if stream is None:
            raise InputError(f"{path}: a zstd-compressed archive, and {NO_DECOMPRESSOR}")
        cut = cut_short(raw)
        raw.seek(0)
        if cut:
            raise InputError(f"{path}: the zstd-compressed archive is truncated or corrupt ({cut}); save or "
                             "compress it again")
        try:
            yield stream
        except Exception as exc:
            if not corrupt(exc):
                raise
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"{path}: the zstd-compressed archive is truncated or corrupt ({reason}); save or "
                             "compress it again") from None


@contextmanager
def tar_stream(path: Path) -> Iterator[tarfile.TarFile]:
    """The tar inside a zstd-compressed file, read front to back (members in order, no seeking)."""
    with _opened(path) as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
        yield tar


def decompress_to(path: Path, dest: Path, limit: int | None) -> None:
    """Write the decompressed content of ``path`` to ``dest``; PastLimit past ``limit`` bytes (``dest`` is then
    partial: the caller removes its folder)."""
    written = 0
    with _opened(path) as stream, open(dest, "xb") as out:
        while chunk := stream.read(1 << 20):
            written += len(chunk)
            if limit is not None and written > limit:
                raise PastLimit(limit)
            try:
                out.write(chunk)
            except OSError as exc:
                raise InputError(f"{path}: no room to decompress it in the temporary folder ({exc.strerror}); "
                                 "free space there or set TMPDIR") from None


class PlainCopy:
    """A temporary folder (below ``spool``, else the system's) holding ``archive.tar``, the decompressed
    content of a zstd-compressed file; removed by ``close``, or when the copy is collected."""

    def __init__(self, path: Path, spool: Path | None, limit: int | None):
        folder = Path(tempfile.mkdtemp(prefix="zstd-", dir=spool))
        self.close = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)  # also at exit
        self.tar = folder / "archive.tar"
        try:
            decompress_to(path, self.tar, limit)
        except BaseException:
            self.close()
            raise

