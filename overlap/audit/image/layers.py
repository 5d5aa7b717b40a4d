"""Merging image layers into one map, as the runtime applies them (pass 1), and reading a few members back.

Pass 1 streams every layer once, verifies its digests and builds the merged map (metadata only; small
files with answer-like names are kept for L11), applying OCI whiteouts and opaque folders (to lower layers
only, wherever the marker sits). ``read_members`` streams a few members again (pass 3, for L11); pass 2, the
private view of the merged files, is ``materialise``.

Layer tars are read as strictly as the runtime reads them (Go's archive/tar, under containerd and Docker): a
header block cut short, a header whose checksum fails, or a lone zero block followed by more data make the
layer unreadable, where Python's tarfile would stop quietly and drop the members after it. A member whose
parent is a file or a symlink loop is refused, as the runtime's unpacker refuses it; a folder that a later
member replaces with a symlink or a file loses what was below it, as when the runtime removes it.
"""

from __future__ import annotations

import posixpath
import tarfile
from dataclasses import dataclass, field

from ...errors import InputError
from ..model import escape
from .model import Image, LimitHit
from .sources import _norm
from .strict_tar import Damaged, open_tar

AUFS_META = (".wh..wh.plnk", ".wh..wh.aufs", ".wh..wh.orph")
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
    uid: int = 0  # owner from the tar header: who may read the file in the container
    gid: int = 0


@dataclass
class Merged:
    entries: dict[str, MEntry] = field(default_factory=dict)
    shadowed: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    spooled: dict[tuple[int, int], bytes] = field(default_factory=dict)
    sparse: dict[str, str] = field(default_factory=dict)  # path -> why its bytes were not copied (pass 2)
    parents: set[str] = field(default_factory=set)  # every folder some entry was placed in, explicit or not


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


def _resolve_parent(entries: dict[str, MEntry], name: str, notes: list) -> tuple[str, str | None]:
    """(where the runtime puts ``name``, None) when a parent is a symlink in the merged map (resolved in the
    map, never on the host, as containerd's RootPath resolves it inside the root), or ("", the problem) when a
    parent is a file or a symlink loop."""
    parts = name.split("/")
    todo = parts[:-1]
    todo.reverse()  # a stack: the next component last
    cur: list[str] = []
    hops = 0
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            if cur:
                cur.pop()
            continue
        cand = "/".join(cur + [part])
        e = entries.get(cand)
        if e is None or e.kind == "dir":
            cur.append(part)
            continue
        if e.kind != "symlink" or not e.link:
            return "", f"its parent /{cand} is {'a file' if e.kind == 'file' else f'a {e.kind}'}, not a folder"
        hops += 1
        if hops > 255:  # containerd's bound on the links it follows in one path
            return "", f"its parent /{cand} is a symlink loop"
        if e.link.startswith("/"):
            cur = []
        todo.extend(reversed(e.link.split("/")))
    out = "/".join(cur + [parts[-1]])
    if out != name:
        notes.append({"path": name, "reason": f"parent is a symlink in the image; placed at /{out}"})
    return out, None


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
            with open_tar(stream) as tar:
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
                    e = MEntry(i, _kind(m), m.mode, m.size, float(m.mtime), m.linkname or None, (i, ordinal),
                               m.uid, m.gid)
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
            # the surest name of the fault: a compressed stream that breaks (read to its end, it raises the
            # one-line error of ``open_layer``), then a tar that is not the one the config declares
            while stream.read(1 << 20):
                pass
            if layer.diff_id and "sha256:" + plain.sha.hexdigest() != layer.diff_id:
                raise InputError(f"layer {i} ({layer.name}): its uncompressed tar does not match rootfs.diff_ids[{i}] "
                                 "of the image config (a corrupt layer or config); save or pull the image again") \
                    from None
            if isinstance(exc, Damaged) or str(exc) == "unexpected end of data":
                what = exc if isinstance(exc, Damaged) else "the tar ends inside a member's data (a truncated layer)"
                raise InputError(f"layer {i} ({layer.name}): {what}; the runtime refuses it too: rebuild, save "
                                 "or pull the image again") from None
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
        # a marker under a symlinked folder acts where the link leads, as the runtime resolves its path in the
        # root; under a file or a loop it removes nothing
        for path in whiteouts:
            path, problem = _resolve_parent(merged.entries, path, [])
            if problem is None:
                _remove(merged, path, below=i, how="whiteout", children_only=False)
        for folder in opaque:  # the folder itself may be the link: resolved as the parent of a child of it
            child, problem = _resolve_parent(merged.entries, f"{folder}/-", []) if folder else ("-", None)
            if problem is None:
                _remove(merged, posixpath.dirname(child), below=i, how="opaque folder", children_only=True)
        for name, e in members:
            problem = _add(merged, name, e)
            if problem:
                raise InputError(f"layer {i} ({layer.name}): /{escape(name)}: {escape(problem)}, so the runtime "
                                 "cannot unpack this layer; fix the image build")
    return merged


def _linked(merged: Merged, e: MEntry) -> MEntry:
    """A hard link to a file of the lower layers as the file it shows (unchanged when its target is no file)."""
    target = merged.entries.get(e.link) if e.link else None
    if target is None or target.kind != "file":
        return e
    return MEntry(e.layer, "file", target.mode, target.size, e.mtime, None, target.src, target.uid, target.gid)


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


def _add(merged: Merged, name: str, e: MEntry) -> str | None:
    """Place one member in the merged map; the problem (its parent is no folder) when it cannot be placed."""
    entries = merged.entries
    name, problem = _resolve_parent(entries, name, merged.skipped)
    if problem:
        return problem
    old = entries.get(name)
    if old is not None:
        if old.kind == "dir" and e.kind == "dir":
            entries[name] = e
            return None
        if old.kind == "file":
            _hidden(merged, name, old, e.layer)
    if e.kind != "dir" and name in merged.parents:
        # a folder (named in the layer or only implied by its members) replaced by a file or symlink: the
        # runtime removes it whole before it writes the new entry
        for k in [k for k in entries if k.startswith(name + "/")]:
            gone = entries.pop(k)
            if gone.kind == "file":
                _hidden(merged, k, gone, e.layer)
        merged.parents.discard(name)
    if e.kind == "hardlink":
        target = entries.get(e.link) if e.link else None
        if target is None or target.kind != "file":
            merged.skipped.append({"path": name, "layer": e.layer, "reason": "hardlink target outside the root or "
                                                                            "not a file"})
            return None
        e = MEntry(e.layer, "file", target.mode, target.size, e.mtime, None, target.src, target.uid, target.gid)
    if e.kind in ("device", "fifo", "other"):
        merged.skipped.append({"path": name, "layer": e.layer, "reason": f"{e.kind} recorded, never created"})
    entries[name] = e
    parent = posixpath.dirname(name)
    while parent and parent not in merged.parents:
        merged.parents.add(parent)
        parent = posixpath.dirname(parent)
    return None


def _hidden(merged: Merged, path: str, old: MEntry, by: int) -> None:
    """Record a file that a later member replaced. One from the same layer counts too: the runtime keeps the
    later member, but the earlier one's bytes stay in the layer tar for anyone with the image to read."""
    how = "overwritten" if old.layer < by else "overwritten by a later member of the same layer"
    merged.shadowed.append({"path": "/" + path, "layer": old.layer, "hidden_by": by, "how": how, "src": old.src,
                            "size": old.size, "interesting": interesting(path)})


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
        with open_tar(stream) as tar:
            for ordinal, m in enumerate(tar):
                tar.members = []
                if ordinal in todo and m.isreg() and m.size <= limits["spool_bytes"]:
                    out[(layer.index, ordinal)] = tar.extractfile(m).read()
                    todo.discard(ordinal)
                if not todo:
                    break
    return out

