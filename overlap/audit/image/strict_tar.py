"""Layer tars read as strictly as the runtime reads them (Go's archive/tar, under containerd and Docker): a
header block cut short, a header whose checksum fails, or a lone zero block followed by more data make the
layer unreadable, where Python's tarfile would stop quietly and drop every member after it."""

from __future__ import annotations

import io
import re
import tarfile

from ..tar_headers import special_too_large


class Damaged(tarfile.ReadError):
    """A layer tar the runtime refuses too; the message says what is wrong and at which byte."""


_ZERO = bytes(tarfile.BLOCKSIZE)


def refuse_large_special(obj: tarfile.TarInfo, at: int) -> None:
    """Damaged for an extended header the runtime would not read (`tar_headers.special_too_large`)."""
    why = special_too_large(obj, at)
    if why:
        raise Damaged(why)


class _StrictInfo(tarfile.TarInfo):
    """Header blocks read as Go's archive/tar reads them: tarfile ends the archive quietly at a cut header,
    a failed checksum or a lone zero block, which would hide every member after it."""

    @classmethod
    def fromtarfile(cls, tar):
        at = tar.fileobj.tell()
        buf = tar.fileobj.read(tarfile.BLOCKSIZE)
        if at == 0 and buf != _ZERO:  # no tar at all (a blob of another kind): tarfile's own error says so
            obj = cls.frombuf(buf, tar.encoding, tar.errors)
        else:
            if buf and len(buf) < tarfile.BLOCKSIZE:
                raise Damaged(f"the tar ends inside a header block at byte {at:,} (a truncated layer)")
            if buf == _ZERO:
                after = tar.fileobj.read(tarfile.BLOCKSIZE)
                if after and after != _ZERO:  # the end is two zero blocks; a lone one followed by data is damage
                    raise Damaged(f"a lone zero block at byte {at:,} is followed by more data (a damaged tar)")
                raise tarfile.EOFHeaderError("end of file header")
            try:
                obj = cls.frombuf(buf, tar.encoding, tar.errors)
            except tarfile.InvalidHeaderError as exc:
                raise Damaged(f"a damaged header block at byte {at:,} ({exc})") from None
        obj.offset = tar.fileobj.tell() - tarfile.BLOCKSIZE
        refuse_large_special(obj, at)
        try:
            obj = obj._proc_member(tar)
        except ValueError as exc:  # a PAX or GNU sparse record tarfile cannot parse (int() of its text)
            raise Damaged(f"a damaged extended header at byte {at:,} ({exc})") from None
        # PAX values Go parses as decimal int64 seconds and refuses otherwise (tarfile takes "nan", "1e30"),
        # and names with a NUL byte, which no path can hold
        for key in ("mtime", "atime", "ctime"):
            value = obj.pax_headers.get(key)
            if value is not None and not _PAX_TIME.fullmatch(value):
                raise Damaged(f"a damaged PAX {key} {value[:40]!r} at byte {at:,}")
        if "\0" in obj.name or "\0" in obj.linkname:
            raise Damaged(f"a name with a NUL byte at byte {at:,} (a damaged tar)")
        return obj


_PAX_TIME = re.compile(r"-?[0-9]{1,18}(\.[0-9]*)?")  # up to 18 digits: always an int64 number of seconds


class _EndGuard(io.RawIOBase):
    """The layer stream as tarfile reads it: tarfile skips a member's data by reading to its declared end and
    ignores the end of the stream on the way, so a header that declares more bytes than the layer holds
    (10^20) would spin for ever. A read after the stream already ended is that case; the runtime, which reads
    the data it skips, stops there with an error too."""

    def __init__(self, raw):
        self.raw, self.pos, self.ended = raw, 0, False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.raw.read(len(b))
        if not data:
            if self.ended:
                raise Damaged(f"the tar ends inside a member's data at byte {self.pos:,} (a truncated layer)")
            self.ended = True
            return 0
        self.pos += len(data)
        b[:len(data)] = data
        return len(data)


def open_tar(stream) -> tarfile.TarFile:
    """A layer tar read as a stream, strictly (`_StrictInfo`, `_EndGuard`)."""
    return tarfile.open(fileobj=_EndGuard(stream), mode="r|", tarinfo=_StrictInfo)
