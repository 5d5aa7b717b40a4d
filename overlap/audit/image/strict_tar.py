"""Layer tars read as strictly as the runtime reads them (Go's archive/tar, under containerd and Docker): a
header block cut short, a header whose checksum fails, or a lone zero block followed by more data make the
layer unreadable, where Python's tarfile would stop quietly and drop every member after it."""

from __future__ import annotations

import tarfile


class Damaged(tarfile.ReadError):
    """A layer tar the runtime refuses too; the message says what is wrong and at which byte."""


_ZERO = bytes(tarfile.BLOCKSIZE)


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
        return obj._proc_member(tar)


def open_tar(stream) -> tarfile.TarFile:
    """A layer tar read as a stream, strictly (`_StrictInfo`)."""
    return tarfile.open(fileobj=stream, mode="r|", tarinfo=_StrictInfo)
