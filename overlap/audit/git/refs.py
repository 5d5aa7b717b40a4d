"""The refs of a git store, parsed from files: loose and packed refs, HEAD, symbolic refs, linked worktrees.

A mixin of ``repo.GitRepo`` (it uses ``common``, ``parse``, ``_read_abs``, ``notes``, ``parse_errors`` and
``worktrees``); refs are read from files, never listed with git (``for-each-ref`` dies on broken refs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..tree import is_dir, list_dir, walk
from . import files as gf


@dataclass
class Ref:
    name: str  # refs/heads/main, HEAD, worktrees/<n>/HEAD, worktrees/<n>/refs/bisect/x
    oid: str | None
    symref: str | None = None
    packed_only: bool = False
    peeled: str | None = None  # from packed-refs
    group: str = "refs"

    @property
    def namespace(self) -> str:
        if self.name.startswith("worktrees/"):
            return "/".join(self.name.split("/")[:2])
        parts = self.name.split("/")
        return "/".join(parts[:2]) if parts[0] == "refs" and len(parts) > 2 else self.name


class RefReader:
    """Mixin: fills ``refs``, ``head`` and ``worktrees`` of a ``GitRepo``."""

    def _walk_refs(self, root: Path, prefix: str) -> dict[str, gf.RefValue]:
        out: dict[str, gf.RefValue] = {}
        if not is_dir(root):
            return out
        for fe in walk(root):
            rel = f"{prefix}/{fe.rel}"
            if fe.rel.endswith(".lock"):
                continue
            data = self._read_abs(fe.path)
            if data is None:
                self.notes.append(f"{rel}: not a regular file, not read")
                continue
            try:
                out[rel] = gf.parse_loose_ref(data, rel)
            except gf.ParseError as exc:
                self.parse_errors.append(str(exc))
        return out

    def _resolve_symref(self, target: str, depth: int = 0) -> str | None:
        ref = self.refs.get(target)
        if ref is None:
            return None
        if ref.symref and depth < 5:
            return self._resolve_symref(ref.symref, depth + 1)
        return ref.oid

    def _load_refs(self) -> None:
        packed = self.parse(gf.parse_packed_refs, "packed-refs", common=True) or []
        refs: dict[str, Ref] = {}
        for p in packed:
            refs[p.name] = Ref(p.name, p.oid, packed_only=True, peeled=p.peeled)
        for name, val in self._walk_refs(self.common / "refs", "refs").items():
            refs[name] = Ref(name, val.oid, symref=val.symref)  # a loose ref overrides a packed one
        for name, ref in refs.items():
            if name.startswith("refs/stash"):
                ref.group = "stash"
            elif name.startswith("refs/replace/"):
                ref.group = "replace"
        self.refs = refs
        for ref in list(refs.values()):
            if ref.symref:
                ref.oid = self._resolve_symref(ref.symref)
        head = self.parse(gf.parse_loose_ref, "HEAD")
        if head is not None:
            oid = self._resolve_symref(head.symref) if head.symref else head.oid
            self.head = Ref("HEAD", oid, symref=head.symref)
        # linked worktrees: their HEAD and per-worktree refs
        for e in list_dir(self.common / "worktrees"):
            if not e.is_dir(follow_symlinks=False):
                continue
            self.worktrees.append(e.name)
            wt_head = self.parse(gf.parse_loose_ref, f"worktrees/{e.name}/HEAD", common=True)
            if wt_head is not None:
                oid = self._resolve_symref(wt_head.symref) if wt_head.symref else wt_head.oid
                n = f"worktrees/{e.name}/HEAD"
                refs[n] = Ref(n, oid, symref=wt_head.symref, group="worktree")
            for name, val in self._walk_refs(Path(e.path) / "refs", f"worktrees/{e.name}/refs").items():
                refs[name] = Ref(name, val.oid or self._resolve_symref(val.symref or ""), symref=val.symref,
                                 group="worktree")
