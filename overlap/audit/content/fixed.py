"""The fixed content of every reference path: each file's patch applied to B's blob with the hardened
``git apply`` inside a private scratch folder (never the audited repo), hashed in process as a git blob.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ..git.cmd import GitError, GitRunner
from ..tree import TooLarge, read_regular
from .patch import FilePatch, _safe_rel
from .reference import FixedFile, Reference


def blob_id(data: bytes, hexlen: int = 40) -> str:
    h = hashlib.sha1() if hexlen == 40 else hashlib.sha256()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class BaseUnreadable(Exception):
    """B's content of a path exists but cannot be read here (a submodule whose objects are not in the input):
    the fixed content stays unknown, with ``reason``, instead of passing for "not in B"."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def compute_fixed(ref: Reference, base_blob: Callable[[str], tuple[str, bytes] | None], runner: GitRunner,
                  scratch: Path, *, hexlen: int = 40) -> list[FixedFile]:
    """Post-fix content of every reference path; ``base_blob(path)`` gives B's (blob id, bytes) or None, or
    raises BaseUnreadable."""
    out: list[FixedFile] = []
    for src in ref.fix + ref.tests:
        for path, data in sorted(src.direct.items()):
            out.append(FixedFile(src.kind, path, blob_id(data, hexlen), len(data), data))
        for k, fp in enumerate(src.patches):
            if fp.new_path is None:
                continue
            ff = FixedFile(src.kind, fp.new_path)
            out.append(ff)
            if fp.new_mode == 0o160000:
                ff.status, ff.reason = "incomplete", "submodule change"
                continue
            _apply_one(fp, ff, base_blob, runner, scratch, k, hexlen)
    ref.fixed = out
    return out


def _apply_one(fp: FilePatch, ff: FixedFile, base_blob, runner: GitRunner, scratch: Path, k: int,
               hexlen: int) -> None:
    work = scratch
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700)
    old = None
    if fp.old_path is not None:
        try:
            got = base_blob(fp.old_path)
        except BaseUnreadable as exc:
            ff.status, ff.reason = "incomplete", exc.reason
            return
        if got is None:
            ff.status, ff.reason = "incomplete", f"{fp.old_path} is not in B (or B is missing)"
            return
        ff.base_blob, old = got
        ff.base_data = old
        target = work / fp.old_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(old)
    patch_file = work.parent / f"scratch-{k}.patch"
    texts = [fp.text]
    lines = [x for x in fp.text.splitlines(keepends=True) if x.strip()]
    if lines and all(x.endswith(b"\r\n") for x in lines) and b"\r" not in (old or b""):
        # a patch saved with CRLF line ends (a Windows editor, a web form) for a file without them: git apply
        # refuses it as it is, and the file the patch means is the one with the CRs dropped
        texts.append(fp.text.replace(b"\r\n", b"\n"))
    try:
        for n, text in enumerate(texts):
            patch_file.write_bytes(text)
            try:
                runner.run(["apply", "--whitespace=nowarn", str(patch_file)], cwd=work)
                break
            except GitError as exc:
                if n == len(texts) - 1:
                    ff.status, ff.reason = "incomplete", f"patch does not apply to B at {fp.new_path}: {exc.reason}"
                    return
    finally:
        patch_file.unlink(missing_ok=True)
    result = work / fp.new_path
    if result.is_symlink():
        data = os.readlink(result).encode("utf-8", "surrogateescape")
    else:
        try:
            data = read_regular(result, 1 << 31)
        except TooLarge:
            data = None
    if data is None:
        ff.status, ff.reason = "incomplete", f"{fp.new_path}: no file after applying the patch"
        return
    ff.blob = blob_id(data, hexlen)
    ff.size = len(data)
    ff.data = data
    if fp.new_abbrev and not ff.blob.startswith(fp.new_abbrev):
        ff.status, ff.reason = "incomplete", (
            f"patch does not match base B at {fp.new_path}: computed blob {ff.blob[:12]}, "
            f"index line says {fp.new_abbrev}")
    elif ff.base_blob == ff.blob:
        ff.status, ff.reason = "unchanged", "content equals B's (mode-only change)"


def reverse_applies(runner: GitRunner, scratch: Path, files: dict[str, bytes], patch: bytes) -> bool:
    """Whether ``patch`` is already applied to ``files`` (``git apply -R --check`` in the scratch folder)."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(mode=0o700)
    for rel, data in files.items():
        target = scratch / _safe_rel(rel, "patch")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    patch_file = scratch.parent / "scratch-reverse.patch"
    patch_file.write_bytes(patch)
    try:
        runner.run(["apply", "-R", "--check", str(patch_file)], cwd=scratch)
        return True
    except GitError:
        return False
    finally:
        patch_file.unlink(missing_ok=True)
