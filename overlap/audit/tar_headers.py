"""How far a tar's extended headers are read, for every tar the audit opens (image layers, archives in a tree):
as Go's archive/tar reads them under containerd and Docker, a PAX header or GNU long name only up to 1 MiB;
tarfile reads any size whole (a 1 GiB header in a 1 MB gzip file: gigabytes of memory)."""

from __future__ import annotations

import tarfile

MAX_SPECIAL = 1 << 20
_SPECIAL = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
            tarfile.GNUTYPE_LONGLINK)


def special_too_large(obj: tarfile.TarInfo, at: int) -> str | None:
    """Why an extended header (PAX, GNU long name or link) is not read, when it is over 1 MiB; else None."""
    if obj.type in _SPECIAL and obj.size > MAX_SPECIAL:
        what = "PAX header" if obj.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE) \
            else "GNU long name"
        return f"a {what} of {obj.size:,} bytes at byte {at:,}, over the runtime's limit of 1 MiB (a damaged or " \
               "hostile tar)"
    return None


class HeaderTooLarge(Exception):
    """`BoundedInfo`'s refusal: no TarError, so that `tarfile.open(mode="r:*")`, which tries every compression
    and folds their TarErrors into one message of several lines, lets it through as it is."""


class BoundedInfo(tarfile.TarInfo):
    """Header blocks whose extended headers are read only up to the runtime's 1 MiB (`special_too_large`)."""

    @classmethod
    def fromtarfile(cls, tar):
        at = tar.fileobj.tell()
        obj = cls.frombuf(tar.fileobj.read(tarfile.BLOCKSIZE), tar.encoding, tar.errors)
        obj.offset = tar.fileobj.tell() - tarfile.BLOCKSIZE
        why = special_too_large(obj, at)
        if why:
            raise HeaderTooLarge(why)
        return obj._proc_member(tar)
