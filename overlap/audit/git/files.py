"""Pure parsers for the files inside a git folder. No git, no I/O.

Every parser takes bytes plus a ``source`` name (for messages) and returns plain records, or raises
:class:`ParseError` naming the file and the byte offset. Nothing else escapes on malformed input: the
fuzz tests feed truncated and random bytes to each of them. Object IDs are lowercase hex strings of
40 (SHA-1) or 64 (SHA-256) characters.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

NULL_IDS = frozenset({"0" * 40, "0" * 64})
_HEXID = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


class ParseError(ValueError):
    """Malformed bytes in a git file: ``source`` at byte ``offset``."""

    def __init__(self, source: str, offset: int, message: str):
        super().__init__(f"{source}: {message} at byte {offset}")
        self.source = source
        self.offset = offset


def unhex(h: str) -> bytes:
    """A hex object ID as the 20 or 32 bytes the audit keeps in its large sets."""
    return binascii.unhexlify(h)


def _hexid(raw: bytes, source: str, offset: int) -> str:
    if not _HEXID.match(raw):
        raise ParseError(source, offset, "not an object ID")
    return raw.decode("ascii")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def _lines(data: bytes):
    """(line number, byte offset, line) of every non-blank line, ``\r`` stripped."""
    offset = 0
    for no, line in enumerate(data.split(b"\n"), 1):
        start = offset
        offset += len(line) + 1
        line = line.rstrip(b"\r")
        if line.strip():
            yield no, start, line


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
    for no, start, line in _lines(data):
        if line.startswith(b"#"):
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
    for no, start, line in _lines(data):
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
    for no, start, line in _lines(data):
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
    for _, start, line in _lines(data):
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
    for _, start, line in _lines(data):
        out.append(_hexid(line.strip(), source, start))
    return out


def parse_grafts(data: bytes, source: str = "info/grafts") -> list[tuple[str, list[str]]]:
    out = []
    for _, start, line in _lines(data):
        line = line.strip()
        if line.startswith(b"#"):
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


def fetch_configured(config: list[tuple[str, str]]) -> bool:
    """Whether a parsed config names a way to fetch: a remote URL, a promisor, a partial clone."""
    for key, value in config:
        k = key.lower()
        if (k.startswith("remote.") and k.endswith((".url", ".pushurl", ".promisor")) and value) \
                or k == "extensions.partialclone":
            return True
    return False


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
