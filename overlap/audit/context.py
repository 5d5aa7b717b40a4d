"""What every check sees about one target: ``Ctx``, its lazily loaded git scan, and the checks' verdict errors.

A ``Ctx`` is built per target by ``run.py``. It loads lazily: the git scan (``ctx.repo``), the worktree
listing (``ctx.files``, ``listing.py``), nested git folders, the index. Its grades come from ``grading.py``
(the shared grading rules). Checks raise :class:`NotApplicable` or :class:`Incomplete` when they cannot run;
findings go through :meth:`Ctx.finding`. A nested git store is audited through ``ctx.nested``, which calls
the ``nested_runner`` the run hands in (``checks.registry.run_nested``): the checks never import the registry.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .content.base_blobs import BaseBlobs
from .content.fixed import BaseUnreadable, blob_id, compute_fixed
from .content.reference import Reference
from .git.cmd import GitError, GitRunner
from .git.guard import unsafe_entries, unsafe_reason
from .git.repo import GitRepo, RepoBlocked
from .grading import Grading
from .listing import Listing
from .model import Finding
from .source import SourceTree
from .tree import FileEntry
from .wording import cut

DEFAULT_LIMITS: dict[str, int] = {
    "image_bytes": 32 << 30,
    "image_entries": 5_000_000,
    "path_bytes": 4096,
    "materialise_bytes": 8 << 30,
    "spool_bytes": 64 << 20,
    "scan_file_bytes": 2 << 20,
    "archive_member_bytes": 16 << 20,
    "git_timeout": 300,
    "max_items": 50,
}


NO_REPOSITORY = "no repository"


class NotApplicable(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Incomplete(Exception):
    def __init__(self, reason: str, findings: list[Finding] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.findings = findings or []


def _base_unknown(repo: GitRepo) -> str | None:
    """Why the base cannot be known, or None: `HEAD` names a branch without a commit (an unborn branch) while
    the store holds commits. Audited against no base, every commit of the task's own history would count as
    beyond it (a false `leak`), so the checks that need the base do not run."""
    head = repo.head
    if repo.base is not None or head is None or not head.symref:
        return None
    if not any(r.oid and repo.has(r.oid) for r in repo.refs.values()):
        return None  # a store with no commit at all (`git init` only): nothing is beyond any base
    return (f"HEAD names {head.symref}, a branch without a commit, so the base is unknown; give --base REV "
            "(the task's base commit)")



@dataclass
class Ctx(Grading, Listing):
    kind: str
    path: str  # the target path as the report shows it
    root: Path | None  # worktree folder (None for a bare repo)
    gitdir: Path | None
    runner: GitRunner
    private: Path
    reference: Reference
    network: str = "any"
    limits: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_LIMITS))
    base_arg: str | None = None
    base_source: str = "HEAD"
    git_version: str | None = None
    git_error: str | None = None
    nested_depth: int = 0
    fsroot: Path | None = None  # rootfs mode: the root filesystem folder
    repo_path: str | None = None  # rootfs mode: the repository's absolute path inside it
    origin_gitdir: Path | None = None  # where the git folder sits in the input when ``gitdir`` is a copy
    dropped_alternates: list[str] = field(default_factory=list)  # alternates lines naming no image path
    alt_names: dict[str, str] = field(default_factory=dict)  # rewritten alternates line -> the image's path
    image: Any = None  # image mode: the opened image (image.model.Image)
    merged: Any = None  # image mode: the merged layer map (image.layers.Merged)
    limit_hit: str | None = None  # why the input could not be read (a limit, no zstd): every check incomplete
    partial_input: str | None = None  # what the checks could not see (missing foreign layers): ran, incomplete
    tree: Path | None = None  # the audited tree a symlink of a git folder may lead into (default: ``scope``)
    agent_user: str | None = None  # ``--agent-user NAME|UID``: who the agent runs as (else the image's ``User``)
    # audits a nested git store: ``checks.registry.run_nested``, handed down by the run (no check imports it)
    nested_runner: Callable[[Ctx, str, Path], tuple[GitRepo | None, list[Finding], list[str]]] | None = None

    def __post_init__(self) -> None:
        self._repo: GitRepo | None = None
        self._repo_error: str | None = None
        self._loaded = False
        self._files: list[FileEntry] | None = None
        self._gitdirs: list[tuple[str, Path]] = []
        self._lost_gitdirs: list[tuple[str, str]] = []  # (shown .git entry, why it leads to no git folder)
        self.walk_notes: list[str] = []
        self.exact_copies: dict[str, str] = {}  # scanned file -> fix|tests, matched exactly by F1/F2

    # ------------------------------------------------------------------------------------- git
    @property
    def max_items(self) -> int:
        return self.limits["max_items"]

    def git_prefix(self) -> str:
        if self.gitdir is None:
            return ""
        if self.root is not None:
            try:
                return str(self.gitdir.relative_to(self.root)) + "/"
            except ValueError:
                return ".git/"
        return ""

    def gp(self, rel: str) -> str:
        """A path inside the git folder as the report shows it (``.git/packed-refs``)."""
        return self.git_prefix() + rel

    @property
    def repo(self) -> GitRepo:
        """The loaded scan; NotApplicable without a git folder, Incomplete when git cannot read it."""
        if self.gitdir is None:
            if self.git_error and self.image is not None:
                raise Incomplete(self.git_error)
            raise NotApplicable(NO_REPOSITORY)
        if not self._loaded:
            self._loaded = True
            if self.git_error:
                self._repo_error = self.git_error
            else:
                repo = GitRepo(self.gitdir, self.runner, name=self.path, alt_names=self.alt_names)
                refused = self.unsafe_entries(repo)
                if refused:  # git would open them (block, read a device or a host file): never called
                    repo.blocked = refused
                    self._repo_error = unsafe_reason(refused)
                    self._blocked_repo = repo
                    raise Incomplete(self._repo_error)
                try:
                    rpaths = self.reference.paths if not self.nested_depth else set()
                    repo.load(self.base_arg, rpaths)
                    self._base_unknown = _base_unknown(repo) if not self.nested_depth and self.base_arg is None \
                        else None
                    if self._base_unknown is None:
                        self._repo = repo
                        self._prepare_reference(repo)
                except RepoBlocked as exc:
                    self._repo_error = str(exc)
                    self._blocked_repo = repo
                except GitError as exc:
                    self._repo_error = exc.reason
                    self._blocked_repo = repo
        if getattr(self, "_base_unknown", None):
            raise Incomplete(self._base_unknown)
        if self._repo is None:
            err = self._repo_error or ""
            raise Incomplete(err if err.startswith("git not run:") else f"git cannot read the repository: {err}")
        return self._repo

    def unsafe_entries(self, repo: GitRepo) -> list[str]:
        """Entries of the store's folders git could open that are not regular files or folders."""
        dirs = [p for prefix, p in repo.object_dirs() if prefix]  # alternates: git reads them too
        folders = list(dict.fromkeys([repo.gitdir, repo.common, *dirs]))
        tree = self.tree or self.scope
        return unsafe_entries(folders, [*([tree] if tree is not None else []), *folders], self._shown_store_path)

    def _shown_store_path(self, path: Path) -> str:
        """A path in a git store as the report names it (never a private copy's path)."""
        tree = self.tree or self.scope
        for base, shown in ((tree, self.shown), (self.gitdir, self.gp), (self.origin_gitdir, self.gp)):
            if base is None:
                continue
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if shown == self.gp and self.nested_depth:
                return f"{self.path}/{rel}"
            return shown(rel)
        for private, image_path in self.alt_names.items():
            try:
                return f"{image_path}/{path.relative_to(private).as_posix()}"
            except ValueError:
                continue
        return str(path)

    def repo_blocked(self) -> tuple[GitRepo | None, str | None]:
        """(the half-loaded repo, the reason) when git could not read it; (None, None) otherwise."""
        try:
            _ = self.repo
        except (Incomplete, NotApplicable):
            pass
        return getattr(self, "_blocked_repo", None), self._repo_error

    def _prepare_reference(self, repo: GitRepo) -> None:
        ref = self.reference
        if not ref.given or self.nested_depth:
            return
        cache: dict[str, tuple[str, bytes] | None] = {}

        def base_blob(path: str) -> tuple[str, bytes] | None:
            if path not in cache:
                cache[path] = self.base_blobs(repo).read(path, self.limits["spool_bytes"])
            return cache[path]

        scratch = self.runner.scratch or (self.private / "scratch")
        compute_fixed(ref, base_blob, self.runner, scratch, hexlen=repo.hexlen)

    def base_text(self, path: str) -> str | None:
        """B's version of a repository path (None when absent or git cannot read the repo)."""
        cache = self.__dict__.setdefault("_base_text", {})
        if path not in cache:
            cache[path] = None
            if self.gitdir is None:  # no repository: the task's own tree (or source tarball) is the base
                got_bytes = self.source_tree().read(path)
                cache[path] = got_bytes.decode("utf-8", "replace") if got_bytes is not None else None
            elif self._repo is not None:
                try:
                    got = self.base_blobs(self._repo).read(path, self.limits["scan_file_bytes"])
                except BaseUnreadable:
                    got = None
                if got:
                    cache[path] = got[1].decode("utf-8", "replace")
        return cache[path]

    def source_tree(self) -> SourceTree:
        """The task's folder read as the base when there is no repository (its files, or a source tarball)."""
        if "_source_tree" not in self.__dict__:
            self._source_tree = SourceTree(self.root, self.limits["spool_bytes"])
        return self._source_tree

    def prepare_reference_without_git(self) -> None:
        """The fixed content of a task without git: the fix applied to the task's tree or source tarball."""
        ref = self.reference
        if not ref.given or self.gitdir is not None or self.nested_depth or ref.fixed:
            return
        tree = self.source_tree()

        def base_blob(path: str) -> tuple[str, bytes] | None:
            data = tree.read(path)
            return (blob_id(data, 40), data) if data is not None else None

        scratch = self.runner.scratch or (self.private / "scratch")
        compute_fixed(ref, base_blob, self.runner, scratch, hexlen=40)
        if any(f.status == "incomplete" for f in ref.fixed):
            # a tree that is already patched (or changed by the build): the shipped source tarball is the base
            first = ref.fixed
            tree.prefer_tarball = True
            compute_fixed(ref, base_blob, self.runner, scratch, hexlen=40)
            ref.fixed = [a if a.status != "incomplete" or b.status == "incomplete" else b
                         for a, b in zip(first, ref.fixed, strict=True)]
            tree.prefer_tarball = False

    def base_blobs(self, repo: GitRepo) -> BaseBlobs:
        """B's blobs of the loaded store, submodules followed (one reader per target: it caches their stores)."""
        if "_base_blobs" not in self.__dict__:
            self._base_blobs = BaseBlobs(repo, self.runner, worktree=self.root, fsroot=self.fsroot,
                                         private=self.private, refused=self.unsafe_entries,
                                         shown=self._shown_store_path)
        return self._base_blobs

    # ------------------------------------------------------------------------------- findings
    def reproduce(self, command: str, where: str = "container") -> dict[str, str]:
        if self.image is not None and where == "container":
            return {"where": where, "cwd": self.repo_path or "/", "command": command}
        return {"where": where, "cwd": self.path, "command": command}

    @staticmethod
    def q(arg: str) -> str:
        return shlex.quote(arg)

    def finding(self, check: str, subject: str, severity: str, cls: str, title: str, where: str,
                evidence: dict[str, Any], command: str, *, hint: str | None = None,
                related: list[str] | None = None, run_on: str = "container") -> Finding:
        return Finding(check, subject, severity, cls, cut(title), where, evidence, self.reproduce(command, run_on),
                       hint, sorted(set(related or [])))

    # ------------------------------------------------------------------------------ nested stores
    def nested(self, rel: str, gitdir: Path) -> tuple[GitRepo | None, list[Finding], list[str]]:
        """The nested store at ``rel`` audited against its own base (G1–G12, G14; cached per target): its
        scan (None when git cannot read it), its findings, and ``"<check>: <reason>"`` of each check it could
        not run. The run sets ``nested_runner``; a ``Ctx`` built without one cannot descend."""
        if self.nested_runner is None:
            raise NotApplicable("nested git stores are audited only within a run")
        return self.nested_runner(self, rel, gitdir)
