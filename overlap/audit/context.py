"""What every check sees about one target, and the shared grading rules (docs/audit.md, Severity and verdicts).

Over 400 lines on purpose: ``Ctx`` is one lazily loaded object whose loaders share its caches.

A ``Ctx`` is built per target by ``run.py``. It loads lazily: the git scan (``ctx.repo``), the worktree
listing (``ctx.files``), nested git folders, the index. Checks raise :class:`NotApplicable` or
:class:`Incomplete` when they cannot run; findings go through :meth:`Ctx.finding`. A nested git store is
audited through ``ctx.nested``, which calls the ``nested_runner`` the run hands in (``run.run_nested``):
the checks sit below the run and never import it.
"""

from __future__ import annotations

import os
import shlex
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .content.base_blobs import BaseBlobs
from .content.fixed import BaseUnreadable, blob_id, compute_fixed
from .content.matchers import distinctive_hunks, holds, stripped_lines
from .content.reference import Reference
from .git import binary as gb
from .git import files as gf
from .git.cmd import GitError, GitRunner
from .git.guard import kind_of, unsafe_entries, unsafe_reason
from .git.repo import GitRepo, RepoBlocked
from .model import Finding, worst
from .source import SourceTree
from .targets import repo_layout
from .tree import FileEntry, TooLarge, read_regular, walk

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


SIDE_HISTORY_NOTE = ("dated before the base, never reaching it, holding no fixed blob nor the fix's hunks: the "
                     "base's past (an old release, upstream history), not its future")


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


def iso(ts: int | float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def short(oid: str | None) -> str:
    return (oid or "")[:12]


def cut(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


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


def capped(items: list, limit: int) -> dict[str, Any]:
    return {"total": len(items), "truncated": len(items) > limit, "items": items[:limit]}


@dataclass
class Ctx:
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
    # audits a nested git store: ``run.run_nested``, handed down by the run (the checks sit below the registry)
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

    def base_blobs(self, repo: GitRepo) -> BaseBlobs:
        """B's blobs of the loaded store, submodules followed (one reader per target: it caches their stores)."""
        if "_base_blobs" not in self.__dict__:
            self._base_blobs = BaseBlobs(repo, self.runner, worktree=self.root, fsroot=self.fsroot,
                                         private=self.private, refused=self.unsafe_entries,
                                         shown=self._shown_store_path)
        return self._base_blobs

    # -------------------------------------------------------------------------------- grading
    def sha_only(self) -> str:
        """The grade of an object ID whose object the store does not hold.

        The ID gives the agent nothing to read here; it adds only what the declared network already
        allows. Offline it is nothing (info). Online it is a pointer the agent could fetch from the forge
        only if it knows the repository's URL (low), unless a remote is configured: then the URL is handed
        over too, and the ID is worth what the remote is (medium). So an absent ID never outranks the
        configured remote that would fetch it.
        """
        if self.network != "any":
            return "info"
        return "medium" if self.remote_configured() else "low"

    def remote_configured(self) -> bool:
        """Whether the store's config names a way to fetch (a remote URL, a promisor, a partial clone)."""
        return self._repo is not None and gf.fetch_configured(self._repo.config)

    def fixed_blobs(self) -> dict[str, Any]:
        return self.reference.fixed_blobs() if self.reference.given else {}

    def holds_fixed(self, commit: str) -> bool:
        info = self.repo.commits.get(commit)
        fixed = self.fixed_blobs()
        return bool(info and fixed and any(b in fixed for b in info.rblobs.values()))

    def touches_reference(self, commit: str) -> bool:
        info = self.repo.commits.get(commit)
        r = self.reference.paths
        return bool(info and info.paths and r and any(p in r for p in info.paths))

    def holds_fix_hunks(self, commit: str) -> bool:
        """Whether one of the commit's blobs at the reference paths holds a usable fix hunk (a near copy)."""
        info = self.repo.commits.get(commit)
        if info is None or not self.reference.given:
            return False
        cache = self.__dict__.setdefault("_hunk_blobs", {})
        if "hunks" not in cache:
            cache["hunks"] = [h for h in distinctive_hunks(self.reference, self.reference.base_texts())[0]
                              if h.kind == "fix"]
        hunks = cache["hunks"]
        wanted = [b for b in info.rblobs.values() if b not in cache]
        for oid, (typ, data) in self.repo.read_objects(wanted, max_size=self.limits["scan_file_bytes"]).items():
            lines = stripped_lines(data.decode("utf-8", "replace")) if typ == "blob" else []
            cache[oid] = any(holds(lines, h) for h in hunks)
        return any(cache.get(b, False) for b in info.rblobs.values())

    def commit_grade(self, commit: str) -> str:
        if self.holds_fixed(commit):
            return "critical"
        if self.touches_reference(commit):
            # a commit dated before the base that never reaches it (an old release tag, the base's own upstream
            # past behind a synthetic base) edits the files the fix edits as every past commit does: without a
            # fixed blob or the fix's hunks it holds the base's past, not its future
            if self.repo.predates_base(commit) and not self.holds_fix_hunks(commit):
                return "info"
            return "high"
        if not self.reference.given and commit in self.repo.descends_from_base():
            return "high"
        if self.repo.predates_base(commit):
            # old release branches of a full clone: no fixed blob, no reference path (when a reference says
            # so) and no way to build on B; without a reference the content is unchecked, hence low
            return "info" if self.reference.given else "low"
        return "medium"

    def grade_oid(self, oid: str, depth: int = 0) -> str | None:
        """Worst severity of the content ``oid`` makes reachable (None when it is all in HIST)."""
        repo = self.repo
        if repo.in_hist(oid):
            return None
        if not repo.has(oid):
            return self.sha_only()
        typ = repo.type_of(oid)
        if typ == "commit":
            return worst(self.commit_grade(c) for c in repo.reach(oid)) or "medium"
        if typ == "tag":
            tag = repo.tags.get(oid)
            if tag is None or depth > 10:
                return "medium"
            return self.grade_oid(tag.object, depth + 1)
        if typ == "blob":
            return "critical" if oid in self.fixed_blobs() else "medium"
        return "medium"

    def commit_record(self, oid: str) -> dict[str, Any]:
        """The per-commit evidence of G6 (and other checks that name commits)."""
        repo = self.repo
        info = repo.commits.get(oid)
        rec: dict[str, Any] = {"sha": oid, "object_present": repo.has(oid)}
        if info is None:
            return rec
        c = info.commit
        base_time = repo.commits[repo.base].commit.committer_time if repo.base in repo.commits else None
        rel = None
        if base_time is not None and c.committer_time is not None:
            rel = "after" if c.committer_time > base_time else "same-second" if c.committer_time == base_time \
                else "before"
        rec.update({
            "subject": cut(c.subject),
            "author_date": iso(c.author_time),
            "committer_date": iso(c.committer_time),
            "date_vs_base": rel,
            "descends_from_base": oid in repo.descends_from_base(),
            "paths": (info.paths or [])[: self.max_items] if info.paths is not None else None,
            "touches_reference": self.touches_reference(oid) if self.reference.given else None,
            "holds_fixed_blob": self.holds_fixed(oid) if self.reference.given else None,
            "is_fix_commit": self.is_fix_commit(oid),
            "severity": self.commit_grade(oid),
        })
        if rec["severity"] == "info" and rec["touches_reference"]:
            rec["note"] = SIDE_HISTORY_NOTE
        return rec

    def is_fix_commit(self, oid: str) -> bool:
        fc = self.reference.fix_commit
        return bool(fc and oid.startswith(fc))

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

    # --------------------------------------------------------------------------------- files
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

    def nested(self, rel: str, gitdir: Path) -> tuple[GitRepo | None, list[Finding], list[str]]:
        """The nested store at ``rel`` audited against its own base (G1–G12, G14; cached per target): its
        scan (None when git cannot read it), its findings, and ``"<check>: <reason>"`` of each check it could
        not run. The run sets ``nested_runner``; a ``Ctx`` built without one cannot descend."""
        if self.nested_runner is None:
            raise NotApplicable("nested git stores are audited only within a run")
        return self.nested_runner(self, rel, gitdir)

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
