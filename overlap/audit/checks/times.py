"""File-times route: ``newest_group`` and the checks T1, T2 (T3 needs images).

``newest_group`` finds a small group of newest files set apart from the bulk: the largest gap just
below the k newest (k ≤ K), flagged when that gap is at least a minute and at least ten times the
spread of the bulk's newest part. The constants are echoed in every result.
"""

from __future__ import annotations

import hashlib
import math
import os
import stat
import statistics

from ...words import plural
from ..context import NO_REPOSITORY, Ctx, Incomplete, NotApplicable
from ..model import Finding
from ..tree import TooLarge, read_regular
from ..wording import capped, iso

PARAMS = {"min_files": 10, "k_min": 5, "k_fraction": 0.05, "k_max": 100, "min_gap_s": 60.0, "min_ratio": 10.0,
          "spread_floor_s": 1.0}

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "env", "site-packages", "__pycache__", ".tox", ".nox",
             "build", "dist", "target", ".eggs", ".gradle", ".idea", ".vscode", ".next", ".cache", "coverage",
             "htmlcov"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".o", ".so", ".a", ".class", ".dll", ".dylib", ".exe", ".log")


def group_size_cap(n: int) -> int:
    """K = min(max(5, ⌈0.05·N⌉), 100, N − 2)."""
    return min(max(PARAMS["k_min"], math.ceil(PARAMS["k_fraction"] * n)), PARAMS["k_max"], n - 2)


def newest_group(times: dict[str, float]) -> dict:
    """The steps of the T checks: the group of newest files, its gap, the bulk's spread, and whether it is flagged."""
    n = len(times)
    result: dict = {"params": dict(PARAMS), "n": n}
    if n < PARAMS["min_files"]:
        result.update(status="not_applicable", reason="too_few_files", flagged=False)
        return result
    items = sorted(times.items(), key=lambda kv: (-kv[1], kv[0]))
    t = [v for _, v in items]
    k_cap = group_size_cap(n)
    gaps = [t[k - 1] - t[k] for k in range(1, k_cap + 1)]  # gap_k = t(k) - t(k+1)
    best = max(gaps)
    k_star = gaps.index(best) + 1  # ties -> the smaller k
    bulk = t[k_star:]
    spread = max(t[k_star] - statistics.median(bulk), PARAMS["spread_floor_s"])
    ratio = best / spread
    flagged = best >= PARAMS["min_gap_s"] and ratio >= PARAMS["min_ratio"]
    others = [g for i, g in enumerate(gaps) if i != k_star - 1]
    result.update(
        status="ran", k_max=k_cap, k=k_star, gap=best, spread=spread, ratio=ratio,
        second_gap=max(others) if others else None, flagged=flagged,
        large_touched_set=flagged and k_star == k_cap,
        group=[{"path": p, "time": v} for p, v in items[:k_star]],
    )
    return result


def compare_with_reference(group: list[str], candidates: set[str], reference: set[str]) -> dict:
    """Precision, recall and Jaccard of the group against R' = R ∩ candidates."""
    r = reference & candidates
    g = set(group)
    inter = len(g & r)
    union = len(g | r)
    return {"reference_paths": sorted(r), "precision": inter / len(g) if g else 0.0,
            "recall": inter / len(r) if r else 0.0, "jaccard": inter / union if union else 0.0}


def _grade(ctx: Ctx, group: list[str], candidates: set[str]) -> tuple[str, dict]:
    if not ctx.reference.given:
        return "medium", {}
    cmp = compare_with_reference(group, candidates, ctx.reference.paths)
    return ("high" if cmp["jaccard"] >= 0.5 else "medium"), cmp


def _tracked(ctx: Ctx) -> list:
    index = ctx.index()
    if index is None:
        return []
    seen = {}
    for e in index.entries:
        if e.stage == 0 and stat.S_ISREG(e.mode) and not stat.S_ISLNK(e.mode):
            seen[e.path] = e
    return [seen[p] for p in sorted(seen)]


def _worktree_times(ctx: Ctx) -> dict[str, tuple[float, os.stat_result]]:
    """Candidates of T1: tracked regular files (lstat), or the filtered walk when there is no index."""
    out: dict[str, tuple[float, os.stat_result]] = {}
    tracked = _tracked(ctx)
    if tracked:
        for e in tracked:
            try:
                st = os.lstat(ctx.root / e.path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out[e.path] = (st.st_mtime_ns / 1e9, st)
        return out
    for fe in ctx.files():
        rel = ctx.in_worktree(fe.rel)
        if rel is None:
            continue
        parts = rel.split("/")
        if any(p in SKIP_DIRS or p.endswith(".egg-info") or (p.startswith(".") and p.endswith("_cache"))
               for p in parts[:-1]):
            continue
        if rel.endswith(SKIP_SUFFIXES) or not stat.S_ISREG(fe.st.st_mode):
            continue
        out[rel] = (fe.st.st_mtime_ns / 1e9, fe.st)
    return out


def _group_finding(ctx: Ctx, check: str, subject: str, res: dict, candidates: set[str], title: str,
                   where: str) -> Finding:
    paths = [g["path"] for g in res["group"]]
    sev, cmp = _grade(ctx, paths, candidates)
    oldest = min(g["time"] for g in res["group"])
    ev = {key: res[key] for key in ("n", "k", "k_max", "gap", "spread", "ratio", "second_gap", "large_touched_set",
                                    "params")}
    ev["group"] = [{"path": g["path"], "time": iso(g["time"])} for g in res["group"]][: ctx.max_items]
    ev.update(cmp)
    if check == "T1":
        # -newermt keeps only files strictly newer than the time: at the group's own oldest time a file
        # with a whole-second mtime is left out. A second earlier is still inside the gap (>= 60 s) that
        # sets the group apart, so the command lists the group and nothing of the bulk.
        cmd = f"find . -path ./.git -prune -o -type f -newermt '@{math.floor(oldest) - 1}' -print"
    else:  # index stat data, not the worktree's times
        cmd = f"git -c core.fsmonitor=false ls-files --debug -- {ctx.q(paths[0])}"
    return ctx.finding(check, subject, sev, "location", title, where, ev, cmd,
                       hint="sed -i in a build step or a harness checkout of the tests can also set files apart")


def check_t1(ctx: Ctx) -> list[Finding]:
    """Worktree mtimes: a small group of newest tracked files set apart from the bulk."""
    if ctx.root is None:
        raise NotApplicable("no worktree (bare repository)")
    times = _worktree_times(ctx)
    res = newest_group({p: v[0] for p, v in times.items()})
    if res["status"] != "ran":
        raise NotApplicable(f"{res['reason']} ({res['n']} candidate files)")
    if not res["flagged"]:
        return []
    title = f"{plural(res['k'], 'file')} set apart by {res['gap']:.0f} s from the rest (ratio {res['ratio']:.0f})"
    return [_group_finding(ctx, "T1", "worktree", res, set(times), title, "worktree")]


def check_t2(ctx: Ctx) -> list[Finding]:
    """Index stat data: newest group of index mtimes, and files rewritten with identical content."""
    if ctx.gitdir is None:
        raise NotApplicable(NO_REPOSITORY)
    tracked = _tracked(ctx)
    if not tracked:
        if getattr(ctx, "index_error", None):
            raise Incomplete(ctx.index_error)
        raise NotApplicable("no index")
    out = []
    res = newest_group({e.path: e.mtime for e in tracked})
    if res["status"] == "ran" and res["flagged"]:
        out.append(_group_finding(ctx, "T2", "index-times", res, {e.path for e in tracked},
                                  f"index stat data sets {plural(res['k'], 'file')} apart by {res['gap']:.0f} s",
                                  ctx.gp("index")))
    if ctx.root is None:
        return out
    dirty = []
    hexlen = 64 if len(tracked[0].oid) == 64 else 40
    for e in tracked:
        try:
            st = os.lstat(ctx.root / e.path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if e.stat_matches(st.st_size, st.st_mtime):
            continue
        try:
            data = read_regular(ctx.root / e.path, ctx.limits["spool_bytes"])
        except TooLarge:
            continue
        if data is None:
            continue
        h = hashlib.sha1() if hexlen == 40 else hashlib.sha256()
        h.update(b"blob %d\0" % len(data))
        h.update(data)
        if h.hexdigest() == e.oid:
            dirty.append({"path": e.path, "index_mtime": iso(e.mtime), "file_mtime": iso(st.st_mtime)})
    k_cap = group_size_cap(len(tracked)) if len(tracked) >= 3 else 1
    if dirty and len(dirty) <= k_cap:
        paths = [d["path"] for d in dirty]
        sev, cmp = _grade(ctx, paths, {e.path for e in tracked})
        out.append(ctx.finding(
            "T2", "stat-dirty", sev, "location",
            f"{plural(len(dirty), 'file')} rewritten with identical content after the last index refresh",
            ctx.gp("index"),
            {"k_max": k_cap, **capped(dirty, ctx.max_items), **cmp},
            f"git -c core.fsmonitor=false ls-files --debug -- {ctx.q(paths[0])}"))
    elif dirty:
        out.append(ctx.finding(
            "T2", "stat-dirty", "info", "location",
            f"worktree times rewritten after the last index refresh ({plural(len(dirty), 'file')}): a file's "
            "time alone cannot single out what changed",
            ctx.gp("index"), {"k_max": k_cap, **capped(dirty, ctx.max_items)},
            f"git -c core.fsmonitor=false ls-files --debug -- {ctx.q(dirty[0]['path'])}",
            hint="bulk copy or mtime normalisation"))
    return out
