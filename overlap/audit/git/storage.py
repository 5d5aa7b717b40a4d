"""Where a git store keeps its objects: its own and its alternates' folders, loose or in which pack.

A mixin of ``repo.GitRepo`` (it uses ``common``, ``alt_names``, ``hexlen``, ``nonbase`` and ``parse_errors``):
the G checks name where each NONBASE object is stored (loose, a pack of some kind, an alternate).
"""

from __future__ import annotations

import binascii
import os
from pathlib import Path

from ..tree import TooLarge, is_dir, list_dir, read_regular
from . import binary as gb
from . import files as gf
from .files import unhex


class ObjectStorage:
    """Mixin: fills ``storage``, ``dir_counts`` and ``alternates`` of a ``GitRepo``."""

    def object_dirs(self) -> list[tuple[str, Path]]:
        """(storage prefix, objects folder): the repo's own, then alternates (chained, depth <= 5)."""
        out = [("", self.common / "objects")]
        # compared resolved: a relative line that leads back to a store already listed ("../../.git/objects")
        # spells a new path at every hop and would otherwise be listed again down to the depth limit
        seen = {os.path.realpath(self.common / "objects")}
        queue = [(self.common / "objects", 0)]
        self.alternates = []
        while queue:
            objdir, depth = queue.pop(0)
            try:
                data = read_regular(objdir / "info" / "alternates", 1 << 20)
            except TooLarge:
                data = None
            for line in gf.parse_lines(data or b""):
                p = Path(line) if line.startswith("/") else objdir / line
                ok = is_dir(p)
                shown = self.alt_names.get(line, line)  # image mode: the path as the image names it
                label = "objects/info/alternates" if depth == 0 else "alternates of " + shown
                self.alternates.append((label, shown, p if ok else None))
                if ok and os.path.realpath(p) not in seen and depth < 5:
                    seen.add(os.path.realpath(p))
                    out.append((f"alternate:{shown}", p))
                    queue.append((p, depth + 1))
        return out

    def _load_storage(self) -> None:
        nonbase = self.nonbase
        storage: dict[bytes, str] = {}
        self.dir_counts: dict[str, int] = {}
        for prefix, objdir in self.object_dirs():
            own = []
            for d in list_dir(objdir):
                if len(d.name) == 2 and d.is_dir(follow_symlinks=False):
                    for f in list_dir(Path(d.path)):
                        if len(f.name) == self.hexlen - 2:
                            try:
                                own.append((unhex(d.name + f.name), "loose"))
                            except (binascii.Error, ValueError):
                                pass
            for f in list_dir(objdir / "pack"):
                if not f.name.endswith(".idx"):
                    continue
                stem = f.name[:-4]
                pack = stem + ".pack"
                kind = "pack"
                if (objdir / "pack" / (stem + ".mtimes")).exists():
                    kind = "cruft"
                elif (objdir / "pack" / (stem + ".keep")).exists():
                    kind = "keep"
                elif (objdir / "pack" / (stem + ".promisor")).exists():
                    kind = "promisor"
                try:
                    ids = gb.parse_pack_idx(read_regular(f.path, 1 << 34) or b"", f.name, hashlen=self.hexlen // 2)
                except (gf.ParseError, TooLarge) as exc:
                    self.parse_errors.append(str(exc))
                    continue
                for h in ids:
                    own.append((unhex(h), f"{kind}:{pack}"))
            self.dir_counts[prefix] = len({o for o, _ in own})
            for oid, where in own:
                if oid in nonbase and oid not in storage:
                    storage[oid] = f"{prefix}" if prefix else where
        self.storage = storage
