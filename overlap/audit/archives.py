"""Members of zip-family archives (wheels, jars, eggs, zips) and gzip files, read within the limits of
§8.4: each member up to ``archive_member_bytes`` (16 MiB), each archive up to 16 times that in total,
counted on decompressed bytes as they stream. Nothing is extracted to disk."""

from __future__ import annotations

import gzip
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

ARCHIVE_SUFFIXES = (".whl", ".zip", ".jar", ".egg", ".war", ".gz")
MAX_MEMBERS = 100_000


def members(path: Path, member_limit: int) -> Iterator[tuple[str, bytes | None]]:
    """(member name, bytes) of an archive; bytes is None for a member over the limit (skipped, counted)."""
    total_limit = member_limit * 16
    total = 0
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return
    with os.fdopen(fd, "rb") as fh:
        if path.name.endswith(".gz") and not path.name.endswith(".tar.gz"):
            try:
                with gzip.GzipFile(fileobj=fh) as gz:
                    data = gz.read(member_limit + 1)
            except (OSError, EOFError):
                return
            yield path.name[:-3], data if len(data) <= member_limit else None
            return
        try:
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError, ValueError):
            return
        with zf:
            for n, info in enumerate(zf.infolist()):
                if n >= MAX_MEMBERS or total > total_limit:
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
