"""Atomic writes: a file or a whole folder appears complete or not at all."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temp file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a written file should follow the umask
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_folder(out: Path) -> Iterator[Path]:
    """Yield a temp folder beside `out`; on success it replaces `out` whole, on error it is removed.

    An existing `out` is moved aside first and deleted only after the new folder is in place, so a
    reader never sees a half-written report and a failure leaves the old one untouched.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder; choose another --out")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; a report folder should follow the umask
    except OSError as exc:
        raise InputError(f"{out}: cannot write the report folder ({exc.strerror})") from None
    try:
        yield tmp
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
            os.rmdir(old)
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
