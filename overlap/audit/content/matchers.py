"""Matchers shared by F3 and the leftovers route: distinctive lines of the
reference hunks, "holds a hunk", the patch matcher, fix-only tokens, hidden test IDs and hex IDs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .reference import Reference

MIN_LINE = 12
MIN_HUNK = 40
_PUNCT = re.compile(r"^[\W_]+$")


@dataclass(frozen=True)
class HunkLines:
    kind: str  # fix | tests
    path: str
    header: str
    lines: tuple[str, ...]  # distinctive lines, stripped, in order


def distinctive_hunks(ref: Reference, base_text: dict[str, str]) -> tuple[list[HunkLines], list[str]]:
    """Usable hunks of every reference patch, and the reasons for patches that have none.

    A hunk's distinctive lines are its added lines that, stripped, have at least 12 characters, are not
    only punctuation and do not occur in B's version of the file; a hunk is usable when they total 40.
    """
    usable, unusable = [], []
    for src in ref.fix + ref.tests:
        count = 0
        for fp in src.patches:
            base_lines = {ln.strip() for ln in base_text.get(fp.old_path or "", "").splitlines()}
            for h in fp.hunks:
                lines = tuple(s for s in (ln.strip() for ln in h.added)
                              if len(s) >= MIN_LINE and not _PUNCT.match(s) and s not in base_lines)
                if sum(len(s) for s in lines) >= MIN_HUNK:
                    usable.append(HunkLines(src.kind, fp.new_path or fp.old_path or "", h.header, lines))
                    count += 1
        if src.patches and not count:
            unusable.append(f"{src.source}: no hunk with {MIN_HUNK}+ characters of distinctive added lines")
    return usable, unusable


def holds(text_lines: list[str], hunk: HunkLines) -> bool:
    """All of the hunk's distinctive lines occur in ``text_lines`` (stripped), in order."""
    i = 0
    want = hunk.lines
    for ln in text_lines:
        if ln == want[i]:
            i += 1
            if i == len(want):
                return True
    return False


def stripped_lines(text: str, *, plus: bool = False) -> list[str]:
    """Stripped lines of a text; with ``plus``, the ``+`` of diff lines is dropped first (patch matcher)."""
    out = []
    for ln in text.splitlines():
        if plus and ln.startswith("+") and not ln.startswith("+++"):
            ln = ln[1:]
        out.append(ln.strip())
    return out


def looks_like_diff(text: str) -> bool:
    return bool(re.search(r"^(diff --git |--- \S|@@ -\d)", text, re.M)) and "\n+" in text


_TOKEN = re.compile(r"""("(?:[^"\\\n]|\\.){8,}"|'(?:[^'\\\n]|\\.){8,}'|[A-Za-z_][A-Za-z0-9_]{7,})""")


def fix_only_tokens(ref: Reference, tracked_text: str) -> list[str]:
    """String literals (without quotes) and identifiers of 8+ characters in the fix's added lines that occur
    nowhere in the tracked worktree."""
    out: dict[str, None] = {}
    for src in ref.fix:
        for fp in src.patches:
            for h in fp.hunks:
                for ln in h.added:
                    for m in _TOKEN.finditer(ln):
                        tok = m.group(1)
                        tok = tok[1:-1].strip("\"' ") if tok[0] in "\"'" else tok
                        if len(tok) >= 8 and tok not in tracked_text:
                            out.setdefault(tok, None)
    return list(out)


_HEX = re.compile(r"(?<![0-9A-Za-z])([0-9a-f]{7,64})(?![0-9A-Za-z])|(?<=[-_./:])([0-9a-f]{7,64})(?![0-9A-Za-z])")


def hex_runs(text: str) -> list[str]:
    """Hex runs of 7 to 64 digits (all-digit runs are kept; callers drop those that do not resolve)."""
    out: dict[str, None] = {}
    for m in _HEX.finditer(text):
        out.setdefault(m.group(1) or m.group(2), None)
    return list(out)


_NODEID = re.compile(r"([\w./-]+\.py)::([\w\[\]-]+(?:::[\w\[\]-]+)?)")


def nodeids_in(text: str) -> list[tuple[str, str]]:
    """``path::name`` test IDs in a text (pytest node IDs)."""
    return list(dict.fromkeys((m.group(1), m.group(2).split("::")[-1].split("[")[0]) for m in _NODEID.finditer(text)))
