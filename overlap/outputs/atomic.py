"""Atomic writes and owned output folders: a file or a whole folder appears complete or not at all, and
a folder is only ever replaced when the tool wrote it.

Ownership rule. Every output folder the tool writes holds a marker file, `.overlap-output` (`MARKER`), with
JSON `{"command": "compare", "files": [...], "tool": "overlap", "version": "..."}`: the command that wrote the
folder and the top-level names it wrote. `--out` may name a folder that

- does not exist (its parent must be a folder or creatable), or
- is empty, or
- holds a previous output of the same command: its marker names that command, and every other entry is one
  the marker lists or is itself an overlap output folder (e.g. `card/` inside a compare report).

Anything else is refused with one line (`InputError`, exit 2) before any work is done
(`check_out_folder(out, command)`, called first by every command that writes a folder): a folder with
user files, another command's output, a file, a symbolic link, the root, the home folder, the current
folder or one holding it, and a folder that holds one of the command's inputs. `atomic_folder` checks the
same again just before it replaces `out`, and never deletes a folder it does not own.

`overlap demo` writes a compare report, so its folder is a `compare` output; `overlap report` may write
into the compare output it renders (`ACCEPTS`).

OS errors (permission, disk full, read-only file system, busy, not a folder) become `InputError`s that
name the path, never tracebacks.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import __version__
from ..errors import InputError

MARKER = ".overlap-output"
TOOL = "overlap"
# The commands whose output folders may be replaced by another command's output, beyond the same command.
ACCEPTS = {"report": ("report", "compare")}

_HINTS = {
    errno.ENOSPC: "free some space or choose another --out",
    errno.EDQUOT: "free some space or choose another --out",
    errno.EACCES: "check its permissions or choose another --out",
    errno.EPERM: "check its permissions or choose another --out",
    errno.EROFS: "the file system is read-only; choose another --out",
    errno.EBUSY: "it is in use (a mount point?); choose another --out",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another --out",
    errno.EEXIST: "a part of the path is a file, not a folder; choose another --out",
}


def os_error_reason(exc: OSError) -> str:
    """What went wrong and what to do, without the path: `No space left on device; free some space …`."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = _HINTS.get(exc.errno or 0, "")
    return " ".join(f"{reason}{'; ' + hint if hint else ''}".split())


def os_error_message(exc: OSError, path: str | os.PathLike | None = None) -> str:
    """One line for an OS error: the path (`path`, else the error's own), what went wrong, what to do."""
    where = path if path is not None else exc.filename
    return f"{where}: {os_error_reason(exc)}" if where is not None else os_error_reason(exc)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_file_target(path: str | os.PathLike, name: str | None = None) -> None:
    """An existing `path` that is no regular file (a device, a pipe, a symbolic link, a folder) is refused in one
    line: a write replaces the file whole by a rename, so it would replace `/dev/null` itself, or the link
    rather than what it names. `name`: how the message names it (default: the path)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(os_error_message(exc, path)) from None
    if stat.S_ISREG(mode):
        return
    kind = "a folder" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode) else "a device or a pipe"
    raise InputError(f"{name or path}: is {kind}, not a file; give the path of a new or regular file (for the "
                     "output on stdout, use --format json)")


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temp file in the same folder and a rename (`path`, if it exists, a
    regular file: `check_file_target`)."""
    path = Path(path)
    check_file_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(os_error_message(exc, path.parent)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a written file should follow the umask
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(os_error_message(exc, path)) from None
        raise


def read_marker(folder: Path) -> dict | None:
    """The marker of an overlap output folder, or None when `folder` holds no valid one."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("tool") != TOOL or not isinstance(data.get("command"), str):
        return None
    if not isinstance(data.get("files"), list):
        return None
    return data


def folder_owner(folder: Path) -> str | None:
    """The command whose output `folder` is, or None (not a folder, or not written by overlap)."""
    marker = read_marker(folder) if Path(folder).is_dir() else None
    return marker["command"] if marker else None


def _marker_text(command: str, files: list[str]) -> str:
    data = {"command": command, "files": sorted(files), "tool": TOOL, "version": str(__version__)}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def printable(text: str) -> str:
    """`text` on one line for a message: line breaks, control and format characters (e.g. bidi overrides)
    from names and data are shown escaped, never obeyed."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


def _refuse(out: Path, why: str) -> InputError:
    return InputError(f"--out {printable(out)}: {why}")


def _is_within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _check_place(out: Path) -> Path:
    """Refuse a place that is never an output folder, whatever it holds; returns the nearest existing
    parent of `out`."""
    if out.is_symlink():
        raise _refuse(out, "is a symbolic link; give the folder it points to, or another --out")
    resolved = out.resolve()
    if resolved == Path(resolved.anchor):
        raise _refuse(out, "is the root folder; choose a new folder for the output")
    if resolved == Path.home().resolve():
        raise _refuse(out, "is your home folder; choose a new folder for the output")
    if _is_within(Path.cwd().resolve(), resolved):
        raise _refuse(out, "is the current folder or holds it; choose a new folder for the output")
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise _refuse(out, f"{parent} is a file, not a folder; choose another --out")
    return parent


def _probe(out: Path, parent: Path) -> None:
    """Refuse now, not after the work, when nothing can be created where `out` goes (read-only, no
    permission, /proc, …): a temp folder is made in the nearest existing parent and removed at once."""
    try:
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.", suffix=".probe"))
    except OSError as exc:
        raise _refuse(out, f"cannot write in {parent}: {os_error_reason(exc)}") from None


def _check_owned(out: Path, accept: tuple[str, ...] | None, command: str | None) -> None:
    """Refuse an existing folder that is not empty and not an output of one of `accept` (None: any)."""
    try:
        names = sorted(os.listdir(out))
    except OSError as exc:
        raise InputError(os_error_message(exc, out)) from None
    if not names:
        return
    marker = read_marker(out)
    wanted = f"`overlap {command}`" if command else "overlap"
    if marker is None:
        shown = ", ".join(map(printable, names[:3])) + (", …" if len(names) > 3 else "")
        raise _refuse(out, f"holds files that are not an output of {wanted} ({shown}); give a new or empty "
                           f"folder")
    if accept is not None and marker["command"] not in accept:
        raise _refuse(out, f"holds the output of `overlap {marker['command']}`, not of {wanted}; choose another "
                           f"--out")
    extra = _foreign(out, marker, names)
    if extra is not None:
        raise _refuse(out, f"holds {printable(extra)}, which overlap did not write there; move it or choose another "
                           f"--out")


def _foreign(folder: Path, marker: dict, names: list[str], depth: int = 0) -> str | None:
    """The first entry of an output folder that its marker does not list and that is no overlap output itself,
    looking inside the outputs nested in it too (a card folder inside a compare folder): replacing the folder
    removes everything in it, so a user's file anywhere inside is refused."""
    listed = {MARKER, *map(str, marker["files"])}
    for name in names:
        if name in listed:
            continue
        nested = read_marker(folder / name) if (folder / name).is_dir() and depth < 8 else None
        if nested is None:
            return name
        try:
            inner = sorted(os.listdir(folder / name))
        except OSError:
            return name
        found = _foreign(folder / name, nested, inner, depth + 1)
        if found is not None:
            return f"{name}/{found}"
    return None


def check_out_folder(out: Path, command: str, *, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Refuse (InputError, one line) an `--out` that `command` may not write: see the module docstring.

    `inputs` are the command's local input paths: `out` may not be, or hold, any of them."""
    out = Path(out)
    parent = _check_place(out)
    resolved = out.resolve()
    for item in inputs:
        path = Path(item)
        if path.exists() and _is_within(path.resolve(), resolved):
            raise _refuse(out, f"holds the input {path}; write the output somewhere else")
        # Inside an input folder the output would be read as input next time (a folder of shards is listed).
        if path.is_dir() and _is_within(resolved, path.resolve()):
            raise _refuse(out, f"is inside the input folder {path}; write the output somewhere else")
    if out.exists() and not out.is_dir():
        raise _refuse(out, "is a file, not a folder; choose another --out")
    if out.exists():
        _check_owned(out, ACCEPTS.get(command, (command,)), command)
    _probe(out, parent)


def _check_replace(out: Path, command: str | None) -> None:
    _check_place(out)
    if out.exists():
        if not out.is_dir():
            raise _refuse(out, "is a file, not a folder; choose another --out")
        _check_owned(out, None if command is None else (command,), command)


@contextmanager
def atomic_folder(out: Path, *, command: str | None = None) -> Iterator[Path]:
    """Yield a temp folder beside `out`; on success it replaces `out` whole, on error it is removed.

    With `command`, the marker naming it is written into the folder. `out` must be missing, empty or an
    overlap output (of `command` when given): checked before the temp folder is made and again just before
    the replace. An existing `out` is moved aside first and deleted only after the new folder is in place,
    so a reader never sees a half-written report and a failure leaves the old one untouched.
    """
    out = Path(out)
    _check_replace(out, command)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; a report folder should follow the umask
    except OSError as exc:
        raise InputError(f"{out}: cannot write the output folder in {out.parent}: {os_error_reason(exc)}") from None
    try:
        yield tmp
        if command is not None:
            (tmp / MARKER).write_text(_marker_text(command, os.listdir(tmp)), encoding="utf-8")
        _check_replace(out, command)  # the folder may have changed while the output was computed
        _replace(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and _is_within(Path(exc.filename or tmp).absolute(), tmp.absolute()):
            raise InputError(f"{out}: cannot write the output folder: {os_error_reason(exc)}") from None
        raise


def _replace(tmp: Path, out: Path) -> None:
    """Put `tmp` in the place of `out`; the old `out` is restored when that fails."""
    old = None
    try:
        if out.exists():
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
            os.rmdir(old)
            os.replace(out, old)
        os.replace(tmp, out)
    except OSError as exc:
        message = f"{out}: cannot replace the output folder: {os_error_reason(exc)}"
        if old is not None and old.exists() and not out.exists():
            try:
                os.replace(old, out)
            except OSError:
                message += f" (the previous output is kept in {old})"
        raise InputError(message) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
