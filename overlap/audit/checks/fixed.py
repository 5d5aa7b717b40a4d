"""Fixed-content route, F1 and F2: the post-fix blobs looked up everywhere.

The blobs come from ``content.fixed.compute_fixed`` (scratch ``git apply``, hashed in process; nothing is
ever written to the audited store). Each fixed path gets one finding listing every place its blob was
found: the object store outside HIST (critical, with the commits whose trees hold it), inside HIST
(``in_base_history``, medium: revert-type and synthetic-bug tasks), nested stores, index stages and
REUC, the worktree file at that path ("task already solved") and any same-sized file of the tree.
"""

from __future__ import annotations

import hashlib
import os
import stat

from ..content.reference import FixedFile
from ..context import Ctx, Incomplete, NotApplicable
from ..git.files import unhex
from ..git.guard import link_problem
from ..model import Finding, worst
from ..tree import TooLarge, read_regular, walk
from ..wording import capped, short
from .rank import worst_first


def _hash_file(ctx: Ctx, path, size: int, hexlen: int) -> str | None:
    try:
        data = read_regular(path, max(size, 1))
    except TooLarge:
        return None
    if data is None or len(data) != size:
        return None
    h = hashlib.sha1() if hexlen == 40 else hashlib.sha256()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def worktree_link(ctx: Ctx, path: str) -> tuple[str, str | None, str | None] | None:
    """Repo mode: (link text, problem, real target) when the worktree entry at ``path`` is a symlink, else None.

    The problem is set when the link leads out of the repository (or to a FIFO or device): its target is
    never read. In a root filesystem or image a link resolves inside it, where every regular file is scanned."""
    if ctx.fsroot is not None or ctx.root is None:
        return None
    p = ctx.root / path
    try:
        if not stat.S_ISLNK(os.lstat(p).st_mode):
            return None
        text = os.readlink(p)
    except OSError:
        return None
    problem, real = link_problem(p, [ctx.root])
    return text, problem, real


def _git_folder_files(ctx: Ctx) -> list:
    """The regular files of the git folder (a copy of the fix left there, `.git/calc.py.bak`, is read by `cat`
    as well as any worktree file; git's own files are compressed or binary and never equal one)."""
    folders = [f for f in dict.fromkeys((ctx.gitdir, ctx.origin_gitdir)) if f is not None]
    return [(folder, fe) for folder in folders[:1] for fe in walk(folder) if stat.S_ISREG(fe.st.st_mode)]


def _places(ctx: Ctx, ff: FixedFile, problems: list[str], git_files: list) -> list[dict]:
    repo = ctx.repo if ctx.gitdir is not None else None  # no repository: the files alone
    hexlen = repo.hexlen if repo is not None else 40
    blob = ff.blob
    places: list[dict] = []
    if repo is not None and repo.has(blob):
        if repo.in_hist(blob):
            places.append({"place": "store", "in_base_history": True, "severity": "medium"})
        else:
            holders = sorted(c for c, info in repo.commits.items()
                             if not repo.in_hist(c) and blob in info.rblobs.values())
            places.append({"place": "store", "in_base_history": False,
                           "label": repo.labels.get(unhex(blob), "unreachable"),
                           "storage": repo.storage.get(unhex(blob), "unknown"),
                           "commits": capped(holders, ctx.max_items), "severity": "critical"})
    for rel, gitdir in ctx.nested_gitdirs():
        sub, _, incomplete = ctx.nested(rel, gitdir)
        if sub is not None and sub.has(blob):
            places.append({"place": "nested-store", "store": rel, "severity": "critical"})
        elif sub is None and incomplete:  # its objects are unknown: the blob may sit there
            problems.append(f"nested store {rel} not read ({incomplete[0].split(': ', 1)[1]})")
    if repo is not None and repo.index is not None:
        for e in repo.index.entries:
            if e.oid == blob:
                places.append({"place": "index", "path": e.path, "stage": e.stage, "severity": "critical"})
        for path, stages in repo.index.reuc:
            for stage, oid in stages:
                if oid == blob:
                    places.append({"place": "index-reuc", "path": path, "stage": stage, "severity": "critical"})
    link = worktree_link(ctx, ff.path)
    if link is not None:
        text, problem, real = link
        if problem is not None:  # what the agent reads at this path cannot be checked: never `clean`
            problems.append(f"{ff.path} is {problem}")
        elif real is not None and ff.size is not None and _hash_file(ctx, real, ff.size, hexlen) == blob:
            places.append({"place": "worktree", "path": ff.path, "via_symlink": text, "severity": "critical"})
    if ff.size is not None:
        for fe in ctx.files():
            if not stat.S_ISREG(fe.st.st_mode) or fe.st.st_size != ff.size:
                continue
            if _hash_file(ctx, fe.path, ff.size, hexlen) == blob:
                place = "worktree" if ctx.in_worktree(fe.rel) == ff.path else "file"
                places.append({"place": place, "path": ctx.shown(fe.rel), "severity": "critical"})
                ctx.exact_copies[fe.rel] = ff.kind
        for _, fe in git_files:
            if fe.st.st_size == ff.size and _hash_file(ctx, fe.path, ff.size, hexlen) == blob:
                places.append({"place": "file", "path": ctx.gp(fe.rel), "severity": "critical"})
    return places


def _describe(p: dict) -> str:
    if p["place"] == "store":
        return "object store (base history)" if p["in_base_history"] else f"object store ({p['label']})"
    if p["place"] == "nested-store":
        return f"nested store {p['store']}"
    if p["place"] in ("index", "index-reuc"):
        return f"index stage {p['stage']}"
    return p["path"]


def _check(ctx: Ctx, kind: str, check: str) -> list[Finding]:
    ref = ctx.reference
    if not ref.given:
        raise NotApplicable("no reference given (--fix, --tests or --instance)")
    if not (ref.fix if kind == "fix" else ref.tests):
        raise NotApplicable("no fix given" if kind == "fix" else "no hidden tests given (--tests)")
    repo = ctx.repo if ctx.gitdir is not None else None  # Incomplete when git cannot read the repo
    out: list[Finding] = []
    problems = []
    git_files = _git_folder_files(ctx) if any(f.size is not None for f in ref.fixed if f.kind == kind) else []
    for ff in sorted((f for f in ref.fixed if f.kind == kind), key=lambda f: f.path):
        if ff.status == "incomplete":
            problems.append(ff.reason or ff.path)
            continue
        if ff.status != "ok":
            continue
        places = _places(ctx, ff, problems, git_files)
        if not places:
            continue
        places = worst_first(places)
        sev = worst(p["severity"] for p in places)
        top = next(p for p in places if p["severity"] == sev)
        in_base = all(p.get("in_base_history") for p in places)
        title = (f"fixed {ff.path} = blob {short(ff.blob)} found in "
                 + ", ".join(dict.fromkeys(_describe(p) for p in places)))
        out.append(ctx.finding(
            check, ff.path, sev, "content", title, _describe(top),
            {"path": ff.path, "blob": ff.blob, "in_base_history": in_base, **capped(places, ctx.max_items)},
            f"git cat-file -p {short(ff.blob)}",
            hint="a revert-type fix or a synthetic-bug task restores a blob of base history" if in_base else None))
    if kind == "fix" and ref.fix_commit and repo is not None:
        fc = ref.fix_commit
        hits = sorted(o.hex() for o in repo.nonbase if o.hex().startswith(fc) and repo.all[o][0] == "commit")
        if hits:
            out.append(ctx.finding(check, f"fix-commit:{fc[:12]}", "critical", "content",
                                   f"the fix commit {short(hits[0])} is in the store", "object store",
                                   {"fix_commit": fc, "found": hits}, f"git cat-file -p {short(hits[0])}"))
    if problems:
        raise Incomplete("; ".join(dict.fromkeys(problems)), out)
    return out


def check_f1(ctx: Ctx) -> list[Finding]:
    """Fixed source blobs (the fix patch and fixed files)."""
    return _check(ctx, "fix", "F1")


def check_f2(ctx: Ctx) -> list[Finding]:
    """Hidden-test blobs (the test patch and hidden test files)."""
    return _check(ctx, "tests", "F2")
