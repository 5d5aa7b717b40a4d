"""Pure parsers for the binary files of a git folder: the index (v2–v4, REUC, link), commit-graph files,
the multi-pack-index and pack ``.idx`` files (G7, G12).

Like ``files``, they take bytes and return records or raise :class:`ParseError` naming the file and
the byte offset; the fuzz tests check that nothing else escapes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .files import ParseError, _text, parse_shallow


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

    def stat_matches(self, size: int, mtime: float) -> bool:
        """Whether a file still looks as the index recorded it: the same size and whole-second mtime. A layer
        written with whole-second times (a tar header without a PAX time) holds the index's time truncated
        (Docker) or rounded to the nearest second (Go's archive/tar by default: umoci), so either counts."""
        if size != self.size:
            return False
        return int(mtime) in (self.mtime_s, self.mtime_s + (self.mtime_ns >= 500_000_000))


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


def _chunk_file(data: bytes, source: str, magic: bytes, table_at: int) -> tuple[int, dict[bytes, tuple[int, int]]]:
    """Header of a chunk-based file (commit-graph, multi-pack-index): the hash length and the chunk table."""
    if len(data) < table_at or data[:4] != magic:
        raise ParseError(source, 0, f"missing {magic.decode()} signature")
    if data[4] != 1:
        raise ParseError(source, 4, f"unsupported {magic.decode()} version {data[4]}")
    hashlen = {1: 20, 2: 32}.get(data[5])
    if hashlen is None:
        raise ParseError(source, 5, "unknown hash version")
    return hashlen, _chunks(data, source, table_at, data[6])


def parse_commit_graph(data: bytes, source: str = "commit-graph") -> list[GraphCommit]:
    """A commit-graph file: OIDL gives the commit IDs, CDAT the root tree and the commit time."""
    hashlen, chunks = _chunk_file(data, source, b"CGPH", 8)
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
    hashlen, chunks = _chunk_file(data, source, b"MIDX", 12)
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
