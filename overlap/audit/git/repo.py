"""One git store, read for the audit.

Over 400 lines on purpose: one class, ``GitRepo``, whose parsing steps share the state of one store scan.

``GitRepo`` parses the entry points from files (refs, packed-refs, reflogs, pseudo-refs, index,
worktrees, replace refs: never ``for-each-ref``), asks the hardened git for ALL and HIST, labels every
NONBASE object with the first entry-point group that reaches it, and reads the NONBASE commits (subject,
dates, parents, paths touched, blobs at the reference paths). The G checks in ``checks/git.py`` only read
these results.
"""

from __future__ import annotations

import binascii
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ...words import plural
from ..tree import TooLarge, is_dir, is_regular, list_dir, read_regular, walk
from . import binary as gb
from . import files as gf
from .cmd import GitError, GitRunner
from .entries import Entry, EntryPoints
from .files import unhex
from .objects import CommitInfo, ObjectReader

KNOWN_EXTENSIONS = {"noop", "noop-v1", "preciousobjects", "partialclone", "worktreeconfig", "objectformat"}
FILE_LIMIT = 64 << 20


class RepoBlocked(Exception):
    """git cannot read this repository (reftable, unknown extension, git failing): checks are incomplete."""


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


class GitRepo(EntryPoints, ObjectReader):
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

    def _read_abs(self, path: Path) -> bytes | None:
        try:
            return read_regular(os.path.realpath(path), FILE_LIMIT)  # as in ``read``
        except TooLarge:
            self.parse_errors.append(f"{path.name}: over the read limit")
            return None

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

    # ---------------------------------------------------------------------------------- storage
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

    @property
    def nonbase(self) -> set[bytes]:
        if not hasattr(self, "_nonbase"):
            self._nonbase = set(self.all) - self.hist
        return self._nonbase

