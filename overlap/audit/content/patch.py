"""Reading a unified diff (git or plain) into per-file patches: paths, index abbreviations, modes, hunks, and
the test functions a test patch adds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ...errors import InputError

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    header: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    old_path: str | None
    new_path: str | None
    text: bytes
    old_abbrev: str | None = None
    new_abbrev: str | None = None
    new_mode: int | None = None
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return sorted({p for p in (self.old_path, self.new_path) if p})


def _unquote(raw: bytes) -> str:
    s = raw.decode("utf-8", "surrogateescape")
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        body = s[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        s = body.encode("latin-1", "replace").decode("utf-8", "replace")
    return s


def _safe_rel(path: str, source: str) -> str:
    parts = PurePosixPath(path).parts
    if path.startswith("/") or not parts or ".." in parts:
        raise InputError(f"{source}: path {path!r} leaves the repository; use paths relative to its root")
    return "/".join(parts)


def _strip(path: str | None, source: str) -> str | None:
    """A patch path without its ``a/``-style prefix (``-p1``); None for /dev/null."""
    if path is None or path == "/dev/null":
        return None
    path = path.split("\t", 1)[0]
    parts = PurePosixPath(path).parts
    if len(parts) >= 2 and parts[0] in ("a", "b", "i", "w", "c", "o"):
        path = "/".join(parts[1:])
    return _safe_rel(path, source)


def parse_patch(data: bytes, source: str) -> list[FilePatch]:
    """Split a unified diff (git or plain) into per-file patches. InputError when it holds no diff."""
    lines = data.split(b"\n")
    files: list[FilePatch] = []
    starts: list[int] = []
    cur: FilePatch | None = None
    header_paths: tuple[str | None, str | None] | None = None
    i, n = 0, len(lines)
    seen_minus = False
    while i < n:
        line = lines[i].rstrip(b"\r")
        if line.startswith(b"diff --git "):
            rest = line[11:]
            header_paths = None
            half = (len(rest) - 1) // 2
            if rest[half : half + 1] == b" " and rest[:half][2:] == rest[half + 1 :][2:]:
                header_paths = (_strip(_unquote(rest[:half]), source), _strip(_unquote(rest[half + 1 :]), source))
            cur = FilePatch(header_paths[0] if header_paths else None, header_paths[1] if header_paths else None, b"")
            files.append(cur)
            starts.append(i)
            seen_minus = False
            i += 1
            continue
        if line.startswith(b"--- ") and i + 1 < n and lines[i + 1].startswith(b"+++ "):
            old = _strip(_unquote(line[4:].split(b"\t")[0]), source)
            new = _strip(_unquote(lines[i + 1][4:].rstrip(b"\r").split(b"\t")[0]), source)
            if cur is None or seen_minus:
                cur = FilePatch(old, new, b"")
                files.append(cur)
                starts.append(i)
            else:
                cur.old_path, cur.new_path = old, new
            seen_minus = True
            i += 2
            continue
        if cur is None:
            i += 1
            continue
        m = _HUNK.match(line)
        if m:
            old_left = int(m.group(2) or 1) if m.group(2) != b"0" else 0
            new_left = int(m.group(4) or 1) if m.group(4) != b"0" else 0
            hunk = Hunk(line.decode("utf-8", "replace"))
            cur.hunks.append(hunk)
            i += 1
            while i < n and (old_left > 0 or new_left > 0):
                h = lines[i].rstrip(b"\r")
                tag, body = h[:1], h[1:].decode("utf-8", "replace")
                if tag == b"+":
                    hunk.added.append(body)
                    new_left -= 1
                elif tag == b"-":
                    hunk.removed.append(body)
                    old_left -= 1
                elif tag == b" " or h == b"":
                    old_left -= 1
                    new_left -= 1
                elif tag == b"\\":
                    pass
                else:
                    break
                i += 1
            continue
        if line.startswith(b"new file mode ") or line.startswith(b"new mode "):
            try:
                cur.new_mode = int(line.split()[-1], 8)
            except ValueError:
                pass
        elif line.startswith(b"deleted file mode "):
            cur.new_path = None
        elif line.startswith(b"index "):
            m2 = re.match(rb"index ([0-9a-f]+)\.\.([0-9a-f]+)", line)
            if m2:
                cur.old_abbrev, cur.new_abbrev = m2.group(1).decode(), m2.group(2).decode()
        elif line.startswith(b"rename from ") or line.startswith(b"copy from "):
            cur.old_path = _strip(_unquote(line.split(b" ", 2)[2]), source)
        elif line.startswith(b"rename to ") or line.startswith(b"copy to "):
            cur.new_path = _strip(_unquote(line.split(b" ", 2)[2]), source)
        elif line.startswith(b"GIT binary patch") or line.startswith(b"Binary files "):
            cur.binary = True
        i += 1
    if not files:
        raise InputError(f"{source}: not a unified diff (no 'diff --git' or '---/+++' header found)")
    bounds = starts[1:] + [n]
    for fp, a, b in zip(files, starts, bounds, strict=True):
        fp.text = b"\n".join(lines[a:b]) + b"\n"
        if fp.new_abbrev and set(fp.new_abbrev) == {"0"}:
            fp.new_path = None
    return files


def test_ids_from_patch(fp: FilePatch) -> list[str]:
    """Names of test functions a test patch adds (Python, Go, JS/TS, Rust, Java; best effort)."""
    path = fp.new_path
    if not path:
        return []
    out = []
    for h in fp.hunks:
        prev = ""
        for ln in h.added:
            s = ln.strip()
            m = (re.match(r"(?:async\s+)?def\s+(test\w*)\s*\(", s) or re.match(r"func\s+(Test\w+)\s*\(", s)
                 or re.match(r"(?:it|test)\s*\(\s*['\"`](.+?)['\"`]", s))
            if m is None and prev in ("@Test", "#[test]"):
                m = re.search(r"(?:fn|void)\s+(\w+)\s*\(", s)
            if m:
                out.append(f"{path}::{m.group(1)}")
            if s:
                prev = s
    return out
