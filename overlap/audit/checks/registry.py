"""The check registry and its running on one target: each check's needs, its verdict, nested stores.

Each check is registered as ``Check(id, needs, run)``; unmet needs give ``not_applicable`` with the
reason (or ``incomplete`` when git cannot read the repository), so ``checks[]`` always names every
check. A nested git store is audited here too (``run_nested``), handed to every ``Ctx`` by the run as its
``nested_runner``: the checks that descend reach it through ``ctx.nested`` and never import this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..context import Ctx, Incomplete, NotApplicable
from ..git.cmd import GitError
from ..git.files import ParseError
from ..model import CHECK_IDS, CheckResult, Finding
from ..targets import private_gitdir
from ..wording import cut
from . import builds, fixed, git, gitmeta, leftovers, near, poc, times
from . import image as imagechecks


@dataclass(frozen=True)
class Check:
    id: str
    needs: frozenset[str]
    run: Callable[[Ctx], list[Finding]] | None  # None: not implemented yet


def _c(cid: str, needs: Iterable[str], fn) -> Check:
    return Check(cid, frozenset(needs), fn)


CHECKS: tuple[Check, ...] = (
    _c("G1", {"git"}, git.check_g1), _c("G2", {"git"}, git.check_g2), _c("G3", {"git"}, git.check_g3),
    _c("G4", {"git"}, git.check_g4), _c("G5", {"git"}, git.check_g5), _c("G6", {"git"}, git.check_g6),
    _c("G7", {"git"}, git.check_g7), _c("G8", {"git"}, git.check_g8), _c("G9", {"git"}, gitmeta.check_g9),
    _c("G10", {"git"}, gitmeta.check_g10), _c("G11", {"git"}, gitmeta.check_g11),
    _c("G12", {"git"}, gitmeta.check_g12), _c("G13", {"git"}, gitmeta.check_g13),
    _c("G14", {"git"}, gitmeta.check_g14), _c("G15", set(), gitmeta.check_g15),
    _c("F1", {"reference"}, fixed.check_f1), _c("F2", {"reference"}, fixed.check_f2),
    _c("F3", {"reference"}, near.check_f3),
    _c("T1", set(), times.check_t1), _c("T2", set(), times.check_t2), _c("T3", {"image"}, imagechecks.check_t3),
    _c("L1", set(), leftovers.check_l1), _c("L2", set(), leftovers.check_l2), _c("L3", set(), leftovers.check_l3),
    _c("L4", set(), leftovers.check_l4), _c("L5", set(), leftovers.check_l5), _c("L6", set(), leftovers.check_l6),
    _c("L7", set(), leftovers.check_l7), _c("L8", {"image"}, imagechecks.check_l8), _c("L9", set(), leftovers.check_l9),
    _c("L10", set(), leftovers.check_l10), _c("L11", {"image"}, imagechecks.check_l11),
    _c("B1", set(), builds.check_b1), _c("P1", set(), poc.check_p1), _c("P2", set(), poc.check_p2),
)
assert tuple(c.id for c in CHECKS) == tuple(cid for cid, _ in CHECK_IDS)
# a nested store gets G1–G12 against its own base (G13), and G14: a submodule moved past its gitlink
GIT_STORE_CHECKS = tuple(c for c in CHECKS if c.id in {f"G{i}" for i in (*range(1, 13), 14)})

# parse errors of git files, attributed to the check that reads the file
_PARSE_OWNER = (("logs/", "G2"), ("worktrees/", "G8"), ("packed-refs", "G1"), ("refs/", "G1"), ("HEAD", "G1"),
                ("FETCH_HEAD", "G4"), ("info/refs", "G4"), ("index", "G7"), ("objects/info/commit-graph", "G12"),
                ("objects/pack/multi-pack-index", "G12"), ("info/grafts", "G11"), ("shallow", "G11"))


def _owner(message: str) -> str:
    for prefix, cid in _PARSE_OWNER:
        if message.startswith(prefix):
            return cid
    return "G5" if ".idx" in message else "G6"


def run_check(ctx: Ctx, check: Check) -> tuple[CheckResult, list[Finding]]:
    res = CheckResult(check.id)
    findings: list[Finding] = []
    try:
        if ctx.limit_hit:
            raise Incomplete(ctx.limit_hit)
        if "image" in check.needs and ctx.image is None:
            raise NotApplicable("only for image archives")
        if check.run is None:
            raise NotApplicable("not implemented yet")
        if "reference" in check.needs and not ctx.reference.given:
            raise NotApplicable("no reference given (--fix, --tests or --instance)")
        if "git" in check.needs:
            _ = ctx.repo  # NotApplicable without git, Incomplete when git cannot read it
        findings = check.run(ctx)
        if ctx.partial_input:  # what it found stands; what it could not see keeps the verdict off `clean`
            res.status, res.reason = "incomplete", ctx.partial_input
        elif "git" in check.needs and ctx._repo is not None and (gaps := ctx._repo.store_gaps()):
            res.status, res.reason = "incomplete", gaps
    except NotApplicable as exc:
        res.status, res.reason = "not_applicable", exc.reason
    except Incomplete as exc:
        res.status, res.reason = "incomplete", exc.reason
        findings = exc.findings
    except GitError as exc:
        res.status, res.reason = "incomplete", exc.reason
    except ParseError as exc:
        res.status, res.reason = "incomplete", str(exc)
    if res.reason:
        res.reason = _public_paths(ctx, res.reason)
    res.findings = len(findings)
    return res, findings


def _public_paths(ctx: Ctx, text: str) -> str:
    """``text`` with each path under the private folder named as the report names it: git quotes the file it
    failed on (`stored in /tmp/overlap-audit-…/view/testbed/.git/objects/pack/…`), and the report must name no
    temporary path (the JSON is deterministic)."""
    private = str(ctx.private)
    if private not in text:
        return text

    def shown(m: re.Match) -> str:
        named = ctx._shown_store_path(Path(m.group(0)))
        return named if private not in named else "…/" + Path(m.group(0)).name

    return re.sub(re.escape(private) + r"(?:/[^\s()'\"]*)?", shown, text)


def run_checks(ctx: Ctx, checks: Iterable[Check]) -> tuple[list[CheckResult], list[Finding]]:
    results, findings = [], []
    for check in checks:
        res, found = run_check(ctx, check)
        results.append(res)
        findings.extend(found)
    repo = ctx._repo
    if repo is not None and repo.parse_errors:
        by_id = {r.id: r for r in results}
        for msg in repo.parse_errors:
            r = by_id.get(_owner(msg))
            if r is None or r.status == "not_applicable":
                continue
            if r.status != "incomplete":
                r.status, r.reason = "incomplete", msg
            elif msg not in (r.reason or ""):
                r.reason = f"{r.reason}; {msg}"
    keys: dict[str, int] = {}
    for f in findings:  # keys must be unique within a target
        n = keys.get(f.key, 0)
        keys[f.key] = n + 1
        if n:
            f.subject = f"{f.subject}#{n + 1}"
    return results, findings


def _git_view(gitdir: Path | None, fsroot: Path | None, private: Path, git_error: str | None):
    """(git folder for git, dropped alternates, their image names, git error) of a store inside a root
    filesystem or image: alternates, ``commondir`` and ``gitdir`` are rewritten into a private copy;
    a common folder that is not in the input blocks git (its host namesake is never read)."""
    dropped: list[str] = []
    alt_names: dict[str, str] = {}
    if fsroot is None or gitdir is None:
        return gitdir, dropped, alt_names, git_error
    missing: list[tuple[str, str]] = []
    gitdir = private_gitdir(gitdir, fsroot, private, dropped, alt_names, missing)
    lost = [f"{file} names {cut(line, 80)}" for file, line in missing if file.endswith("/commondir")]
    if lost and not git_error:
        git_error = "a linked worktree's common git folder is not in the input: " + lost[0]
    return gitdir, dropped, alt_names, git_error


def submodule_base(ctx: Ctx, rel: str) -> str | None:
    """A checked-out submodule's base: the gitlink at its path in B's tree (None: use its own HEAD)."""
    repo = ctx._repo
    if repo is None or not repo.base or repo.base not in repo.commits or not rel.endswith("/.git"):
        return None
    path = ctx.in_worktree(rel[:-5].lstrip("/") if ctx.fsroot is not None else rel[:-5])
    if not path:
        return None
    return repo.blobs_at([repo.base], [path], gitlinks=True)[repo.base].get(path)


def run_nested(ctx: Ctx, rel: str, gitdir: Path):
    """Audit a nested git store (G1–G12) against its own base: the gitlink in B's tree for a submodule,
    else its HEAD; cached per target. Handed to every ``Ctx`` as ``nested_runner`` (``ctx.nested``), so the
    checks that descend (F1, F2, G13) reach it without importing this module."""
    cache = ctx.__dict__.setdefault("_nested_cache", {})
    if rel not in cache:
        base = submodule_base(ctx, rel)
        # a store inside an image or rootfs names image paths (alternates, commondir): rewritten like the main one
        view, dropped, alt_names, git_error = _git_view(gitdir, ctx.fsroot, ctx.private, ctx.git_error)
        sub = Ctx(kind="nested", path=rel, root=None, gitdir=view, runner=ctx.runner, private=ctx.private,
                  reference=ctx.reference, network=ctx.network, limits=ctx.limits, git_version=ctx.git_version,
                  git_error=git_error, nested_depth=ctx.nested_depth + 1, base_arg=base,
                  base_source="argument" if base else "HEAD", fsroot=ctx.fsroot, origin_gitdir=gitdir,
                  dropped_alternates=dropped, alt_names=alt_names, tree=ctx.tree or ctx.scope,
                  nested_runner=ctx.nested_runner)
        results, findings = run_checks(sub, GIT_STORE_CHECKS)
        incomplete = [f"{r.id}: {r.reason}" for r in results if r.status == "incomplete"]
        cache[rel] = (sub._repo, findings, incomplete)
    return cache[rel]
