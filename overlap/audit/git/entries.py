"""Entry points of a git store, parsed from files: reflogs, the index, pseudo-refs
and operation state, and the labelling of NONBASE objects by the first entry-point group reaching them.

A mixin of ``repo.GitRepo``; it never lists refs with git (``for-each-ref`` dies on broken refs).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tree import is_dir, walk
from . import binary as gb
from . import files as gf
from .files import unhex

LABELS = ("refs", "worktree", "stash", "reflog", "index", "pseudo-ref", "replace", "unreachable")
PSEUDO_ID_FILES = ("ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE",
                   "BISECT_HEAD", "BISECT_EXPECTED_REV")
PSEUDO_TEXT_FILES = ("BISECT_LOG", "BISECT_START", "BISECT_TERMS", "BISECT_NAMES", "BISECT_ANCESTORS_OK")
STATE_DIRS = ("rebase-apply", "rebase-merge", "sequencer")


@dataclass
class Entry:
    """One object ID named by an entry point (group in LABELS minus ``unreachable``)."""

    group: str
    source: str  # file relative to the git folder (and line when it has lines)
    oid: str


class EntryPoints:
    """Mixin: needs ``gitdir``, ``common``, ``worktrees``, ``refs``, ``head``, ``read``, ``parse``, ``has``."""

    def reflog_files(self) -> list[str]:
        """Reflog files relative to the common dir (``logs/**``) and worktree logs."""
        out = []
        for root, prefix in [(self.common / "logs", "logs")] + [
                (self.common / "worktrees" / w / "logs", f"worktrees/{w}/logs") for w in self.worktrees]:
            for fe in walk(root) if is_dir(root) else ():
                out.append(f"{prefix}/{fe.rel}")
        return sorted(out)

    def reflogs(self) -> dict[str, list[gf.ReflogEntry]]:
        if not hasattr(self, "_reflogs"):
            out = {}
            for rel in self.reflog_files():
                entries = self.parse(gf.parse_reflog, rel, common=True)
                if entries is not None:
                    out[rel] = entries
            self._reflogs = out
        return self._reflogs

    def _load_index(self) -> None:
        data = self.read("index")
        if data is None:
            return
        try:
            self.index = gb.parse_index(data, "index", hashlen=self.hexlen // 2)
        except gf.ParseError as exc:
            self.index_error = str(exc)

    def pseudo_ids(self) -> list[Entry]:
        """Object IDs named by pseudo-refs and operation state (main and worktree git folders)."""
        out: list[Entry] = []
        folders = [("", self.gitdir)] + [(f"worktrees/{w}/", self.common / "worktrees" / w) for w in self.worktrees]
        for prefix, folder in folders:
            for name in PSEUDO_ID_FILES + PSEUDO_TEXT_FILES:
                data = self._read_abs(folder / name)
                if data is None:
                    continue
                for oid in gf.find_object_ids(data):
                    out.append(Entry("pseudo-ref", prefix + name, oid))
            fh = self._read_abs(folder / "FETCH_HEAD")
            if fh is not None:
                try:
                    for line in gf.parse_fetch_head(fh, prefix + "FETCH_HEAD"):
                        out.append(Entry("pseudo-ref", f"{prefix}FETCH_HEAD:{line.line}", line.oid))
                except gf.ParseError as exc:
                    self.parse_errors.append(str(exc))
            for d in STATE_DIRS:
                if is_dir(folder / d):
                    for fe in walk(folder / d):
                        data = self._read_abs(fe.path)
                        for oid in gf.find_object_ids(data or b""):
                            out.append(Entry("pseudo-ref", f"{prefix}{d}/{fe.rel}", oid))
        info = self.read("info/refs", common=True)
        if info is not None:
            for oid in gf.find_object_ids(info):
                out.append(Entry("pseudo-ref", "info/refs", oid))
        return out

    def _load_entries(self) -> None:
        entries: list[Entry] = []
        for name, ref in sorted(self.refs.items()):
            if ref.oid is None:
                continue
            entries.append(Entry(ref.group, name, ref.oid))
            if ref.group == "replace":
                pass
        if self.head and self.head.oid and not self.head.symref:
            entries.append(Entry("refs", "HEAD", self.head.oid))
        for rel, lines in self.reflogs().items():
            group = "stash" if rel == "logs/refs/stash" else "reflog"
            for e in lines:
                for oid in (e.old, e.new):
                    if oid not in gf.NULL_IDS:
                        entries.append(Entry(group, f"{rel}:{e.line}", oid))
        self._load_index()
        if self.index is not None:
            for ie in self.index.entries:
                if ie.mode != 0o160000:
                    entries.append(Entry("index", f"index:{ie.path}:{ie.stage}", ie.oid))
            for path, stages in self.index.reuc:
                for stage, oid in stages:
                    entries.append(Entry("index", f"index:REUC:{path}:{stage}", oid))
        for w in self.worktrees:
            data = self.read(f"worktrees/{w}/index", common=True)
            if data:
                try:
                    for ie in gb.parse_index(data, f"worktrees/{w}/index", hashlen=self.hexlen // 2).entries:
                        if ie.mode != 0o160000:
                            entries.append(Entry("worktree", f"worktrees/{w}/index:{ie.path}", ie.oid))
                except gf.ParseError as exc:
                    self.parse_errors.append(str(exc))
        entries.extend(self.pseudo_ids())
        self.entries = entries

    def _label(self) -> None:
        labels: dict[bytes, str] = {}
        nonbase = self.nonbase
        for group in LABELS[:-1]:
            tips = sorted({e.oid for e in self.entries if e.group == group and self.has(e.oid)})
            tips = [t for t in tips if unhex(t) in nonbase]
            if not tips:
                continue
            present, _ = self._rev_list(tips, [t for t in self.hist_tips if t])
            for oid in present:
                if oid in nonbase and oid not in labels:
                    labels[oid] = group
        for oid in nonbase:
            labels.setdefault(oid, "unreachable")
        self.labels = labels

