"""One git store, read for the audit.

``GitRepo`` parses the entry points from files (refs, packed-refs, reflogs, pseudo-refs, index,
worktrees, replace refs: never ``for-each-ref``), asks the hardened git for ALL and HIST, labels every
NONBASE object with the first entry-point group that reaches it, and reads the NONBASE commits (subject,
dates, parents, paths touched, blobs at the reference paths). Its parts are mixins: ``refs`` (the refs
read from files), ``entries`` (the other entry points), ``storage`` (where each object is kept) and
``objects`` (commit and tag contents). The G checks in ``checks/git.py`` only read these results.
"""

from __future__ import annotations

import binascii
import os
import re
from pathlib import Path

from ...errors import InputError
from ...words import plural
from ..tree import TooLarge, is_dir, is_regular, list_dir, read_regular
from . import binary as gb
from . import files as gf
from .cmd import GitError, GitRunner
from .entries import Entry, EntryPoints
from .files import unhex
from .objects import CommitInfo, ObjectReader
from .refs import Ref, RefReader
from .storage import ObjectStorage

KNOWN_EXTENSIONS = {"noop", "noop-v1", "preciousobjects", "partialclone", "worktreeconfig", "objectformat"}
FILE_LIMIT = 64 << 20


class RepoBlocked(Exception):
    """git cannot read this repository (reftable, unknown extension, git failing): checks are incomplete."""


class GitRepo(EntryPoints, ObjectReader, RefReader, ObjectStorage):
    """A git folder and what the audit learns about it. Call ``load(base)`` once."""

    def __init__(self, gitdir: Path, runner: GitRunner, *, name: str = ".git", alt_names: dict | None = None):
        self.gitdir = Path(gitdir)
        self.common = self._commondir()
        self.runner = runner
        self.name = name  # how the report names this git folder ("." -> ".git")
        self.notes: list[str] = []
        self.parse_errors: list[str] = []
        self.blocked: list[str] = []
        self.config: list[tuple[str, str]] = []
        self.hexlen = 40
        self.rpaths: set[str] = set()
        self.alt_names: dict[str, str] = dict(alt_names or {})
        self.refs: dict[str, Ref] = {}
        self.head: Ref | None = None
        self.base: str | None = None
        self.base_missing: str | None = None
        self.setup: list[str] = []  # B..HEAD, oldest first
        self.head_descends = True
        self.all: dict[bytes, tuple[str, int]] = {}
        self.unreadable: list[str] = []  # objects of the store git could not read (or its first error)
        self.unindexed: list[str] = []  # packs of the store without their .idx
        self.hist: set[bytes] = set()
        self.hist_missing: set[bytes] = set()
        self.labels: dict[bytes, str] = {}
        self.storage: dict[bytes, str] = {}
        self.entries: list[Entry] = []
        self.commits: dict[str, CommitInfo] = {}  # NONBASE commits plus B, HEAD and setup commits
        self.tags: dict[str, gf.Tag] = {}
        self.index: gb.Index | None = None
        self.index_error: str | None = None
        self.worktrees: list[str] = []
        self.alternates: list[tuple[str, str, Path | None]] = []  # (file, line, resolved dir or None)

    # ------------------------------------------------------------------------------------- files
    def _commondir(self) -> Path:
        try:
            data = read_regular(self.gitdir / "commondir", 4096)
        except TooLarge:
            data = None
        if data and data.strip():
            p = Path(data.strip().decode("utf-8", "replace"))
            p = p if p.is_absolute() else self.gitdir / p
            if is_dir(p):
                return Path(p)
        return self.gitdir

    def read(self, rel: str, *, common: bool = False, limit: int = FILE_LIMIT) -> bytes | None:
        base = self.common if common else self.gitdir
        try:  # a symlink is followed as git follows it: ``Ctx.unsafe_entries`` refused the store unless each
            return read_regular(os.path.realpath(base / rel), limit)  # one stays in the tree and ends at a file
        except TooLarge as exc:
            self.parse_errors.append(f"{rel}: {exc.size} bytes, over the read limit")
            return None

    def parse(self, fn, rel: str, *, common: bool = False, **kw):
        """Parse one file with ``fn``; a ParseError is recorded (the check goes incomplete) and gives None."""
        data = self.read(rel, common=common)
        if data is None:
            return None
        try:
            return fn(data, rel, **kw)
        except gf.ParseError as exc:
            self.parse_errors.append(str(exc))
            return None

    # ------------------------------------------------------------------------------------ loading
    def load(self, base: str | None, rpaths: set[str] | frozenset[str] = frozenset()) -> None:
        """Read config, refs and objects. Raises RepoBlocked when git cannot read this repository.

        ``rpaths`` (the reference paths) are the paths whose blobs are followed through every commit.
        """
        self.rpaths = set(rpaths)
        self._load_config()
        if self.blocked:
            raise RepoBlocked("; ".join(self.blocked))
        self._load_refs()
        self._resolve_base(base)
        self._load_all()
        self._load_hist()
        self._load_storage()
        self._load_entries()
        self._label()
        self._load_commits()
        self.compute_rblobs(self.rpaths)

    def _load_config(self) -> None:
        if (self.common / "reftable").exists():
            self.blocked.append("reftable ref storage (reftable/) is not read by this version")
        try:
            res = self.runner.run(["config", "--no-includes", "--file", str(self.common / "config"),
                                   "--list", "-z"], ok_codes=(0, 1))
        except GitError as exc:
            self.blocked.append(f"config: {exc.reason}")
            return
        self.config = gf.parse_config_list(res.stdout)
        cfg = {}
        for k, v in self.config:
            cfg.setdefault(k.lower(), v)
        try:
            version = int(cfg.get("core.repositoryformatversion", "0") or "0")
        except ValueError:
            version = 99
        if version > 1:
            self.blocked.append(f"core.repositoryformatversion = {version}")
        for k, v in self.config:
            kl = k.lower()
            if kl.startswith("extensions."):
                ext = kl.split(".", 1)[1]
                if ext == "refstorage":
                    self.blocked.append(f"extensions.refStorage = {v} (reftable refs are not read yet)")
                elif ext not in KNOWN_EXTENSIONS:
                    self.blocked.append(f"unknown repository extension {k} = {v}")
        fmt = cfg.get("extensions.objectformat", "sha1").lower()
        if fmt == "sha256":
            self.hexlen = 64
        elif fmt != "sha1":
            self.blocked.append(f"unknown object format {fmt}")

    def _read_abs(self, path: Path) -> bytes | None:
        try:
            return read_regular(os.path.realpath(path), FILE_LIMIT)  # as in ``read``
        except TooLarge:
            self.parse_errors.append(f"{path.name}: over the read limit")
            return None

    def _resolve_base(self, base: str | None) -> None:
        head = self.head.oid if self.head else None
        if base is None:
            self.base = head
            return
        if re.fullmatch(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}", base) and not self._rev_parse(base):
            self.base_missing = base.lower()
            self.base = head
            return
        oid = self._rev_parse(base)
        if oid is None:
            if re.fullmatch(r"[0-9a-fA-F]{7,64}", base):
                self.base_missing = base.lower()
                self.base = head
                return
            raise InputError(f"--base {base}: not a commit in {self.name} (give a commit ID or a ref name)")
        self.base = oid

    def _rev_parse(self, rev: str) -> str | None:
        try:
            res = self.runner.run(["rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"],
                                  git_dir=self.gitdir, ok_codes=(0, 1, 128))
        except GitError:
            return None
        if "ambiguous" in res.stderr:
            raise InputError(f"--base {rev}: ambiguous in {self.name}; give more hex digits")
        out = res.stdout.strip().decode("ascii", "replace")
        return out if res.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", out) else None

    def rev_in_hist(self, short: str) -> bool:
        """Whether a hex prefix names a commit of base history (an image tagged by its base is fine)."""
        oid = self._rev_parse(short) if re.fullmatch(r"[0-9a-f]{7,64}", short) else None
        return bool(oid and self.in_hist(oid))

    def _load_all(self) -> None:
        res = self.runner.run(["cat-file", "--batch-all-objects", "--unordered",
                               "--batch-check=%(objectname) %(objecttype) %(objectsize)"], git_dir=self.gitdir)
        types = {b"commit": "commit", b"tree": "tree", b"blob": "blob", b"tag": "tag"}
        allo = {}
        for line in res.stdout.splitlines():
            parts = line.split(b" ")
            if len(parts) == 3:
                allo[binascii.unhexlify(parts[0])] = (types.get(parts[1], "unknown"), int(parts[2]))
        self.all = allo
        # git lists every object it can read and only says on stderr which it could not (a corrupt loose
        # object): what was in it cannot be checked, so the store's checks are incomplete, naming them
        named = sorted({m for line in res.errors for m in re.findall(r"\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b", line)})
        self.unreadable = named or ([res.errors[0]] if res.errors else [])
        # a pack without its index is invisible to git: its objects (the fix?) are in no scan
        pack = self.common / "objects" / "pack"
        self.unindexed = [e.name for e in list_dir(pack) if e.name.endswith(".pack")
                          and e.is_file(follow_symlinks=False) and not is_regular(pack / (e.name[:-5] + ".idx"))]

    def store_gaps(self) -> str | None:
        """Why the object store cannot be checked whole (objects git cannot read or cannot see), or None."""
        gaps = []
        if self.unreadable:
            shown = ", ".join(b[:12] for b in self.unreadable[:3])
            gaps.append(f"{plural(len(self.unreadable), 'object')} of the store cannot be read (corrupt): {shown}; "
                        "`git fsck` names them")
        if self.unindexed:
            gaps.append(f"objects/pack/{self.unindexed[0]} has no .idx, so git sees none of its objects "
                        f"({plural(len(self.unindexed), 'such pack')}; `git index-pack` on a copy lists them)")
        return "; ".join(gaps) or None

    def has(self, oid: str) -> bool:
        try:
            return unhex(oid) in self.all
        except (binascii.Error, ValueError):
            return False

    def type_of(self, oid: str) -> str | None:
        try:
            t = self.all.get(unhex(oid))
        except (binascii.Error, ValueError):
            return None
        return t[0] if t else None

    def in_hist(self, oid: str) -> bool:
        try:
            b = unhex(oid)
        except (binascii.Error, ValueError):
            return False
        return b in self.hist or b in self.hist_missing

    def _rev_list(self, tips: list[str], negate: list[str]) -> tuple[set[bytes], set[bytes]]:
        """Objects reachable from ``tips`` (present, missing); ``negate`` tips are excluded."""
        payload = "".join(f"{t}\n" for t in tips) + "".join(f"^{n}\n" for n in negate)
        res = self.runner.run(["rev-list", "--objects", "--missing=print", "--stdin"], git_dir=self.gitdir,
                              input=payload.encode())
        present, missing = set(), set()
        n = self.hexlen
        for line in res.stdout.splitlines():
            if line.startswith(b"?"):
                missing.add(binascii.unhexlify(line[1 : 1 + n]))
            elif len(line) >= n:
                present.add(binascii.unhexlify(line[:n]))
        return present, missing

    def _load_hist(self) -> None:
        if self.base is None or not self.has(self.base):
            return
        tips = [self.base]
        head = self.head.oid if self.head else None
        if head and head != self.base and self.has(head):
            res = self.runner.run(["merge-base", "--is-ancestor", self.base, head], git_dir=self.gitdir,
                                  ok_codes=(0, 1))
            if res.returncode == 0:
                tips.append(head)
                out = self.runner.run(["rev-list", head, f"^{self.base}"], git_dir=self.gitdir).stdout
                self.setup = [x.decode() for x in reversed(out.split())]
            else:
                self.head_descends = False
        self.hist, self.hist_missing = self._rev_list(tips, [])

    @property
    def hist_tips(self) -> list[str]:
        return [self.base] + ([self.head.oid] if self.setup and self.head else []) if self.base else []

    @property
    def nonbase(self) -> set[bytes]:
        if not hasattr(self, "_nonbase"):
            self._nonbase = set(self.all) - self.hist
        return self._nonbase

