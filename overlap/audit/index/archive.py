"""Release archives read member by member, never extracted and never executed (a ``setup.py`` is text like any
other): sdists and npm tarballs as gzipped tars (read as strictly as image layers, ``strict_tar``), wheels,
zip sdists and Go module zips as zips. Only the members ``want`` asks for are read, each up to
``member_limit`` bytes and all of them up to ``total_limit`` decompressed bytes (counted as they stream, so a
zip bomb stops at the limit). A member named with ``..``, an absolute name, a link, a device or a member past
the limits is skipped and counted in ``Counters.skipped``, never followed.
"""

from __future__ import annotations

import gzip
import posixpath
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

from ..image.strict_tar import open_tar
from .http import Counters, Unavailable

MAX_MEMBERS = 200_000


def safe_name(name: str) -> str | None:
    """A member name as a relative POSIX path, or None when it is absolute or climbs out (``..``)."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return None
    norm = posixpath.normpath(name.replace("\\", "/"))
    if norm == ".." or norm.startswith("../") or "/../" in f"/{norm}/":
        return None
    return norm


def read_members(path: Path, want: Callable[[str], bool], counters: Counters, member_limit: int = 16 << 20,
                 total_limit: int = 256 << 20) -> dict[str, bytes]:
    """{member name: bytes} of the wanted regular members of the archive at ``path``."""
    with open(path, "rb") as fh:
        head = fh.read(4)
        fh.seek(0)
        if head.startswith(b"\x1f\x8b"):
            return _tar(gzip.GzipFile(fileobj=fh), want, counters, member_limit, total_limit)
        if head.startswith(b"PK"):
            return _zip(fh, want, counters, member_limit, total_limit)
    raise Unavailable(f"{path.name}: neither a gzipped tar nor a zip")


def _tar(stream, want, counters: Counters, member_limit: int, total_limit: int) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    spent, seen = 0, 0
    try:
        with open_tar(stream) as tar:
            for m in tar:
                tar.members = []  # stream mode keeps every TarInfo otherwise
                seen += 1
                spent += max(m.size, 0)  # skipping a member still decompresses it
                if seen > MAX_MEMBERS or spent > total_limit:
                    counters.skip("archive past its size or member limit")
                    break
                name = safe_name(m.name)
                if name is None:
                    counters.skip("archive member with an absolute or '..' name")
                    continue
                if not m.isreg():
                    if m.issym() or m.islnk():
                        counters.skip("archive member that is a link (not followed)")
                    elif not m.isdir():
                        counters.skip("archive member that is a device or FIFO")
                    continue
                if not want(name):
                    continue
                if m.size > member_limit:
                    counters.skip("archive member over the member limit")
                    continue
                f = tar.extractfile(m)
                out[name] = f.read(member_limit + 1) if f is not None else b""
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise Unavailable(f"a damaged archive ({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})"
                          ) from None
    return out


def _zip(fh, want, counters: Counters, member_limit: int, total_limit: int) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise Unavailable(f"a damaged zip ({exc})") from None
    spent = 0
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            counters.skip("archive past its size or member limit")
            infos = infos[:MAX_MEMBERS]
        for info in infos:
            name = safe_name(info.filename)
            if name is None:
                counters.skip("archive member with an absolute or '..' name")
                continue
            if info.is_dir():
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink stored by a Unix zip tool
                counters.skip("archive member that is a link (not followed)")
                continue
            if not want(name):
                continue
            if info.file_size > member_limit:
                counters.skip("archive member over the member limit")
                continue
            try:
                with zf.open(info) as m:
                    data = m.read(member_limit + 1)  # the declared size can lie: read at most the limit
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError, ValueError,
                    zlib.error):
                counters.skip("archive member unreadable (damaged or encrypted)")
                continue
            spent += len(data)
            if len(data) > member_limit:
                counters.skip("archive member over the member limit")
                continue
            if spent > total_limit:
                counters.skip("archive past its size or member limit")
                break
            out[name] = data
    return out
