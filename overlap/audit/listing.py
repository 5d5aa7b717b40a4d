"""The target's files as the checks see them: the walk of the scan scope, the nested git folders, the index.

A mixin of ``context.Ctx`` (it uses ``self.root``, ``self.fsroot``, ``self.gitdir``, ``self.origin_gitdir``,
``self._repo``, ``self.gp`` and the caches ``__post_init__`` sets): one walk per target, recorded once.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .git import binary as gb
from .git import files as gf
from .git.guard import kind_of
from .targets import repo_layout
from .tree import FileEntry, TooLarge, read_regular, walk
from .wording import cut


class Listing:
    """The files of ``Ctx``: what the scan covers, how a scanned path is shown, what the walk found."""

    @property
    def scope(self) -> Path | None:
        """The folder the file scans cover: the root filesystem in rootfs mode, else the repository folder."""
        return self.fsroot if self.fsroot is not None else self.root

    def shown(self, rel: str) -> str:
        """A scanned path as the report shows it: absolute in a root filesystem, repo-relative otherwise."""
        return "/" + rel if self.fsroot is not None else rel

    def in_worktree(self, rel: str) -> str | None:
        """The worktree-relative path of a scanned entry, or None when it lies outside the worktree."""
        if self.fsroot is None:
            return rel
        if self.root is None:
            return None
        prefix = str(self.root.relative_to(self.fsroot)) + "/"
        return rel[len(prefix):] if rel.startswith(prefix) else None


    def task_paths(self) -> list[str]:
        """Without an index, the task's files: the worktree-relative paths of the scanned tree's regular files
        (what "occurs nowhere in the tracked worktree" means for a task that tracks nothing)."""
        if self.root is None:
            return []
        out = []
        for fe in self.files():
            rel = self.in_worktree(fe.rel)
            if rel is not None and stat.S_ISREG(fe.st.st_mode):
                out.append(rel)
        return sorted(out)


    def files(self) -> list[FileEntry]:
        """Every non-folder entry of the scan scope outside git folders (nested git folders are recorded)."""
        if self._files is None:
            self._files = []
            scope = self.scope
            if scope is not None:
                gitdirs: list[tuple[str, Path]] = []

                def skip(rel: str, name: str) -> bool:
                    p = scope / rel
                    if self.fsroot is not None and rel in ("proc", "sys", "dev"):
                        return True
                    if p in (self.gitdir, self.origin_gitdir):
                        return True
                    if name == ".git" or _looks_like_gitdir(p):
                        gitdirs.append((self.shown(rel), p))
                        return True
                    return False

                for fe in walk(scope, skip_dir=skip, notes=self.walk_notes):
                    if fe.rel == ".git" or fe.rel.endswith("/.git"):
                        target = _gitfile_target(fe.path, self.fsroot)
                        problem = _gitfile_problem(fe.path, self.fsroot) if target is None else None
                        if problem:
                            self._lost_gitdirs.append((self.shown(fe.rel), problem))
                        elif target is not None and target not in (self.gitdir, self.origin_gitdir):
                            gitdirs.append((self.shown(fe.rel), target))
                        continue
                    self._files.append(fe)
                self._gitdirs = gitdirs
        return self._files

    def nested_gitdirs(self) -> list[tuple[str, Path]]:
        self.files()
        out = list(self._gitdirs)
        if self.gitdir is not None:
            modules = self.gitdir / "modules"
            for fe in walk(modules) if modules.is_dir() and not modules.is_symlink() else ():
                if fe.rel.endswith("/HEAD") or fe.rel == "HEAD":
                    d = fe.path.parent
                    if _looks_like_gitdir(d):
                        out.append((self.gp("modules/" + str(d.relative_to(modules))), d))
        seen, uniq = set(), []
        # a checkout's own .git entry first: its path is where the gitlink of a submodule sits
        for rel, p in sorted(out, key=lambda x: (not x[0].endswith(".git") or "/modules/" in x[0], x[0])):
            if str(p) not in seen:
                seen.add(str(p))
                uniq.append((rel, p))
        return uniq

    def lost_gitdirs(self) -> list[tuple[str, str]]:
        """Nested ``.git`` entries that lead to no git folder: (path as shown, why). Nothing of such a store
        can be checked, so G13 names each one instead of passing over it."""
        self.files()
        return list(self._lost_gitdirs)

    def index(self) -> gb.Index | None:
        """The index parsed by the tool's own code (works even when git cannot read the repo)."""
        if self._repo is not None and self._repo.index is not None:
            return self._repo.index  # already parsed by the git scan
        if not hasattr(self, "_index"):
            self._index = None
            self.index_error = None
            if self.gitdir is not None:
                odd = _odd_entry(self.gitdir / "index")
                if odd:
                    self.index_error = f"{self.gp('index')}: {odd}"
                try:
                    data = read_regular(self.gitdir / "index", 1 << 31)
                except TooLarge as exc:
                    data = None
                    self.index_error = str(exc)
                if data is not None:
                    try:
                        self._index = gb.parse_index(data, "index", hashlen=self._hashlen())
                    except gf.ParseError as exc:
                        self.index_error = str(exc)
        return self._index

    def _hashlen(self) -> int:
        data = None
        try:
            data = read_regular(self.gitdir / "config", 1 << 20) if self.gitdir else None
        except TooLarge:
            pass
        return 32 if data and b"sha256" in data.lower() and b"objectformat" in data.lower() else 20


def _odd_entry(p: Path) -> str | None:
    """What ``p`` is when it exists and is not a regular file (never opened), else None."""
    try:
        mode = os.lstat(p).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else f"{kind_of(mode)}, not read"


def _looks_like_gitdir(p: Path) -> bool:
    try:
        return (p / "HEAD").is_file() and not (p / "HEAD").is_symlink() and (p / "objects").is_dir() \
            and (p / "refs").is_dir()
    except OSError:
        return False


def _gitfile_problem(p: Path, fsroot: Path | None) -> str | None:
    """Why the ``.git`` entry ``p`` leads to no git folder (``_gitfile_target`` found none); None when it
    leads to a linked worktree's folder, whose store is its common git folder (found and named elsewhere)."""
    if p.is_symlink():
        return "a symlink, not followed"
    try:
        data = read_regular(p, 4096)
    except TooLarge:
        return "a .git file too large to be a gitdir: file"
    if data is None:
        return "neither a git folder nor a gitdir: file"
    if not data.startswith(b"gitdir:"):
        return "a .git file without a gitdir: line"
    line = cut(data[7:].strip().decode("utf-8", "replace"), 120)
    # repo_layout resolves the line as git does (inside the image for an image): a layout means the folder exists
    layout = repo_layout(p.parent, fsroot)
    if layout is None:
        return f"its git folder {line} is missing"
    if (layout[1] / "HEAD").is_file() and (layout[1] / "commondir").is_file():
        return None
    return f"its git folder {line} is not a git folder (no HEAD, objects/ and refs/)"


def _gitfile_target(p: Path, fsroot: Path | None = None) -> Path | None:
    """The folder a ``.git`` file (``gitdir: …``) names, or the folder itself; inside ``fsroot`` if given."""
    try:
        if p.is_symlink():
            return None
        if p.is_dir():
            return p if _looks_like_gitdir(p) else None
    except OSError:
        return None
    layout = repo_layout(p.parent, fsroot)
    return layout[1] if layout is not None and _looks_like_gitdir(layout[1]) else None
