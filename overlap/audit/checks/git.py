"""Git route, entry-point checks G1–G8. G9–G15 are in ``gitmeta.py``.

Every check reads the scan of ``git.repo.GitRepo`` through ``ctx.repo`` and grades what an entry
point makes reachable with ``ctx.grade_oid`` (the grading rule: an entry point takes the worst severity of the
content it reaches; a SHA whose object is absent is graded by ``--network``).
"""

from __future__ import annotations

from collections import defaultdict

from ...words import plural, verb
from ..context import Ctx, Incomplete
from ..git import files as gf
from ..git.entries import LABELS
from ..grading import SIDE_HISTORY_NOTE
from ..model import SEVERITY_RANK, Finding, worst
from ..targets import checkout_exists
from ..wording import capped, cut, iso, short
from .gitstate import check_g4  # noqa: F401  (registered from here by the run)
from .rank import worst_first


def _content_class(sev: str, present: bool) -> str:
    return "content" if present else "metadata"


def _ref_record(ctx: Ctx, name: str, oid: str, packed_only: bool) -> dict:
    repo = ctx.repo
    peeled = repo.peel(oid)
    rec = {"ref": name, "target": oid, "type": repo.type_of(oid), "object_present": repo.has(oid),
           "packed_only": packed_only}
    info = repo.commits.get(peeled)
    if info is not None:
        rec["subject"] = cut(info.commit.subject)
        rec["committer_date"] = iso(info.commit.committer_time)
    rec["nonbase_commits"] = len(repo.reach(oid)) if repo.has(oid) else 0
    rec["is_fix_commit"] = ctx.is_fix_commit(peeled)
    return rec


def check_g1(ctx: Ctx) -> list[Finding]:
    """Refs beyond base, every namespace (loose, packed-refs, HEAD, worktree HEADs and refs)."""
    repo = ctx.repo
    groups: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    refs = dict(repo.refs)
    if repo.head is not None and repo.head.oid and not repo.head.symref:
        refs["HEAD"] = repo.head
    for name, ref in sorted(refs.items()):
        if ref.group not in ("refs", "worktree") or ref.symref or not ref.oid:
            continue
        peeled = ref.peeled or repo.peel(ref.oid)
        if repo.in_hist(peeled):
            continue
        sev = ctx.grade_oid(ref.oid)
        if sev is None:
            continue
        rec = _ref_record(ctx, name, ref.oid, ref.packed_only)
        rec["severity"] = sev
        groups[ref.namespace].append((sev, rec))
    out = []
    for ns, items in sorted(groups.items()):
        sev = worst(s for s, _ in items)
        recs = worst_first(sorted((r for _, r in items), key=lambda r: r["ref"]))
        present = any(r["object_present"] for r in recs)
        first = recs[0]
        cmd = (f"git cat-file -p {short(first['target'])}" if first["object_present"]
               else "cat .git/packed-refs; find .git/refs -type f")
        where = ctx.gp("packed-refs") if all(r["packed_only"] for r in recs) else ctx.gp(ns)
        old = sev in ("low", "info") and all(r["object_present"] for r in recs)
        out.append(ctx.finding(
            "G1", ns, sev, _content_class(sev, present),
            f"{plural(len(recs), 'ref')} in {ns} " + (
                f"{verb(len(recs), 'names', 'name')} only side history dated before the base" if old
                else f"{verb(len(recs), 'points', 'point')} beyond the base"), where,
            {"namespace": ns, **capped(recs, ctx.max_items),
             **({"side_history_before_base": True, "note": SIDE_HISTORY_NOTE} if old else {})}, cmd,
            related=[f"G6:{repo.labels.get(bytes.fromhex(r['target']), 'refs')}" for r in recs if r["object_present"]
                     and repo.type_of(repo.peel(r["target"])) == "commit"]))
    return out


def check_g2(ctx: Ctx) -> list[Finding]:
    """Reflogs: every old or new ID that is not in HIST (empty logs are fine)."""
    repo = ctx.repo
    out = []
    for rel, entries in sorted(repo.reflogs().items()):
        if rel == "logs/refs/stash":
            continue
        hits, sevs = [], []
        for e in entries:
            bad = [o for o in (e.old, e.new) if o not in gf.NULL_IDS and not repo.in_hist(o)]
            if not bad:
                continue
            s = worst(ctx.grade_oid(o) for o in bad)
            if s is None:
                continue
            sevs.append(s)
            hits.append({"line": e.line, "old": e.old, "new": e.new, "message": cut(e.message),
                         "object_present": all(repo.has(o) for o in bad), "severity": s})
        if not hits:
            continue
        sev = worst(sevs)
        hits = worst_first(hits)
        where = ctx.gp(rel)
        out.append(ctx.finding(
            "G2", rel, sev, _content_class(sev, any(h["object_present"] for h in hits)),
            f"{plural(len(hits), 'reflog line')} {verb(len(hits), 'names', 'name')} objects outside base history",
            where,
            {"file": where, **capped(hits, ctx.max_items)}, f"cat {ctx.q(where)}"))
    return out


def check_g3(ctx: Ctx) -> list[Finding]:
    """Stash: refs/stash and the older entries that live only in logs/refs/stash."""
    repo = ctx.repo
    stash: list[tuple[str, str, str]] = []
    log = repo.reflogs().get("logs/refs/stash")
    if log:
        for n, e in enumerate(reversed(log)):
            stash.append((f"stash@{{{n}}}", e.new, e.message))
    elif "refs/stash" in repo.refs and repo.refs["refs/stash"].oid:
        stash.append(("stash@{0}", repo.refs["refs/stash"].oid, ""))
    recs, sevs = [], []
    for name, oid, msg in stash:
        if repo.in_hist(oid):
            continue
        sev = ctx.grade_oid(oid)
        if sev is None:
            continue
        info = repo.commits.get(oid)
        paths = sorted({p for c in repo.reach(oid) for p in (repo.commits[c].paths or [])})
        recs.append({"stash": name, "sha": oid, "message": cut(msg or (info.commit.subject if info else "")),
                     "object_present": repo.has(oid), "paths": paths[: ctx.max_items],
                     "holds_fixed_blob": any(ctx.holds_fixed(c) for c in repo.reach(oid)) if ctx.reference.given
                     else None, "severity": sev})
        sevs.append(sev)
    if not recs:
        return []
    sev = worst(sevs)
    recs = worst_first(recs)
    return [ctx.finding("G3", "refs/stash", sev, _content_class(sev, True),
                        f"{len(recs)} stash entr{'y' if len(recs) == 1 else 'ies'} outside base history",
                        ctx.gp("refs/stash"), capped(recs, ctx.max_items), "git --no-pager stash list",
                        related=["G6:stash"])]


def _storage_name(where: str) -> str:
    return where.split(":", 1)[1] if where.startswith(("pack:", "cruft:", "keep:", "promisor:")) else where


def check_g5(ctx: Ctx) -> list[Finding]:
    """Unreachable NONBASE objects, one finding per storage location (loose, pack, cruft, keep, alternate)."""
    repo = ctx.repo
    fixed = ctx.fixed_blobs()
    groups: dict[str, list[bytes]] = defaultdict(list)
    for oid, label in repo.labels.items():
        if label == "unreachable":
            groups[repo.storage.get(oid, "unknown")].append(oid)
    out = []
    for where, oids in sorted(groups.items()):
        oids.sort()
        counts: dict[str, int] = defaultdict(int)
        commits, tags, fixed_hits, sevs = [], [], [], []
        for o in oids:
            typ = repo.all[o][0]
            counts[typ] += 1
            h = o.hex()
            if typ == "commit":
                commits.append(h)
            elif typ == "tag":
                tags.append(h)
            elif typ == "blob" and h in fixed:
                fixed_hits.append({"blob": h, "path": fixed[h].path, "kind": fixed[h].kind})
        sevs += [ctx.grade_oid(c) for c in commits + tags]
        if fixed_hits:
            sevs.append("critical")
        sevs.append("medium" if counts.get("commit") or counts.get("blob") else "low")
        sev = worst(sevs)
        kind = where.split(":", 1)[0] if ":" in where else where
        out.append(ctx.finding(
            "G5", where, sev, "content", f"{plural(len(oids), 'unreachable object')} outside base history ({kind})",
            _storage_name(where),
            {"storage": where, "counts": dict(sorted(counts.items())),
             "commits": capped(sorted(commits), ctx.max_items), "tags": capped(sorted(tags), ctx.max_items),
             "fixed_blobs": fixed_hits},
            f"git cat-file -p {short((commits + tags + [f['blob'] for f in fixed_hits] + [oids[0].hex()])[0])}",
            related=["G6:unreachable"] if commits else []))
    return out


def check_g6(ctx: Ctx) -> list[Finding]:
    """Every NONBASE commit whatever its date, one finding per reach label."""
    repo = ctx.repo
    by_label: dict[str, list[str]] = defaultdict(list)
    for oid in repo.nonbase_commit_ids():
        by_label[repo.labels.get(bytes.fromhex(oid), "unreachable")].append(oid)
    out = []
    for label in LABELS:
        oids = by_label.get(label)
        if not oids:
            continue
        # side history dated before the base is graded info by its entry point (G1, G2, G5): listing it
        # here again would report one old tag twice
        recs = [r for r in (ctx.commit_record(o) for o in oids)
                if not (r.get("severity") in ("info", "low") and ctx.repo.predates_base(r["sha"]))]
        if not recs:
            continue
        for r in recs:
            r["storage"] = _storage_name(repo.storage.get(bytes.fromhex(r["sha"]), "unknown"))
        recs.sort(key=lambda r: (SEVERITY_RANK[r["severity"]], r.get("committer_date") or "", r["sha"]))
        sev = worst(r["severity"] for r in recs)
        where = label if label != "unreachable" else recs[0]["storage"]
        first = recs[0]
        out.append(ctx.finding(
            "G6", label, sev, "content",
            f"{plural(len(recs), 'commit')} outside base history, reachable from {label}"
            + (f": {short(first['sha'])} \"{first.get('subject', '')}\"" if len(recs) == 1 else ""),
            where, {"label": label, **capped(recs, ctx.max_items)}, f"git cat-file -p {short(first['sha'])}"))
    return out


def check_g7(ctx: Ctx) -> list[Finding]:
    """Index: staged blobs that differ from HEAD, conflict stages, resolve-undo (REUC)."""
    repo = ctx.repo
    if repo.index is None:
        if repo.index_error:
            raise Incomplete(repo.index_error)
        return []
    index = repo.index
    if index.shared_index:
        if not (repo.gitdir / f"sharedindex.{index.shared_index}").is_file():
            raise Incomplete(f"split index: sharedindex.{index.shared_index} is missing (G15)")
        raise Incomplete("split index: entries of the shared index are not merged by this version")
    head_tree: dict[str, str] = {}
    head = repo.head.oid if repo.head else None
    if not (head and repo.has(head)):
        head = repo.base  # HEAD on a branch without a commit: the index is compared with the given base
    if head and repo.has(head):
        res = repo.runner.run(["ls-tree", "-r", "-z", head], git_dir=repo.gitdir)
        for rec in res.stdout.split(b"\0"):
            if b"\t" in rec:
                meta, path = rec.split(b"\t", 1)
                head_tree[path.decode("utf-8", "backslashreplace")] = meta.split()[-1].decode()
    fixed = ctx.fixed_blobs()
    r = ctx.reference.paths
    recs = []
    for e in index.entries:
        if e.mode == 0o160000:
            continue
        if e.stage == 0 and head_tree.get(e.path) == e.oid:
            continue
        sev = "critical" if e.oid in fixed else "high" if e.path in r else "medium"
        recs.append({"path": e.path, "stage": e.stage, "staged_blob": e.oid, "head_blob": head_tree.get(e.path),
                     "intent_to_add": e.intent_to_add, "equals_fixed": e.oid in fixed, "severity": sev})
    for path, stages in index.reuc:
        for stage, oid in stages:
            sev = "critical" if oid in fixed else "high" if path in r else "medium"
            recs.append({"path": path, "stage": stage, "staged_blob": oid, "head_blob": head_tree.get(path),
                         "reuc": True, "equals_fixed": oid in fixed, "severity": sev})
    if not recs:
        return []
    sev = worst(x["severity"] for x in recs)
    recs = worst_first(recs)
    first = recs[0]
    return [ctx.finding("G7", "index", sev, "content",
                        f"{len(recs)} index entr{'y' if len(recs) == 1 else 'ies'} differ from HEAD",
                        ctx.gp("index"), capped(recs, ctx.max_items),
                        f"git ls-files -s -- {ctx.q(first['path'])}",
                        hint="staged blobs survive gc --prune=now and pass ref-only checks")]


def check_g8(ctx: Ctx) -> list[Finding]:
    """Linked worktrees: their HEAD, checkout folder and whether it exists."""
    repo = ctx.repo
    out = []
    for w in repo.worktrees:
        head = repo.refs.get(f"worktrees/{w}/HEAD")
        gitdir = repo.read(f"worktrees/{w}/gitdir", common=True)
        checkout = gitdir.decode("utf-8", "backslashreplace").strip() if gitdir else None
        if checkout and checkout.endswith("/.git"):
            checkout = checkout[:-5]
        oid = head.oid if head else None
        sev = (ctx.grade_oid(oid) if oid else None) or "info"
        where = ctx.gp(f"worktrees/{w}")
        rec = {"name": w, "head": oid, "checkout": checkout, "path_exists": checkout_exists(ctx.fsroot, checkout),
               "object_present": bool(oid and repo.has(oid))}
        if oid and oid in repo.commits:
            rec["subject"] = cut(repo.commits[oid].commit.subject)
        out.append(ctx.finding("G8", f"worktrees/{w}", sev, "content", f"linked worktree {w}", where, rec,
                               f"cat {ctx.q(where + '/HEAD')} {ctx.q(where + '/gitdir')}",
                               related=[f"G1:worktrees/{w}"]))
    return out
