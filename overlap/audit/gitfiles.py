"""Pure parsers for the files inside a git folder (audit spec §4, §11). No git, no I/O.

Every parser takes bytes plus a ``source`` name (for messages) and returns plain records, or raises
:class:`ParseError` naming the file and the byte offset. Nothing else escapes on malformed input: the
fuzz tests feed truncated and random bytes to each of them. Object IDs are lowercase hex strings of
40 (SHA-1) or 64 (SHA-256) characters.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

NULL_IDS = frozenset({"0" * 40, "0" * 64})
_HEXID = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


class ParseError(ValueError):
    """Malformed bytes in a git file: ``source`` at byte ``offset``."""

    def __init__(self, source: str, offset: int, message: str):
        super().__init__(f"{source}: {message} at byte {offset}")
        self.source = source
        self.offset = offset


def _hexid(raw: bytes, source: str, offset: int) -> str:
    if not _HEXID.match(raw):
        raise ParseError(source, offset, "not an object ID")
    return raw.decode("ascii")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


# ---------------------------------------------------------------------------------------------- refs
@dataclass(frozen=True)
class RefValue:
    """A loose ref or pseudo-ref file: either an object ID or a symbolic ref."""

    oid: str | None
    symref: str | None


def parse_loose_ref(data: bytes, source: str) -> RefValue:
    """``<hex>\\n`` or ``ref: refs/heads/x\\n`` (HEAD, ORIG_HEAD, refs/**)."""
    line = data.split(b"\n", 1)[0].rstrip(b"\r")
    if line.startswith(b"ref:"):
        target = line[4:].strip()
        if not target or b"\0" in target:
            raise ParseError(source, 4, "empty or binary symbolic ref")
        return RefValue(None, _text(target))
    return RefValue(_hexid(line.strip(), source, 0), None)


@dataclass(frozen=True)
class PackedRef:
    name: str
    oid: str
    peeled: str | None
    line: int


def parse_packed_refs(data: bytes, source: str = "packed-refs") -> list[PackedRef]:
    """Read ``packed-refs`` linearly (its ``sorted`` trait is never trusted); ``^`` lines peel the tag above."""
    refs: list[PackedRef] = []
    offset = 0
    for no, line in enumerate(data.split(b"\n"), 1):
        start = offset
        offset += len(line) + 1
        line = line.rstrip(b"\r")
        if not line or line.startswith(b"#"):
            continue
        if line.startswith(b"^"):
            if not refs or refs[-1].peeled is not None:
                raise ParseError(source, start, "peel line without a ref above it")
            last = refs[-1]
            refs[-1] = PackedRef(last.name, last.oid, _hexid(line[1:].strip(), source, start), last.line)
            continue
        parts = line.split(b" ", 1)
        if len(parts) != 2 or not parts[1]:
            raise ParseError(source, start, "expected '<id> <refname>'")
        refs.append(PackedRef(_text(parts[1]), _hexid(parts[0], source, start), None, no))
    return refs


# -------------------------------------------------------------------------------------------- reflogs
@dataclass(frozen=True)
class ReflogEntry:
    line: int
    old: str
    new: str
    ident: str
    time: int | None
    message: str


_IDENT_TIME = re.compile(rb"^(.*>)\s+(\d+)\s+([+-]\d{4})$")


def parse_reflog(data: bytes, source: str) -> list[ReflogEntry]:
    """Lines ``<old> <new> <name> <<email>> <time> <tz>\\t<message>``."""
    out: list[ReflogEntry] = []
    offset = 0
    for no, line in enumerate(data.split(b"\n"), 1):
        start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        head, _, msg = line.partition(b"\t")
        parts = head.split(b" ", 2)
        if len(parts) < 2:
            raise ParseError(source, start, "reflog line without two object IDs")
        old = _hexid(parts[0], source, start)
        new = _hexid(parts[1], source, start + len(parts[0]) + 1)
        ident = parts[2] if len(parts) > 2 else b""
        m = _IDENT_TIME.match(ident.strip())
        out.append(ReflogEntry(no, old, new, _text(m.group(1) if m else ident),
                               int(m.group(2)) if m else None, _text(msg)))
    return out


@dataclass(frozen=True)
class FetchHeadLine:
    line: int
    oid: str
    not_for_merge: bool
    description: str


def parse_fetch_head(data: bytes, source: str = "FETCH_HEAD") -> list[FetchHeadLine]:
    """``<hex>\\t[not-for-merge]\\t<description>`` lines."""
    out = []
    offset = 0
    for no, line in enumerate(data.split(b"\n"), 1):
        start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        fields = line.split(b"\t", 2)
        oid = _hexid(fields[0].strip(), source, start)
        nfm = len(fields) > 1 and fields[1] == b"not-for-merge"
        desc = fields[2] if len(fields) > 2 else b""
        out.append(FetchHeadLine(no, oid, nfm, _text(desc)))
    return out


_HEXRUN = re.compile(rb"(?<![0-9a-f])([0-9a-f]{40}|[0-9a-f]{64})(?![0-9a-f])")


def find_object_ids(data: bytes) -> list[str]:
    """Every full-length hex object ID in free text (BISECT_LOG, sequencer todo, info/refs), in order."""
    seen: dict[str, None] = {}
    for m in _HEXRUN.finditer(data):
        seen.setdefault(m.group(1).decode("ascii"), None)
    return list(seen)


def parse_info_refs(data: bytes, source: str = "info/refs") -> list[tuple[str, str]]:
    """``<hex>\\t<refname>`` lines left by ``update-server-info``."""
    out = []
    offset = 0
    for line in data.split(b"\n"):
        start = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        oid, sep, name = line.partition(b"\t")
        if not sep:
            raise ParseError(source, start, "expected '<id>\\t<refname>'")
        out.append((_hexid(oid.strip(), source, start), _text(name)))
    return out


# ------------------------------------------------------------------------------ small line-based files
def parse_lines(data: bytes) -> list[str]:
    """Non-empty lines, comments (``#``) dropped (alternates, http-alternates)."""
    out = []
    for line in data.split(b"\n"):
        line = line.strip()
        if line and not line.startswith(b"#"):
            out.append(_text(line))
    return out


def parse_shallow(data: bytes, source: str = "shallow") -> list[str]:
    out = []
    offset = 0
    for line in data.split(b"\n"):
        start = offset
        offset += len(line) + 1
        if line.strip():
            out.append(_hexid(line.strip(), source, start))
    return out


def parse_grafts(data: bytes, source: str = "info/grafts") -> list[tuple[str, list[str]]]:
    out = []
    offset = 0
    for line in data.split(b"\n"):
        start = offset
        offset += len(line) + 1
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue
        ids = [_hexid(p, source, start) for p in line.split()]
        out.append((ids[0], ids[1:]))
    return out


def parse_config_list(data: bytes) -> list[tuple[str, str]]:
    """The output of ``git config --list -z``: ``key\\nvalue\\0`` records (a bare key has no newline)."""
    out = []
    for rec in data.split(b"\0"):
        if not rec:
            continue
        key, _, value = rec.partition(b"\n")
        out.append((_text(key), _text(value)))
    return out


# -------------------------------------------------------------------------------------------- objects
@dataclass
class Commit:
    tree: str
    parents: list[str]
    author: str
    author_time: int | None
    committer: str
    committer_time: int | None
    message: str

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0] if self.message.strip() else ""


def _ident(raw: bytes) -> tuple[str, int | None]:
    m = _IDENT_TIME.match(raw.strip())
    if not m:
        return _text(raw), None
    return _text(m.group(1)), int(m.group(2))


def parse_commit(data: bytes, source: str = "commit") -> Commit:
    header, _, message = data.partition(b"\n\n")
    tree = None
    parents: list[str] = []
    author = committer = ("", None)
    offset = 0
    for line in header.split(b"\n"):
        start = offset
        offset += len(line) + 1
        if line.startswith(b" "):
            continue  # continuation of a multi-line header (gpgsig, mergetag)
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = _hexid(value, source, start)
        elif key == b"parent":
            parents.append(_hexid(value, source, start))
        elif key == b"author":
            author = _ident(value)
        elif key == b"committer":
            committer = _ident(value)
    if tree is None:
        raise ParseError(source, 0, "commit without a tree line")
    return Commit(tree, parents, author[0], author[1], committer[0], committer[1], _text(message))


@dataclass
class Tag:
    object: str
    type: str
    name: str
    tagger_time: int | None
    message: str


def parse_tag(data: bytes, source: str = "tag") -> Tag:
    header, _, message = data.partition(b"\n\n")
    obj = typ = None
    name = ""
    tagger_time = None
    offset = 0
    for line in header.split(b"\n"):
        start = offset
        offset += len(line) + 1
        key, _, value = line.partition(b" ")
        if key == b"object":
            obj = _hexid(value, source, start)
        elif key == b"type":
            typ = _text(value)
        elif key == b"tag":
            name = _text(value)
        elif key == b"tagger":
            tagger_time = _ident(value)[1]
    if obj is None or typ is None:
        raise ParseError(source, 0, "tag without object or type")
    return Tag(obj, typ, name, tagger_time, _text(message))


def parse_tree(data: bytes, hashlen: int = 20, source: str = "tree") -> list[tuple[int, str, str]]:
    """Entries ``(mode, name, hex id)`` of a raw tree object."""
    out = []
    pos = 0
    n = len(data)
    while pos < n:
        sp = data.find(b" ", pos)
        nul = data.find(b"\0", sp + 1) if sp >= 0 else -1
        if sp < 0 or nul < 0 or nul + 1 + hashlen > n:
            raise ParseError(source, pos, "truncated tree entry")
        try:
            mode = int(data[pos:sp], 8)
        except ValueError:
            raise ParseError(source, pos, "bad tree entry mode") from None
        name = data[sp + 1 : nul]
        if not name:
            raise ParseError(source, sp, "empty name in tree")
        out.append((mode, _text(name), data[nul + 1 : nul + 1 + hashlen].hex()))
        pos = nul + 1 + hashlen
    return out


# ---------------------------------------------------------------------------------------------- index
@dataclass(frozen=True)
class IndexEntry:
    path: str
    stage: int
    mode: int
    oid: str
    size: int
    mtime_s: int
    mtime_ns: int
    ctime_s: int
    ctime_ns: int
    assume_valid: bool = False
    skip_worktree: bool = False
    intent_to_add: bool = False

    @property
    def mtime(self) -> float:
        return self.mtime_s + self.mtime_ns / 1e9


@dataclass
class Index:
    version: int
    entries: list[IndexEntry]
    reuc: list[tuple[str, list[tuple[int, str]]]] = field(default_factory=list)  # path, [(stage mode, id)]
    shared_index: str | None = None  # the ``link`` extension (split index)
    extensions: list[str] = field(default_factory=list)


def _varint(data: bytes, pos: int, source: str) -> tuple[int, int]:
    if pos >= len(data):
        raise ParseError(source, pos, "truncated varint")
    c = data[pos]
    pos += 1
    val = c & 127
    while c & 128:
        if pos >= len(data) or val > (1 << 56):
            raise ParseError(source, pos, "bad varint")
        c = data[pos]
        pos += 1
        val = ((val + 1) << 7) + (c & 127)
    return val, pos


def parse_index(data: bytes, source: str = "index", hashlen: int = 20) -> Index:
    """The index, versions 2 to 4: entries with stat data, plus the REUC and link extensions."""
    if len(data) < 12 + hashlen:
        raise ParseError(source, 0, "index shorter than its header")
    if data[:4] != b"DIRC":
        raise ParseError(source, 0, "missing DIRC signature")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ParseError(source, 4, f"unsupported index version {version}")
    end = len(data) - hashlen
    pos = 12
    entries: list[IndexEntry] = []
    prev = b""
    fixed = 40 + hashlen + 2
    for _ in range(count):
        if pos + fixed > end:
            raise ParseError(source, pos, "truncated index entry")
        ctime_s, ctime_ns, mtime_s, mtime_ns, _dev, _ino, mode, _uid, _gid, size = struct.unpack(
            ">10I", data[pos : pos + 40])
        oid = data[pos + 40 : pos + 40 + hashlen].hex()
        (flags,) = struct.unpack(">H", data[pos + 40 + hashlen : pos + fixed])
        q = pos + fixed
        ext = 0
        if flags & 0x4000:
            if version < 3 or q + 2 > end:
                raise ParseError(source, q, "extended flags in a v2 index or truncated")
            (ext,) = struct.unpack(">H", data[q : q + 2])
            q += 2
        if version == 4:
            strip, q = _varint(data, q, source)
            nul = data.find(b"\0", q, end)
            if nul < 0 or strip > len(prev):
                raise ParseError(source, q, "bad prefix-compressed path")
            name = prev[: len(prev) - strip] + data[q:nul]
            pos = nul + 1
        else:
            nul = data.find(b"\0", q, end)
            if nul < 0:
                raise ParseError(source, q, "unterminated path")
            name = data[q:nul]
            pos = pos + ((q - pos + len(name) + 8) & ~7)
            if pos > end:
                raise ParseError(source, q, "entry padding runs past the end")
        if not name:
            raise ParseError(source, q, "empty path in index")
        prev = name
        entries.append(IndexEntry(
            _text(name), (flags >> 12) & 3, mode, oid, size, mtime_s, mtime_ns, ctime_s, ctime_ns,
            bool(flags & 0x8000), bool(ext & 0x4000), bool(ext & 0x2000)))
    index = Index(version, entries)
    while pos + 8 <= end:
        sig = data[pos : pos + 4]
        (size,) = struct.unpack(">I", data[pos + 4 : pos + 8])
        body_start = pos + 8
        if body_start + size > end:
            raise ParseError(source, pos, "extension runs past the end")
        body = data[body_start : body_start + size]
        index.extensions.append(_text(sig))
        if sig == b"REUC":
            index.reuc.extend(_parse_reuc(body, source, body_start, hashlen))
        elif sig == b"link":
            if len(body) < hashlen:
                raise ParseError(source, body_start, "short link extension")
            index.shared_index = body[:hashlen].hex()
        pos = body_start + size
    if pos != end:
        raise ParseError(source, pos, "trailing bytes after the extensions")
    return index


def _parse_reuc(body: bytes, source: str, base: int, hashlen: int) -> list[tuple[str, list[tuple[int, str]]]]:
    out = []
    pos = 0
    while pos < len(body):
        nul = body.find(b"\0", pos)
        if nul < 0:
            raise ParseError(source, base + pos, "unterminated REUC path")
        path = _text(body[pos:nul])
        pos = nul + 1
        modes = []
        for _ in range(3):
            nul = body.find(b"\0", pos)
            if nul < 0:
                raise ParseError(source, base + pos, "unterminated REUC mode")
            try:
                modes.append(int(body[pos:nul] or b"0", 8))
            except ValueError:
                raise ParseError(source, base + pos, "bad REUC mode") from None
            pos = nul + 1
        stages = []
        for stage, mode in enumerate(modes, 1):
            if mode:
                if pos + hashlen > len(body):
                    raise ParseError(source, base + pos, "truncated REUC object ID")
                stages.append((stage, body[pos : pos + hashlen].hex()))
                pos += hashlen
        out.append((path, stages))
    return out


# ------------------------------------------------------------------------------ chunk files, pack idx
def _chunks(data: bytes, source: str, table_at: int, count: int) -> dict[bytes, tuple[int, int]]:
    table_end = table_at + 12 * (count + 1)
    if table_end > len(data):
        raise ParseError(source, table_at, "truncated chunk table")
    raw = []
    for i in range(count + 1):
        cid, off = struct.unpack(">4sQ", data[table_at + 12 * i : table_at + 12 * i + 12])
        raw.append((cid, off))
    out = {}
    for (cid, off), (_, nxt) in zip(raw, raw[1:], strict=False):
        if off < table_end or nxt < off or nxt > len(data):
            raise ParseError(source, table_at, f"chunk {cid!r} out of bounds")
        out[cid] = (off, nxt)
    return out


def _oid_list(data: bytes, source: str, chunks: dict, hashlen: int) -> list[str]:
    if b"OIDF" not in chunks or b"OIDL" not in chunks:
        raise ParseError(source, 0, "missing OIDF or OIDL chunk")
    f0, f1 = chunks[b"OIDF"]
    if f1 - f0 != 1024:
        raise ParseError(source, f0, "fanout chunk of the wrong size")
    n = struct.unpack(">I", data[f0 + 1020 : f0 + 1024])[0]
    o0, o1 = chunks[b"OIDL"]
    if o1 - o0 != n * hashlen:
        raise ParseError(source, o0, "OIDL size does not match the fanout count")
    return [data[o0 + i * hashlen : o0 + (i + 1) * hashlen].hex() for i in range(n)]


@dataclass
class GraphCommit:
    oid: str
    tree: str
    time: int


def parse_commit_graph(data: bytes, source: str = "commit-graph") -> list[GraphCommit]:
    """A commit-graph file: OIDL gives the commit IDs, CDAT the root tree and the commit time."""
    if len(data) < 8 or data[:4] != b"CGPH":
        raise ParseError(source, 0, "missing CGPH signature")
    if data[4] != 1:
        raise ParseError(source, 4, f"unsupported commit-graph version {data[4]}")
    hashlen = {1: 20, 2: 32}.get(data[5])
    if hashlen is None:
        raise ParseError(source, 5, "unknown hash version")
    chunks = _chunks(data, source, 8, data[6])
    oids = _oid_list(data, source, chunks, hashlen)
    if b"CDAT" not in chunks:
        raise ParseError(source, 0, "missing CDAT chunk")
    c0, c1 = chunks[b"CDAT"]
    width = hashlen + 16
    if c1 - c0 != len(oids) * width:
        raise ParseError(source, c0, "CDAT size does not match the commit count")
    out = []
    for i, oid in enumerate(oids):
        p = c0 + i * width
        tree = data[p : p + hashlen].hex()
        hi, lo = struct.unpack(">II", data[p + hashlen + 8 : p + width])
        out.append(GraphCommit(oid, tree, ((hi & 3) << 32) | lo))
    return out


def parse_graph_chain(data: bytes, source: str = "commit-graph-chain") -> list[str]:
    return parse_shallow(data, source)


def parse_midx(data: bytes, source: str = "multi-pack-index") -> list[str]:
    """The object IDs (OIDL chunk) of a multi-pack-index."""
    if len(data) < 12 or data[:4] != b"MIDX":
        raise ParseError(source, 0, "missing MIDX signature")
    if data[4] != 1:
        raise ParseError(source, 4, f"unsupported MIDX version {data[4]}")
    hashlen = {1: 20, 2: 32}.get(data[5])
    if hashlen is None:
        raise ParseError(source, 5, "unknown hash version")
    chunks = _chunks(data, source, 12, data[6])
    return _oid_list(data, source, chunks, hashlen)


def parse_pack_idx(data: bytes, source: str = "pack.idx", hashlen: int = 20) -> list[str]:
    """The object IDs of a pack index, version 1 or 2."""
    if data[:4] == b"\377tOc":
        if len(data) < 8 + 1024:
            raise ParseError(source, 0, "truncated idx header")
        (version,) = struct.unpack(">I", data[4:8])
        if version != 2:
            raise ParseError(source, 4, f"unsupported idx version {version}")
        n = struct.unpack(">I", data[8 + 1020 : 8 + 1024])[0]
        start = 8 + 1024
        need = start + n * (hashlen + 8) + 2 * hashlen
        if len(data) < need:
            raise ParseError(source, start, "idx shorter than its object count")
        return [data[start + i * hashlen : start + (i + 1) * hashlen].hex() for i in range(n)]
    if len(data) < 1024:
        raise ParseError(source, 0, "truncated idx v1 fanout")
    n = struct.unpack(">I", data[1020:1024])[0]
    width = 4 + hashlen
    if len(data) < 1024 + n * width + 2 * hashlen:
        raise ParseError(source, 1024, "idx v1 shorter than its object count")
    return [data[1024 + i * width + 4 : 1024 + (i + 1) * width].hex() for i in range(n)]
