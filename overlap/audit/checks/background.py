"""How common the fix's lines and strings are in the files around the repository (a root filesystem or an
image), so that a match outside the repository is evidence only when it is distinctive for the task.

A task image always sits on a language runtime, and a fix often adds words that runtime is full of
(``DeprecationWarning``, ``import warnings``): finding one of them in ``ensurepip``'s bundled wheels or in
``lib-dynload/*.so`` says nothing about the task. So, outside the repository:

- a file (or archive member) counts in the background when it is not itself a copy of the fix (no exact
  fixed blob, not every hunk of a reference file in order);
- a fix-only string or a distinctive line is *common* when ``COMMON_FILES`` or more background files hold
  it, and *rare* otherwise; only rare ones are evidence;
- a near copy needs every hunk of one reference file, in order, in one file (``holds_file``); part of them,
  with a rare line among them, is reported at medium.

Inside the repository nothing changes: there the task's own files are the background (fix-only strings are
already those absent from the tracked files, distinctive lines those absent from B's version).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...words import plural
from ..content.matchers import HunkLines, holds, stripped_lines
from ..model import worst
from ..wording import capped, cut

COMMON_FILES = 3  # background files holding a string or line before it stops being evidence


def holds_in_order(text_lines: list[str], hunks: list[HunkLines]) -> bool:
    """Every distinctive line of ``hunks``, hunk after hunk, occurs in ``text_lines`` in that order."""
    want = [ln for h in hunks for ln in h.lines]
    i = 0
    for ln in text_lines:
        if i < len(want) and ln == want[i]:
            i += 1
    return i == len(want)


def whole_files(text_lines: list[str], hunks: list[HunkLines]) -> list[str]:
    """The reference paths (per kind) whose every usable hunk ``text_lines`` holds in order."""
    out = []
    for key in dict.fromkeys((h.kind, h.path) for h in hunks):
        if holds_in_order(text_lines, [h for h in hunks if (h.kind, h.path) == key]):
            out.append(f"{key[0]}:{key[1]}")
    return out


@dataclass
class Background:
    tokens: list[str]
    hunks: list[HunkLines]
    token_files: Counter = field(default_factory=Counter)
    line_files: Counter = field(default_factory=Counter)
    files: int = 0

    def __post_init__(self) -> None:
        self._lines = {ln for h in self.hunks for ln in h.lines}
        self._btokens = [(t, t.encode("utf-8", "replace")) for t in self.tokens]

    def see(self, data: bytes, lines: list[str] | None) -> None:
        """Count one background file: which fix-only strings its bytes hold, which distinctive lines it has."""
        self.files += 1
        for tok, raw in self._btokens:
            if raw in data:
                self.token_files[tok] += 1
        if lines is not None and self._lines:
            for ln in self._lines.intersection(lines):
                self.line_files[ln] += 1

    def rare_tokens(self, tokens: list[str]) -> list[str]:
        return [t for t in tokens if self.token_files[t] < COMMON_FILES]

    def rare_lines(self, hunks: list[HunkLines]) -> list[str]:
        return sorted({ln for h in hunks for ln in h.lines if self.line_files[ln] < COMMON_FILES})

    def evidence(self) -> dict:
        """What the report says about the background (the counts behind "common")."""
        common = sorted(t for t in self.tokens if self.token_files[t] >= COMMON_FILES)
        return {"background_files": self.files, "common_files": COMMON_FILES,
                "common_tokens": {t: self.token_files[t] for t in common}}


class Outside:
    """A mixin of ``leftovers._Scan``: matches outside the repository wait for the whole pass (the background
    must be counted first) and are graded by ``settle``."""

    def outside(self, wt: str | None) -> bool:
        """A scanned file outside the repository (root filesystem or image mode only)."""
        return self.ctx.fsroot is not None and wt is None

    def outside_text(self, shown: str, data: bytes, text: str, exact: str | None) -> None:
        """A text outside the repository: counted in the background unless it is a copy of the fix; its held
        hunks wait for ``settle``."""
        lines = stripped_lines(text) if self.hunks else None
        found = [h for h in self.hunks if holds(lines, h)] if lines is not None and not exact else []
        whole = whole_files(lines, found) if found else []
        if not exact and not whole:
            self.bg.see(data, lines)
        if found:
            self.pending.append(("near", shown, (found, whole)))

    def outside_member(self, data: bytes, text: str) -> tuple[list[HunkLines], list[str]]:
        """An archive member of a file outside the repository: its held hunks and whole files; counted in the
        background unless it is a copy of the fix."""
        lines = stripped_lines(text) if text and self.hunks else None
        found = [h for h in self.hunks if holds(lines, h)] if lines is not None else []
        whole = whole_files(lines, found) if found else []
        if not whole:
            self.bg.see(data, lines)
        return found, whole

    def near_grade(self, found: list[HunkLines], whole: list[str], kind: str) -> tuple[str | None, list[str]]:
        """(severity, rare lines) of the hunks of ``kind`` a text outside the repository holds: every hunk of
        one reference file in order with a rare line → high (critical when that is every hunk of the kind),
        part of them with a rare line → medium, only common lines → None."""
        mine = [h for h in self.hunks if h.kind == kind]
        held = [h for h in found if h.kind == kind]
        rare = self.bg.rare_lines(held) if held else []
        if not rare:
            return None, []
        if any(w.startswith(kind + ":") for w in whole):
            return ("critical" if len(held) == len(mine) else "high"), rare
        return "medium", rare

    def settle(self) -> None:
        """Grade the matches outside the repository against the counted background."""
        for what, shown, payload in self.pending:
            if what == "near":
                self._settle_near(shown, *payload)
            elif what == "binary":
                rare = self.bg.rare_tokens(payload)
                if rare:
                    self.add("L5", shown, "high", "content", "a compiled file holds strings only the fix adds",
                             {"tokens": [cut(t, 120) for t in rare], "outside_repository": True,
                              "common_tokens_ignored": [cut(t, 120) for t in payload if t not in rare],
                              **self.bg.evidence()},
                             f"strings {self.ctx.q(shown)} | grep -F -e " + self.ctx.q(rare[0][:40]))
            else:
                self._settle_archive(shown, *payload)

    def _settle_near(self, shown: str, found: list[HunkLines], whole: list[str]) -> None:
        for kind in ("fix", "tests"):
            sev, rare = self.near_grade(found, whole, kind)
            if sev is None:
                continue
            mine = [h for h in self.hunks if h.kind == kind]
            held = [h for h in found if h.kind == kind]
            title = (f"{shown} holds {len(held)} of {plural(len(mine), f'{kind} hunk')}"
                     + ("" if sev != "medium" else " (not a whole file of it, in order)"))
            self.add("F3", shown, sev, "content", title,
                     {"kind": kind, "hunks": [f"{h.path} {h.header}" for h in held],
                      "lines": [cut(x, 120) for h in held for x in h.lines][: self.ctx.max_items],
                      "outside_repository": True, "whole_files": whole, "rare_lines": [cut(x, 120) for x in rare],
                      **self.bg.evidence()},
                     f"cat {self.ctx.q(shown)}")

    def _settle_archive(self, shown: str, hits: list[dict], skipped: int, listing: str) -> None:
        kept, sevs = [], []
        for hit in hits:
            if "equals_fixed" in hit:
                sev = "critical"
            elif "found" in hit:
                grades = [self.near_grade(hit["found"], hit["whole"], k) for k in ("fix", "tests")]
                sev = worst(g for g, _ in grades if g)
                hit = {"member": hit["member"], "hunks": len(hit["found"]), "whole_files": hit["whole"],
                       "rare_lines": sorted({cut(x, 120) for _, r in grades for x in r})} if sev else None
            else:
                rare = self.bg.rare_tokens(hit["tokens"])
                sev = "high" if rare else None
                hit = {"member": hit["member"], "tokens": [cut(t, 120) for t in rare]} if rare else None
            if sev:
                sevs.append(sev)
                kept.append({**hit, "severity": sev})
        if kept:
            self.add("L5", shown, worst(sevs), "content", f"archive members hold the fix ({len(kept)})",
                     {**capped(kept, self.ctx.max_items), "members_skipped": skipped, "outside_repository": True,
                      **self.bg.evidence()}, listing)
