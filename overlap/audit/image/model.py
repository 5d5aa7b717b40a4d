"""An opened image: its config and layers (``Image``, ``Layer``), and one layer's bytes as they stream:
decompressed by their magic bytes (gzip, zstd), hashed while read, and counted against ``image_bytes``
(``LimitHit`` past a safety limit)."""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from dataclasses import dataclass, field

from ...errors import InputError
from .. import zstd_input


class LimitHit(Exception):
    """The input cannot be read whole: a safety limit (``name``) or a missing decompressor; every check is
    ``incomplete`` with ``reason``."""

    def __init__(self, name: str, reason: str | None = None):
        super().__init__(name)
        self.name = name
        self.reason = reason or f"the {name} limit was reached while reading the input"



def _zstd_reader(buf, layer_index: int):
    """A streaming zstd decompressor; without one the image cannot be read (incomplete, not an error)."""
    stream = zstd_input.decompressor(buf)
    if stream is None:
        raise LimitHit("zstd", f"layer {layer_index} is zstd-compressed and {zstd_input.NO_DECOMPRESSOR}")
    return stream


def _decompression_error(exc: Exception) -> bool:
    return isinstance(exc, (EOFError, zlib.error, OSError, ValueError)) or zstd_input.corrupt(exc)


class _Hashing(io.RawIOBase):
    """Reads through ``raw`` while hashing; optional budget of bytes (a limit name is raised past it)."""

    def __init__(self, raw, budget: list[int] | None = None, limit_name: str = "", what: str | None = None):
        self.raw, self.sha, self.budget, self.limit_name = raw, hashlib.sha256(), budget, limit_name
        self.what = what  # the layer a decompressed stream is of: its read errors are named by it

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self.raw.read(len(b))
        except Exception as exc:
            # gzip ends early (EOFError) or finds bad bytes (BadGzipFile, zlib.error), zstd raises ZstdError:
            # one line naming the layer, never a traceback
            if self.what is None or not _decompression_error(exc):
                raise
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"{self.what}: the compressed layer is truncated or corrupt ({reason}); save or pull "
                             "the image again") from None
        n = len(data)
        if self.budget is not None:
            self.budget[0] -= n
            if self.budget[0] < 0:
                raise LimitHit(self.limit_name)
        self.sha.update(data)
        b[:n] = data
        return n


@dataclass
class Layer:
    index: int
    name: str  # member or blob path inside the archive or folder
    digest: str | None  # blob digest to verify (compressed bytes), None for legacy layer.tar
    diff_id: str | None
    created_by: str = ""
    foreign: bool = False  # a non-distributable layer (media type or LayerSources): it may be left out
    missing: bool = False  # foreign and absent from the archive: merged without it, every check incomplete


@dataclass
class Image:
    kind: str
    tags: list[str]
    config: dict
    config_digest: str | None
    layers: list[Layer]
    annotations: dict[str, str] = field(default_factory=dict)
    source: object = None
    platform: str | None = None
    layer_sources: dict = field(default_factory=dict)  # docker save: diff_id -> descriptor of a foreign layer
    unread: str | None = None  # why the archive could not be read (a limit): every check incomplete

    @property
    def present_layers(self) -> list[Layer]:
        return [x for x in self.layers if not x.missing]

    def missing_reason(self) -> str | None:
        """Why the merged view lacks layers (missing foreign layers make the image routes incomplete)."""
        gone = [x for x in self.layers if x.missing]
        if not gone:
            return None
        return "foreign (non-distributable) layer(s) not in the archive: " + ", ".join(
            f"{x.index} ({(x.diff_id or x.digest or x.name)[:19]}…)" for x in gone) + "; audited without them"

    def open_layer(self, layer: Layer, budget: list[int]) -> tuple[_Hashing, _Hashing, io.IOBase]:
        """(raw hasher, uncompressed hasher, uncompressed stream) of one layer."""
        raw = _Hashing(self.source.open(layer.name))
        buf = io.BufferedReader(raw, 1 << 16)
        magic = buf.peek(4)[:4]
        if magic[:2] == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=buf)
        elif magic == b"\x28\xb5\x2f\xfd":
            stream = _zstd_reader(buf, layer.index)
        else:
            stream = buf
        plain = _Hashing(stream, budget, "image_bytes", what=f"layer {layer.index} ({layer.name})")
        return raw, plain, io.BufferedReader(plain, 1 << 16)
