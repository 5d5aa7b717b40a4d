"""L1, patch texts: a diff or patch file graded by what it holds (the reference's hunks, an answer's name).

A mixin of ``leftovers._Scan`` (it uses ``self.ctx``, ``self.hunks``, ``self.tracked`` and ``self.add``);
``PATCH_SUFFIXES`` is a class attribute too, for the other mixins that meet patch files.
"""

from __future__ import annotations

import re

from ..content.fixed import reverse_applies
from ..content.matchers import holds, stripped_lines
from ..tree import TooLarge, read_regular

PATCH_SUFFIXES = (".patch", ".diff", ".orig", ".rej")
ANSWER_NAMES = {"fix.patch", "test.patch", "gold.patch", "patch.diff", "test_patch.diff"}


class Patches:
    """The L1 part of the pass: which patch texts hold the fix, which are setup patches already applied."""

    PATCH_SUFFIXES = PATCH_SUFFIXES

    def patch_match(self, text: str) -> list[str]:
        lines = stripped_lines(text, plus=True)
        return [f"{h.kind} {h.path} {h.header}" for h in self.hunks if holds(lines, h)]

    def patch(self, shown: str, name: str, text: str) -> None:
        hits = self.patch_match(text) if self.hunks else []
        touched = sorted({m.group(1) for m in re.finditer(r"^\+\+\+ [ab]/(\S+)", text, re.M)} & set(self.tracked))
        self.patch_graded(shown, name, hits, touched, text)

    def patch_graded(self, shown: str, name: str, hits: list[str], touched: list[str], text: str | None) -> None:
        """L1 for a patch text; ``text`` None (a file streamed, never held whole): not tried as a setup patch."""
        if hits:
            sev, title = "critical", "patch text matching the reference"
        elif name in ANSWER_NAMES:
            sev, title = "high", f"a patch named like an answer ({name})"
        elif touched and text is not None and self._already_applied(touched, text):
            sev, title = "info", "a setup patch, already applied to the worktree"
        elif touched:
            sev, title = "medium", "a diff touching tracked files"
        else:
            return
        self.add("L1", shown, sev, "content", title, {"hunks": hits, "touches": touched[: self.ctx.max_items]},
                 f"cat {self.ctx.q(shown)}")

    def _already_applied(self, touched: list[str], text: str) -> bool:
        root = self.ctx.root
        if root is None:
            return False
        files = {}
        for rel in touched:
            try:
                data = read_regular(root / rel, self.ctx.limits["scan_file_bytes"])
            except TooLarge:
                return False
            if data is None:
                return False
            files[rel] = data
        scratch = self.ctx.runner.scratch or (self.ctx.private / "scratch")
        return reverse_applies(self.ctx.runner, scratch, files, text.encode("utf-8", "surrogateescape"))
