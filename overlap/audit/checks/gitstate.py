"""Git route, G4: pseudo-refs and operation state (``ORIG_HEAD``, ``FETCH_HEAD``,
``MERGE_HEAD``…, ``info/refs``, rebase and sequencer folders, ``rr-cache``, ``lost-found``, commit messages).

An ID named here whose object is absent is graded by ``ctx.sha_only`` (what it adds to the declared
network access); one whose object is present takes the grade of what it reaches, like any entry point.
"""

from __future__ import annotations

from collections import defaultdict

from ...words import plural
from ..context import Ctx
from ..git import files as gf
from ..grading import SIDE_HISTORY_NOTE
from ..model import Finding, worst
from ..tree import walk
from ..wording import capped, cut, short
from .rank import worst_first

MESSAGE_FILES = ("COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG")


def _norm_message(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines() if not ln.startswith("#")]
    return "\n".join(lines).strip()


def check_g4(ctx: Ctx) -> list[Finding]:
    """Pseudo-refs and operation state: ORIG_HEAD, FETCH_HEAD, MERGE_HEAD…, rebase/sequencer folders, messages."""
    repo = ctx.repo
    by_file: dict[str, list[str]] = defaultdict(list)
    for e in repo.entries:
        if e.group == "pseudo-ref":
            by_file[e.source.split(":", 1)[0]].append(e.oid)
    fetch_desc: dict[str, list[gf.FetchHeadLine]] = {}
    for rel in [f for f in by_file if f.endswith("FETCH_HEAD")]:
        data = repo.read(rel, common=rel.startswith("worktrees/"))
        try:
            fetch_desc[rel] = gf.parse_fetch_head(data or b"", rel)
        except gf.ParseError:
            fetch_desc[rel] = []
    heads = {"": repo.head.oid if repo.head else None}
    for w in repo.worktrees:
        ref = repo.refs.get(f"worktrees/{w}/HEAD")
        heads[f"worktrees/{w}/"] = ref.oid if ref else None
    named = _named_by_refs(ctx)
    out = []
    for rel, oids in sorted(by_file.items()):
        recs, sevs = [], []
        folder = "/".join(rel.split("/")[:2]) + "/" if rel.startswith("worktrees/") else ""
        for oid in dict.fromkeys(oids):
            if repo.in_hist(oid):
                continue
            if rel == "info/refs" and oid in named:
                continue  # a copy of a ref G1 reports; only ids no ref names any more add anything
            sev = ctx.grade_oid(oid)
            if sev is None:
                continue
            if oid == heads.get(folder):
                sev = "info"  # the same object as that folder's HEAD: nothing beyond G1/G8
            peeled = repo.peel(oid)
            rec = {"sha": oid, "object_present": repo.has(oid), "is_fix_commit": ctx.is_fix_commit(peeled),
                   "severity": sev}
            for line in fetch_desc.get(rel, []):
                if line.oid == oid:
                    rec["description"] = cut(line.description)
                    rec["not_for_merge"] = line.not_for_merge
            info = repo.commits.get(peeled)
            if info is not None:
                rec["subject"] = cut(info.commit.subject)
                if sev == "info" and oid != heads.get(folder) and repo.predates_base(peeled):
                    rec["note"] = SIDE_HISTORY_NOTE
            recs.append(rec)
            sevs.append(sev)
        if not recs:
            continue
        sev = worst(sevs)
        recs = worst_first(recs)
        where = ctx.gp(rel)
        present = any(r["object_present"] for r in recs)
        absent = [r for r in recs if not r["object_present"]]
        title = (f"{rel} names {plural(len(recs), 'object')} outside base history"
                 + (f", {len(absent)} absent ({_absent_note(ctx)})" if absent else ""))
        out.append(ctx.finding("G4", rel, sev, "content" if present else "metadata", title, where,
                               {"file": where, **capped(recs, ctx.max_items)}, f"cat {ctx.q(where)}"))
    out += _g4_state(ctx)
    return out


def _named_by_refs(ctx: Ctx) -> set[str]:
    """Every ID a current ref names (its target and the commit it peels to)."""
    repo = ctx.repo
    out: set[str] = set()
    for ref in repo.refs.values():
        for oid in (ref.oid, ref.peeled):
            if oid:
                out.add(oid)
                out.add(repo.peel(oid))
    return out


def _absent_note(ctx: Ctx) -> str:
    if ctx.network != "any":
        return "an ID only: nothing to read offline"
    if ctx.remote_configured():
        return "fetchable from the configured remote"
    return "an ID only: fetchable only from a forge the agent knows"


def _g4_state(ctx: Ctx) -> list[Finding]:
    """Operation folders, rr-cache, lost-found and commit messages that no HIST commit carries."""
    repo = ctx.repo
    out = []
    for d in ("rebase-apply", "rebase-merge", "sequencer", "rr-cache", "lost-found"):
        folder = (repo.common if d in ("rr-cache", "lost-found") else repo.gitdir) / d
        if not folder.is_dir() or folder.is_symlink():
            continue
        files = [fe.rel for fe in walk(folder)]
        if not files:
            continue
        where = ctx.gp(d)
        out.append(ctx.finding(
            "G4", d, "medium", "content", f"{d}/ left in the git folder ({plural(len(files), 'file')})", where,
            {"folder": where, **capped(files, ctx.max_items)}, f"ls -R {ctx.q(where)}",
            hint="operation state can hold patch text or conflict content"))
    texts = {}
    for name in MESSAGE_FILES:
        data = repo.read(name)
        if data and _norm_message(data.decode("utf-8", "backslashreplace")):
            texts[name] = _norm_message(data.decode("utf-8", "backslashreplace"))
    if not texts:
        return out
    hist = _hist_messages(ctx)
    nonbase = {_norm_message(i.commit.message): o for o, i in repo.commits.items() if not repo.in_hist(o)}
    for name, text in sorted(texts.items()):
        if hist is not None and text in hist:
            continue
        where = ctx.gp(name)
        match = nonbase.get(text)
        sev = "info" if match else "medium"
        out.append(ctx.finding(
            "G4", name, sev, "metadata",
            f"{name} holds a message " + (f"of non-base commit {short(match)}" if match
                                            else "that no base-history commit carries"),
            where, {"file": where, "text": cut(text), "matches_commit": match}, f"cat {ctx.q(where)}"))
    return out


def _hist_messages(ctx: Ctx) -> set[str] | None:
    repo = ctx.repo
    tips = [t for t in repo.hist_tips if t]
    if not tips:
        return set()
    res = repo.runner.run(["rev-list", *tips], git_dir=repo.gitdir)
    ids = res.stdout.decode().split()
    if len(ids) > 200_000:
        return None
    msgs = set()
    for _, (typ, data) in repo.read_objects(ids).items():
        if typ == "commit":
            try:
                msgs.add(_norm_message(gf.parse_commit(data).message))
            except gf.ParseError:
                pass
    return msgs
