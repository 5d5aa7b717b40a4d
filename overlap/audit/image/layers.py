"""Merging image layers and materialising a private view of the result.

Pass 1 streams every layer once, verifies its digests and builds the merged map (metadata only; small
files with answer-like names are kept for L11). Pass 2 streams the layers again and writes the visible
files into a private folder: git folders whole, other regular files up to ``scan_file_bytes`` (larger
ones as sparse files of the right size and time), symlinks outside git folders as symlinks that nothing follows.
Every write goes through ``openat``-style calls with ``O_NOFOLLOW``/``O_EXCL`` under the private root;
devices and FIFOs are never created. Names that escape the root are skipped and reported.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from .archive import AUFS_META, Image, LimitHit, _norm

SPOOL_NAMES = (".patch", ".diff", ".orig", ".rej")
META = ("parsed_commit.json", "modified_files.json", "task_description.md", "eval.sh", "run_tests.sh")


@dataclass
class MEntry:
    layer: int
    kind: str  # file | dir | symlink | hardlink | device | fifo
    mode: int
    size: int
    mtime: float
    link: str | None = None
    src: tuple[int, int] | None = None  # (layer, member ordinal) whose bytes this file shows


@dataclass
class Merged:
    entries: dict[str, MEntry] = field(default_factory=dict)
    shadowed: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    spooled: dict[tuple[int, int], bytes] = field(default_factory=dict)


def interesting(path: str) -> bool:
    name = posixpath.basename(path)
    return name.endswith(SPOOL_NAMES) or name in META or "r2e_tests/" in path or ".build_env/" in path


def _kind(m: tarfile.TarInfo) -> str:
    if m.isreg():
        return "file"
    if m.isdir():
        return "dir"
    if m.issym():
        return "symlink"
    if m.islnk():
        return "hardlink"
    if m.ischr() or m.isblk():
        return "device"
    return "fifo" if m.isfifo() else "other"


def _resolve_parent(entries: dict[str, MEntry], name: str, notes: list) -> str:
    """Where the runtime puts ``name`` when a parent is a symlink in the merged map (never on the host)."""
    parts = name.split("/")
    cur: list[str] = []
    hops = 0
    i = 0
    while i < len(parts) - 1:
        cand = "/".join(cur + [parts[i]])
        e = entries.get(cand)
        if e is not None and e.kind == "symlink" and e.link is not None and hops < 40:
            hops += 1
            target = e.link
            joined = target.lstrip("/") if target.startswith("/") else posixpath.join("/".join(cur), target)
            norm = posixpath.normpath("/" + joined).lstrip("/")
            cur = [p for p in norm.split("/") if p]
        else:
            cur.append(parts[i])
        i += 1
    out = "/".join(cur + [parts[-1]])
    if out != name:
        notes.append({"path": name, "reason": f"parent is a symlink in the image; placed at /{out}"})
    return out


def merge(img: Image, limits: dict[str, int]) -> Merged:
    """Pass 1: verify digests and diff_ids, apply whiteouts and opaque folders, build the merged map."""
    merged = Merged()
    budget = [limits["image_bytes"]]
    count = 0
    spool_left = 64 << 20
    for layer in img.present_layers:
        i = layer.index
        raw, plain, stream = img.open_layer(layer, budget)
        members: list[tuple[str, MEntry]] = []
        whiteouts, opaque = [], []
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for ordinal, m in enumerate(tar):
                    tar.members = []  # stream mode keeps every TarInfo otherwise
                    count += 1
                    if count > limits["image_entries"]:
                        raise LimitHit("image_entries")
                    if len(m.name.encode("utf-8", "surrogateescape")) > limits["path_bytes"]:
                        merged.skipped.append({"path": m.name[:200], "layer": i, "reason": "name too long"})
                        continue
                    name = _norm(m.name)
                    if name is None and m.isdir() and m.name.strip("/") in ("", "."):
                        continue  # the root folder itself (umoci and buildah write `./`): nothing to merge
                    if name is None:
                        merged.skipped.append({"path": m.name[:200], "layer": i, "reason": "name escapes the root"})
                        continue
                    base, parent = posixpath.basename(name), posixpath.dirname(name)
                    if base.startswith(".wh.") and m.isreg():
                        if base == ".wh..wh..opq":
                            opaque.append(parent)
                        elif base not in AUFS_META:
                            target = base[4:]
                            if target in ("", ".", ".."):
                                merged.skipped.append({"path": name, "layer": i, "reason": "bad whiteout marker"})
                            else:
                                whiteouts.append(posixpath.join(parent, target) if parent else target)
                        continue
                    e = MEntry(i, _kind(m), m.mode, m.size, float(m.mtime), m.linkname or None, (i, ordinal))
                    if e.kind == "hardlink":
                        e.link = _norm(m.linkname)
                    if e.kind == "file" and interesting(name) and m.size <= min(2 << 20, spool_left):
                        merged.spooled[(i, ordinal)] = tar.extractfile(m).read()
                        spool_left -= m.size
                    members.append((name, e))
            while stream.read(1 << 20):
                pass
            while raw.read(1 << 20):
                pass
        except tarfile.TarError as exc:
            if layer.digest and not _blob_whole(raw, layer.digest):  # a cut blob reads as a short tar: say so
                raise InputError(f"layer {i} ({layer.name}): blob does not match its digest {layer.digest[:19]}… "
                                 "(truncated or corrupt); save or pull the image again") from None
            raise InputError(f"layer {i} ({layer.name}): not a readable tar ({exc})") from None
        if layer.digest and "sha256:" + raw.sha.hexdigest() != layer.digest:
            raise InputError(f"layer {i} ({layer.name}): blob does not match its digest {layer.digest[:19]}…")
        if layer.diff_id and "sha256:" + plain.sha.hexdigest() != layer.diff_id:
            raise InputError(f"layer {i} ({layer.name}): its uncompressed tar does not match rootfs.diff_ids[{i}] "
                             "of the image config (a corrupt layer or config); save or pull the image again")
        own = {name for name, _ in members}
        # a hard link to a lower layer's file is made while the layer is applied, before a whiteout in the same
        # layer removes its target: the link keeps the bytes (the fix can hide so), so it is resolved first
        members = [(name, _linked(merged, e) if e.kind == "hardlink" and e.link not in own else e)
                   for name, e in members]
        for path in whiteouts:
            _remove(merged, path, below=i, how="whiteout", children_only=False)
        for folder in opaque:
            _remove(merged, folder, below=i, how="opaque folder", children_only=True)
        for name, e in members:
            _add(merged, name, e)
    return merged


def _linked(merged: Merged, e: MEntry) -> MEntry:
    """A hard link to a file of the lower layers as the file it shows (unchanged when its target is no file)."""
    target = merged.entries.get(e.link) if e.link else None
    if target is None or target.kind != "file":
        return e
    return MEntry(e.layer, "file", target.mode, target.size, e.mtime, None, target.src)


def _blob_whole(raw, digest: str) -> bool:
    """Whether a layer's compressed bytes, read to their end, match its digest."""
    try:
        while raw.read(1 << 20):
            pass
    except OSError:
        return False
    return "sha256:" + raw.sha.hexdigest() == digest


def _remove(merged: Merged, path: str, *, below: int, how: str, children_only: bool) -> None:
    entries = merged.entries
    prefix = path + "/" if path else ""
    doomed = [k for k in entries if k.startswith(prefix)] if prefix else list(entries)
    if not children_only and path in entries:
        doomed.append(path)
    for k in doomed:
        e = entries[k]
        if e.layer < below:
            if e.kind == "file":
                merged.shadowed.append({"path": "/" + k, "layer": e.layer, "hidden_by": below, "how": how,
                                        "src": e.src, "size": e.size, "interesting": interesting(k)})
            del entries[k]


def _add(merged: Merged, name: str, e: MEntry) -> None:
    entries = merged.entries
    name = _resolve_parent(entries, name, merged.skipped)
    old = entries.get(name)
    if old is not None:
        if old.kind == "dir" and e.kind == "dir":
            entries[name] = e
            return
        if old.kind == "dir":
            for k in [k for k in entries if k.startswith(name + "/")]:
                del entries[k]
        elif old.kind == "file" and old.layer < e.layer:
            merged.shadowed.append({"path": "/" + name, "layer": old.layer, "hidden_by": e.layer, "how": "overwritten",
                                    "src": old.src, "size": old.size, "interesting": interesting(name)})
    if e.kind == "hardlink":
        target = entries.get(e.link) if e.link else None
        if target is None or target.kind != "file":
            merged.skipped.append({"path": name, "layer": e.layer, "reason": "hardlink target outside the root or "
                                                                            "not a file"})
            return
        e = MEntry(e.layer, "file", target.mode, target.size, e.mtime, None, target.src)
    if e.kind in ("device", "fifo", "other"):
        merged.skipped.append({"path": name, "layer": e.layer, "reason": f"{e.kind} recorded, never created"})
    entries[name] = e


def read_members(img: Image, wanted: set[tuple[int, int]], limits: dict[str, int]) -> dict[tuple[int, int], bytes]:
    """The bytes of a few (layer, member ordinal) entries, streamed again from their layers (pass 3 for L11:
    shadowed files whose size equals a fixed file's). Members over ``spool_bytes`` are left out."""
    out: dict[tuple[int, int], bytes] = {}
    budget = [limits["image_bytes"]]
    for layer in img.present_layers:
        todo = {o for i, o in wanted if i == layer.index}
        if not todo:
            continue
        _, _, stream = img.open_layer(layer, budget)
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for ordinal, m in enumerate(tar):
                tar.members = []
                if ordinal in todo and m.isreg() and m.size <= limits["spool_bytes"]:
                    out[(layer.index, ordinal)] = tar.extractfile(m).read()
                    todo.discard(ordinal)
                if not todo:
                    break
    return out


# --------------------------------------------------------------------------------------- pass 2
def _in_git(path: str) -> bool:
    parts = path.split("/")
    return any(p == ".git" or p.endswith(".git") for p in parts[:-1])


class _Writer:
    """Creates files under ``root`` without following any symlink (dir fds, O_NOFOLLOW, O_EXCL)."""

    def __init__(self, root: Path, budget: int):
        self.root = root
        self.budget = budget
        root.mkdir(mode=0o700)
        self.root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)

    def close(self) -> None:
        os.close(self.root_fd)

    def _dir(self, parts: list[str]) -> int:
        fd = os.dup(self.root_fd)
        for p in parts:
            try:
                os.mkdir(p, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            nfd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nfd
        return fd

    def mkdir(self, path: str) -> None:
        os.close(self._dir(path.split("/")))

    def file(self, path: str, chunks, size: int, mode: int, mtime: float, sparse: bool) -> None:
        parts = path.split("/")
        fd = self._dir(parts[:-1])
        try:
            out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd)
            try:
                if sparse:
                    os.ftruncate(out, size)
                else:
                    for chunk in chunks:
                        self.budget -= len(chunk)
                        if self.budget < 0:
                            raise LimitHit("materialise_bytes")
                        os.write(out, chunk)
                os.fchmod(out, 0o755 if mode & 0o111 else 0o644)
                os.utime(out, ns=(int(mtime * 1e9), int(mtime * 1e9)))
            finally:
                os.close(out)
        finally:
            os.close(fd)

    def symlink(self, path: str, target: str) -> None:
        parts = path.split("/")
        fd = self._dir(parts[:-1])
        try:
            os.symlink(target, parts[-1], dir_fd=fd)
        finally:
            os.close(fd)


def materialise(img: Image, merged: Merged, view: Path, limits: dict[str, int]) -> None:
    """Pass 2: write the visible filesystem's view into ``view`` (private)."""
    w = _Writer(view, limits["materialise_bytes"])
    try:
        want: dict[tuple[int, int], list[str]] = {}
        for path, e in sorted(merged.entries.items()):
            if e.kind == "dir":
                w.mkdir(path)
            elif e.kind == "file" and e.src is not None:
                want.setdefault(e.src, []).append(path)
            elif e.kind == "symlink" and e.link and not _in_git(path):
                w.symlink(path, e.link)
        budget = [limits["image_bytes"]]
        for layer in img.present_layers:
            raw, plain, stream = img.open_layer(layer, budget)
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for ordinal, m in enumerate(tar):
                    tar.members = []
                    paths = want.get((layer.index, ordinal))
                    if not paths:
                        continue
                    # contents the checks read: git folders whole, other files up to the scan limit
                    keep = m.size <= limits["scan_file_bytes"] or any(_in_git(p) for p in paths)
                    f = tar.extractfile(m)
                    if keep and len(paths) == 1:  # streamed: a large pack never sits in memory
                        e = merged.entries[paths[0]]
                        w.file(paths[0], iter(lambda f=f: f.read(1 << 20), b""), m.size, e.mode, e.mtime, False)
                        continue
                    data = f.read() if keep else None
                    for p in paths:
                        e = merged.entries[p]
                        w.file(p, [data] if data is not None else [], m.size, e.mode, e.mtime, sparse=data is None)
            while stream.read(1 << 20):
                pass
    finally:
        w.close()
    for path, e in merged.entries.items():  # folders last, so writing their files did not change their mtime
        if e.kind == "dir":
            try:
                os.utime(view / path, ns=(int(e.mtime * 1e9),) * 2, follow_symlinks=False)
            except OSError:
                pass
