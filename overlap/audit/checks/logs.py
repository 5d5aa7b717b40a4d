"""L6 and L7, logs and shell or editor histories: what they name of the hidden tests and the fix.

A mixin of ``leftovers._Scan`` (it uses ``self.ctx``, ``self.ref``, ``self.hunks``, ``self.add``,
``self.patch_match`` and ``self.resolve``); ``ids_graded`` (test IDs in a text) serves the cache check too.
"""

from __future__ import annotations

import posixpath
import re

from ..content.matchers import holds, nodeids_in, stripped_lines
from ..wording import cut

HISTORY_NAMES = {".bash_history", ".zsh_history", ".python_history", ".node_repl_history", ".sqlite_history",
                 ".viminfo", ".lesshst"}
_APPLY = re.compile(r"\b(git\s+apply|git\s+am|patch\s+-p\d)\b[^\n]*")
_SHA_CMD = re.compile(r"\bgit\s+(?:checkout|show|cherry-pick|reset\s+--hard|switch\s+--detach)\s+([0-9a-f]{7,64})\b")


class Logs:
    """The L6 and L7 part of the pass, and the grading of test IDs a text names."""

    def ids_graded(self, text: str) -> tuple[str | None, list[str]]:
        """Test IDs in a text: hidden ones → high; ``path::name`` absent from B's ``path`` → medium."""
        hidden = [i for i in self.ref.test_ids if i in text]
        if hidden:
            return "high", hidden
        absent = []
        for path, name in nodeids_in(text):
            base = self.ctx.base_text(path)
            if base is not None and not re.search(rf"\b{re.escape(name)}\b", base):
                absent.append(f"{path}::{name}")
            elif base is None and path in self.ref.paths:
                absent.append(f"{path}::{name}")
        return ("medium" if absent else None), absent

    @staticmethod
    def is_log(shown: str, name: str) -> bool:
        return (name.endswith(".log") or shown.startswith(("/var/log/", "/logs/")) or "/test-results/" in shown
                or (name.endswith(".xml") and (name.startswith("TEST-") or name.startswith("junit"))))

    def log(self, shown: str, text: str) -> None:
        hits = self.patch_match(text) if self.hunks else []
        sev, ids = self.ids_graded(text)
        self.log_graded(shown, hits, sev, ids)

    def log_graded(self, shown: str, hits: list[str], sev: str | None, ids: list[str]) -> None:
        if hits:
            sev = "critical"
        if sev:
            self.add("L6", shown, sev, "content" if hits else "location", "log names the hidden tests or the fix",
                     {"hunks": hits, "test_ids": ids[: self.ctx.max_items]}, f"cat {self.ctx.q(shown)}")

    @staticmethod
    def is_history(shown: str, name: str) -> bool:
        folder = posixpath.dirname(shown)
        home = folder == "/root" or (folder.startswith("/home/") and folder.count("/") == 2)
        return (home and name in HISTORY_NAMES) or name.endswith((".swp", ".swo"))

    def history(self, shown: str, text: str) -> None:
        lines = stripped_lines(text)
        content = [h for h in self.hunks if holds(lines, h)]
        _, ids = self.ids_graded(text)
        hidden = [i for i in self.ref.test_ids if i in text]
        cmds = [m.group(0).strip() for m in _APPLY.finditer(text)]
        shas = [m.group(1) for m in _SHA_CMD.finditer(text) if (self.resolve(m.group(1)) or ("",))[0] in
                ("high", "low")]
        if content:
            sev = "critical"
        elif hidden or cmds or shas:
            sev = "high"
        else:
            return
        self.add("L7", shown, sev, "content" if content else "location", "shell or editor history names the answer",
                 {"commands": [cut(c, 120) for c in cmds][: self.ctx.max_items], "test_ids": hidden,
                  "shas": shas, "holds_hunks": len(content)}, f"cat {self.ctx.q(shown)}")
