"""B's blob at a repository path, followed into submodules.

A reference path may lie inside a submodule: B's tree then holds a gitlink (mode 160000) on the way, and the
file's blob lives in the submodule's own store, in the tree of the commit the gitlink records. That store is
the submodule checkout's ``.git`` (a folder or a ``gitdir:`` file) or ``<common git folder>/modules/<name>``
(the name from B's ``.gitmodules``, else the path). Each store is refused like the main one when it holds
entries git could be made to open (FIFOs, devices, links out of the tree), and inside a root filesystem or
image git reads it through a private copy whose alternates name the image's paths, never the host's.

When no store holds the gitlink's commit, the path's blob is unknown: :class:`BaseUnreadable` says so, naming
the submodule, so the fixed content is not computed and the fix checks end ``incomplete``, never ``clean``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ..git import files as gf
from ..git.cmd import GitError, GitRunner
from ..git.guard import unsafe_reason, within
from ..git.repo import GitRepo
from ..targets import inside, private_gitdir, repo_layout
from ..tree import is_dir
from .fixed import BaseUnreadable


class BaseBlobs:
    """Reads B's blob at a path of the superproject, through the submodule whose gitlink is on the way."""

    def __init__(self, repo: GitRepo, runner: GitRunner, *, worktree: Path | None, fsroot: Path | None,
                 private: Path, refused: Callable[[GitRepo], list[str]], shown: Callable[[Path], str]):
        self.repo, self.runner, self.worktree, self.fsroot, self.private = repo, runner, worktree, fsroot, private
        self.refused = refused  # entries of a store git must not be pointed at (``Ctx.unsafe_entries``)
        self.shown = shown  # a store's path as the report names it
        self.base = repo.base if repo.base and repo.base in repo.commits else None
        self._stores: dict[str, tuple[Path | None, str]] = {}  # submodule path -> (store holding its commit, why not)
        self._paths: list[tuple[str, str]] | None = None  # (name, path) of the submodules in B's .gitmodules

    def read(self, path: str, max_size: int) -> tuple[str, bytes] | None:
        """(blob id, bytes) of ``path`` in B; None when B has no such file (or it is larger than ``max_size``).
        Raises BaseUnreadable when the path lies in a submodule whose commit no store here holds."""
        repo, base = self.repo, self.base
        if base is None:
            return None
        oid = repo.blobs_at([base], [path])[base].get(path)
        if oid:
            got = repo.read_objects([oid], max_size=max_size).get(oid)
            return (oid, got[1]) if got else None
        link = self._gitlink(path)
        if link is None:
            return None
        sub, commit = link
        store, why = self._store(sub, commit)
        if store is None:
            raise BaseUnreadable(f"{path} is inside submodule {sub}, and the commit B's gitlink records there "
                                 f"({commit[:12]}) is not here: {why}; its base content cannot be read")
        try:
            return _read_blob(self.runner, store, commit, path[len(sub) + 1:], max_size)
        except GitError as exc:
            raise BaseUnreadable(f"{path} is inside submodule {sub}, whose store git cannot read: {exc.reason}") \
                from None

    def _gitlink(self, path: str) -> tuple[str, str] | None:
        """(submodule path, commit) of the gitlink on the way to ``path`` in B's tree, or None."""
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts))]
        found = self.repo.blobs_at([self.base], prefixes, gitlinks=True)[self.base]
        return next(((p, found[p]) for p in prefixes if p in found), None)

    def _store(self, sub: str, commit: str) -> tuple[Path | None, str]:
        """(git folder git may read that holds ``commit``, or None; what was looked at when none does)."""
        if sub not in self._stores:
            looked: list[str] = []
            found = None
            for gitdir in self._candidates(sub):
                shown = self.shown(gitdir)
                view = gitdir
                if self.fsroot is not None:  # its alternates and commondir name image paths: rewritten in a copy
                    view = private_gitdir(gitdir, self.fsroot, self.private, [], {}, [])
                refused = self.refused(GitRepo(view, self.runner, name=shown))
                if refused:  # a copy's entries would be named by private paths: the store is named instead
                    looked.append(f"{shown}: " + (unsafe_reason(refused) if view == gitdir else
                                                  "git not run: it holds entries git would open that are not "
                                                  "regular files"))
                    continue
                if _has_commit(self.runner, view, commit):
                    found = view
                    break
                looked.append(f"{shown} does not hold it")
            if not looked:
                places = [self.shown(self.worktree / sub / ".git")] if self.worktree is not None else []
                places.append(self.shown(self.repo.common / "modules" / ([*self._names(sub), sub][0])))
                looked.append("no git store at " + " or ".join(places))
            self._stores[sub] = (found, "; ".join(looked))
        return self._stores[sub]

    def _candidates(self, sub: str) -> list[Path]:
        """The git folders that may be the submodule's: its checkout's ``.git``, then ``modules/<name>``."""
        out: list[Path] = []
        checkout = self._in_worktree(sub)
        if checkout is not None:
            layout = repo_layout(checkout, self.fsroot)
            if layout is not None and layout[0] is not None:
                out.append(layout[1])
        modules = self.repo.common / "modules"
        real_modules = os.path.realpath(modules)
        for name in [*self._names(sub), sub] if is_dir(modules) else []:  # a linked modules/ is not followed
            if ".." in PurePosixPath(name).parts or name.startswith("/"):
                continue  # git refuses such names too: they would lead out of modules/
            gitdir = modules / name
            if within(os.path.realpath(gitdir), [real_modules]) and is_dir(gitdir):
                out.append(gitdir)
        uniq: dict[str, Path] = {}
        for gitdir in out:
            if _looks_like_gitdir(gitdir):
                uniq.setdefault(os.path.realpath(gitdir), gitdir)
        return list(uniq.values())

    def _in_worktree(self, sub: str) -> Path | None:
        """The submodule's checkout folder, resolved inside the audited tree (never through a link out of it)."""
        if self.worktree is None:
            return None
        if self.fsroot is not None:
            found = inside(self.fsroot, "/" + str(self.worktree.relative_to(self.fsroot)) + "/" + sub)
            return found if found is not None and is_dir(found) else None
        p = self.worktree / sub
        real = os.path.realpath(p)
        return p if is_dir(p) and within(real, [os.path.realpath(self.worktree)]) else None

    def _names(self, sub: str) -> list[str]:
        """Names B's ``.gitmodules`` gives the submodule at ``sub`` (its ``modules/`` folder is named so)."""
        if self._paths is None:
            self._paths = self._gitmodules_paths()
        return [name for name, path in self._paths if path.strip("/") == sub]

    def _gitmodules_paths(self) -> list[tuple[str, str]]:
        """(name, path) of every submodule B's ``.gitmodules`` lists (read by git's own config parser)."""
        base = self.base
        oid = self.repo.blobs_at([base], [".gitmodules"])[base].get(".gitmodules")
        got = self.repo.read_objects([oid], max_size=1 << 20).get(oid) if oid else None
        if not got:
            return []
        config = self.private / "gitmodules-of-base"
        config.write_bytes(got[1])
        try:
            listed = gf.parse_config_list(self.runner.run(["config", "--no-includes", "--file", str(config),
                                                          "--list", "-z"], ok_codes=(0, 1)).stdout)
        except GitError:
            return []
        finally:
            config.unlink(missing_ok=True)
        return [(m.group(1), value) for key, value in listed
                if (m := re.fullmatch(r"submodule\.(.+)\.path", key, re.S))]


def _looks_like_gitdir(p: Path) -> bool:
    return (p / "HEAD").is_file() and is_dir(p / "objects") and is_dir(p / "refs")


def _has_commit(runner: GitRunner, gitdir: Path, commit: str) -> bool:
    try:
        res = runner.run(["cat-file", "--batch-check"], git_dir=gitdir, input=f"{commit}\n".encode())
    except GitError:
        return False
    return res.stdout.split(b" ")[1:2] == [b"commit"]


def _read_blob(runner: GitRunner, gitdir: Path, commit: str, rest: str, max_size: int) -> tuple[str, bytes] | None:
    """(blob id, bytes) of ``rest`` in ``commit``'s tree of the store, None when there is no such file (or a
    larger one). ``commit:path`` is resolved by git's own tree walk, in a ``--batch`` call that reads nothing
    else."""
    if "\n" in rest or "\r" in rest:
        return None
    res = runner.run(["cat-file", "--batch-check"], git_dir=gitdir, input=f"{commit}:{rest}\n".encode())
    head = res.stdout.split(b"\n", 1)[0].split(b" ")
    if len(head) != 3 or head[1] != b"blob" or not head[2].isdigit() or int(head[2]) > max_size:
        return None
    oid = head[0].decode("ascii", "replace")
    res = runner.run(["cat-file", "--batch"], git_dir=gitdir, input=f"{oid}\n".encode())
    header, _, data = res.stdout.partition(b"\n")
    size = int(head[2])
    if header.split(b" ")[:2] != [head[0], b"blob"] or len(data) < size:
        return None
    return oid, data[:size]
