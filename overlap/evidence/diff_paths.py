"""File paths in diffs: git's `diff --git` header and C-style quoting, `a/` `b/` prefixes, plain-diff
paths and `Binary files ... differ` lines."""

from __future__ import annotations

import re

from .patch_model import FilePatch


def git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """Paths from `diff --git <a> <b>`; handles quoting and spaces (`a/x y b/x y`)."""
    rest = rest.strip()
    if len(rest) > 10_000:  # not a real pair of paths; the ---/+++ or rename lines decide
        return None, None
    if rest.startswith('"'):
        m = re.match(r'("(?:[^"\\]|\\.)*")\s+(.+)$', rest)
        if m:
            return strip_prefix(unquote_path(m.group(1)), "a/"), strip_prefix(unquote_path(m.group(2)), "b/")
        return None, None
    if rest.endswith('"'):
        m = re.match(r'(.+?)\s+("(?:[^"\\]|\\.)*")$', rest)
        if m:
            return strip_prefix(m.group(1), "a/"), strip_prefix(unquote_path(m.group(2)), "b/")
        return None, None
    # Unquoted: the usual case is `a/P b/P` with the same P, whatever spaces P holds.
    if rest.startswith("a/") and len(rest) % 2 == 1:
        half = (len(rest) - 1) // 2
        left, right = rest[:half], rest[half + 1 :]
        if right.startswith("b/") and left[2:] == right[2:]:
            return left[2:], right[2:]
    cuts = [m.start() for m in re.finditer(r" b/", rest)]
    if rest.startswith("a/") and len(cuts) == 1:
        return rest[2 : cuts[0]], rest[cuts[0] + 3 :]
    parts = rest.split(" ")
    if len(parts) == 2:  # --no-prefix
        return parts[0], parts[1]
    return None, None  # ambiguous; the ---/+++ or rename lines decide


_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def unquote_path(path: str) -> str:
    """Undo git's C-style quoting of a path (`"a/caf\\303\\251.c"` -> `a/café.c`)."""
    path = path.rstrip("\t").strip()
    if not (len(path) >= 2 and path.startswith('"') and path.endswith('"')):
        return path
    body, out, i = path[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out.extend(_ESCAPES.get(nxt, nxt).encode())
            i += 2
            continue
        out.extend(c.encode())
        i += 1
    return out.decode("utf-8", errors="replace")


def strip_prefix(path: str | None, prefix: str) -> str | None:
    if path is None:
        return None
    if path.startswith(prefix):
        path = path[len(prefix) :]
    while path.startswith("./"):
        path = path[2:]
    return path


def plain_paths(src: str | None, tgt: str | None) -> tuple[str | None, str | None]:
    """Strip `a/` `b/` (or differing first components, as `patch -p1` would) from plain-diff paths."""
    if src is not None and tgt is not None:
        if src.startswith("a/") and tgt.startswith("b/"):
            return strip_prefix(src, "a/"), strip_prefix(tgt, "b/")
        s, t = src.split("/", 1), tgt.split("/", 1)
        if len(s) == 2 and len(t) == 2 and s[0] != t[0] and s[1] == t[1]:
            return s[1], t[1]
        return strip_prefix(src, ""), strip_prefix(tgt, "")
    if src is not None:
        return strip_prefix(src, "a/"), None
    if tgt is not None:
        return None, strip_prefix(tgt, "b/")
    return None, None


# -- non-git unified diffs ----------------------------------------------------------------------------
def binary_line_entry(line: str) -> FilePatch | None:
    """A `Binary files A and B differ` / `Binary file A has changed` line of a plain diff, parsed
    without regex backtracking (unidiff's pattern is quadratic on long lines)."""
    body = line.rstrip("\n")
    if body.startswith("Binary files ") and body.endswith(" differ"):
        mid = body[len("Binary files ") : -len(" differ")]
        cuts = [i for i in range(len(mid)) if mid.startswith(" and ", i)]
        if not cuts:
            return None
        pairs = [(mid[:i].split("\t")[0], mid[i + 5 :].split("\t")[0]) for i in cuts]
        src, tgt = next((p for p in pairs if p[0][2:] == p[1][2:]), pairs[0])
    elif body.startswith("Binary file ") and body.endswith(" has changed"):
        src = tgt = body[len("Binary file ") : -len(" has changed")].split("\t")[0]
    else:
        return None
    src, tgt = plain_paths(None if src == "/dev/null" else src, None if tgt == "/dev/null" else tgt)
    if src is None and tgt is None:
        return None
    change = "added" if src is None else "deleted" if tgt is None else "modified" if src == tgt else "renamed"
    path = tgt if tgt is not None else src
    return FilePatch(path=path, change=change, old_path=src, new_path=tgt, binary=True)  # type: ignore[arg-type]
