"""Opening one data file for reading: the byte stream (decompressed), the format its content shows, and the
limits that keep a hostile file from costing unbounded memory.

A file's name says its format (`x.jsonl.gz`), but the bytes decide when they disagree: a parquet file (its
`PAR1` magic) is read as parquet and a gzip or zstd stream is decompressed whatever the file is called, so a
written split re-read under its input's name, or a `.gz` that is not compressed, is read as what it is.
"""

from __future__ import annotations

import os
from typing import Any

from ...errors import InputError

# A JSON line (or one element of a JSON array) longer than this is refused before it is held in memory:
# any text field over `overlap.model.FIELD_CAP_BYTES` (8 MB) is truncated for matching anyway, and a 2 GB
# line would cost several GB to decode (a sparse or pre-allocated file is one such "line" of NUL bytes).
MAX_LINE_BYTES = 256 << 20

_MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}
# What a clone made without Git LFS holds in place of each large file: a few lines of text naming the blob.
_LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def open_raw(path: str, filesystem: Any):
    import pyarrow as pa

    if filesystem is None:
        return pa.OSFile(path, "rb")
    return pa.PythonFile(filesystem.open(path, "rb"), mode="r")


def sniff(path: str, filesystem: Any, fmt: str, compression: str | None) -> tuple[str, str | None]:
    """(format, compression) of a local file as its first bytes show them (Hub files: as named)."""
    if filesystem is not None:
        return fmt, compression
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return fmt, compression  # the reader reports it, naming the file
    if head == b"PAR1":
        return "parquet", None
    for magic, codec in _MAGIC.items():
        if head.startswith(magic):
            return fmt, codec
    return fmt, None


def refuse_non_utf8_path(path, name: str) -> None:
    """A path holding bytes that are no UTF-8 (kept by Python as surrogates): an InputError naming it, since
    Arrow cannot open it and its error ("surrogates not allowed") blamed the file's content."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(str(path)).decode("utf-8", "backslashreplace")
        what = "the file's name" if _surrogates(str(name)) else "a folder's name"
        raise InputError(f"{shown}: {what} is not UTF-8 text, which the readers cannot open; rename it "
                         "(e.g. convmv -f latin1 -t utf8)") from None


def _surrogates(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def refuse_lfs_pointer(path: str, name: str) -> None:
    """A local file that is a Git LFS pointer, not the data: an InputError saying so (read as data, it failed
    as a corrupt parquet file, invalid JSON or a CSV without the id column)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_LFS_POINTER))
    except OSError:
        return  # the reader reports it, naming the file
    if head == _LFS_POINTER:
        raise InputError(f"{name}: a Git LFS pointer file, not the data (the repo was cloned without Git LFS, so "
                         "its large files were never downloaded); run `git lfs install && git lfs pull` in the "
                         "clone (a Hub dataset can also be downloaded whole: `hf download --repo-type dataset "
                         "OWNER/NAME --local-dir DIR`)")


def open_stream(path: str, filesystem: Any, compression: str | None):
    import pyarrow as pa

    raw = open_raw(path, filesystem)
    return pa.CompressedInputStream(raw, compression) if compression else raw


def capped_lines(stream, name: str, limit: int = MAX_LINE_BYTES):
    """(line number, bytes) of each line of a binary stream; a line longer than `limit` is an InputError
    raised while reading it, never after holding all of it."""
    line_no = 0
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            return
        line_no += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise InputError(f"{name}: line {line_no} is longer than {limit >> 20} MiB; is this a JSON lines "
                             "file (one row per line)? Split the file or shorten its fields")
        yield line_no, raw


def refuse_binary(head: bytes, name: str) -> None:
    """A NUL byte in the first bytes of a JSON or CSV file: not text (a truncated, sparse or binary file)."""
    if b"\x00" in head:
        raise InputError(f"{name}: holds NUL bytes, so it is not JSON or CSV text (a binary, sparse or "
                         "pre-allocated file?); give the data file itself")
