"""Git route, store-level checks G9–G15: alternates, config, history rewriting,
ID-bearing metadata, nested stores, HEAD vs base, formats not understood."""

from __future__ import annotations

from collections import defaultdict

from ...words import plural
from ..context import NO_REPOSITORY, Ctx, Incomplete, NotApplicable
from ..git import binary as gb
from ..git import files as gf
from ..model import SEVERITY_RANK, Finding, worst
from ..tree import list_dir
from ..wording import capped, cut, iso, short


def check_g9(ctx: Ctx) -> list[Finding]:
    """Alternates: every line, whether its folder exists, what NONBASE objects it holds."""
    repo = ctx.repo
    out = []
    fixed = ctx.fixed_blobs()
    by_store: dict[str, list[bytes]] = defaultdict(list)
    for oid, where in repo.storage.items():
        if where.startswith("alternate:"):
            by_store[where].append(oid)
    for file, line, resolved in repo.alternates:
        key = f"alternate:{line}"
        where = ctx.gp("objects/info/alternates") if file == "objects/info/alternates" else file
        if resolved is None:
            out.append(ctx.finding("G9", line, "low", "hygiene", f"alternates line points nowhere: {cut(line, 80)}",
                                   where, {"file": where, "path": line, "exists": False},
                                   f"cat {ctx.q(where)}"))
            continue
        oids = by_store.get(key, [])
        sevs = []
        for o in oids:
            typ = repo.all[o][0]
            if typ == "blob" and o.hex() in fixed:
                sevs.append("critical")
            elif typ in ("commit", "tag"):
                sevs.append(ctx.grade_oid(o.hex()))
            else:
                sevs.append("medium")
        sev = worst(sevs) or "info"
        out.append(ctx.finding(
            "G9", line, sev, "content" if oids else "hygiene",
            f"alternate object store {cut(line, 80)}: {plural(len(oids), 'object')} outside base history", where,
            {"file": where, "path": line, "exists": True, "objects": repo.dir_counts.get(key, 0),
             "nonbase_objects": len(oids)}, f"cat {ctx.q(where)}", related=["G5:" + key] if oids else []))
    for line in ctx.dropped_alternates:
        where = ctx.gp("objects/info/alternates")
        out.append(ctx.finding("G9", line, "low", "hygiene", f"alternates line names a path not in the image: "
                               f"{cut(line, 80)}", where, {"file": where, "path": line, "exists": False,
                                                           "in_image": False}, f"cat {ctx.q(where)}",
                               hint="the host path of the same name is never read"))
    env = ((ctx.image.config.get("config") or {}).get("Env") or []) if ctx.image is not None else []
    for var in env:
        if str(var).startswith("GIT_ALTERNATE_OBJECT_DIRECTORIES="):
            paths = str(var).split("=", 1)[1].split(":")
            out.append(ctx.finding("G9", "env", "medium", "hygiene",
                                   "GIT_ALTERNATE_OBJECT_DIRECTORIES set in the image Env (not read by the audit)",
                                   "config.Env", {"paths": paths[: ctx.max_items]}, "docker inspect IMAGE",
                                   run_on="host", hint="the agent's git reads these stores; audit them separately"))
    http = repo.read("objects/info/http-alternates", common=True)
    if http:
        where = ctx.gp("objects/info/http-alternates")
        out.append(ctx.finding("G9", "http-alternates", "low", "hygiene", "http-alternates left in the store",
                               where, {"file": where, "lines": gf.parse_lines(http)[: ctx.max_items]},
                               f"cat {ctx.q(where)}"))
    return out


def check_g10(ctx: Ctx) -> list[Finding]:
    """Remotes, promisors, branch sections of deleted branches, insteadOf, submodule URLs, includes."""
    repo = ctx.repo
    net = "medium" if ctx.network == "any" else "low"
    remotes: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    branches: dict[str, dict[str, str]] = defaultdict(dict)
    other: dict[str, list[dict[str, str]]] = defaultdict(list)
    partial = None
    for key, value in repo.config:
        parts = key.split(".")
        low = key.lower()
        if parts[0].lower() == "remote" and len(parts) >= 3:
            remotes[".".join(parts[1:-1])][parts[-1].lower()].append(value)
        elif parts[0].lower() == "branch" and len(parts) >= 3:
            branches[".".join(parts[1:-1])][parts[-1].lower()] = value
        elif low == "extensions.partialclone":
            partial = value
        elif parts[0].lower() == "submodule" and low.endswith(".url"):
            other["submodule"].append({"key": key, "value": cut(value)})
        elif parts[0].lower() == "url" and low.endswith((".insteadof", ".pushinsteadof")):
            other["url"].append({"key": key, "value": cut(value)})
        elif low.startswith("include.") or low.startswith("includeif."):
            other["include"].append({"key": key, "value": cut(value)})
    where = ctx.gp("config")
    cmd = f"git config --file {ctx.q(where)} --list"
    out = []
    for name, fields in sorted(remotes.items()):
        promisor = (fields.get("promisor", ["false"])[-1].lower() in ("true", "1", "yes")) or partial == name
        ev = {"remote": name, **{k: [cut(v) for v in vs] for k, vs in sorted(fields.items())},
              "promisor": promisor, "partial_clone": partial == name}
        title = f"remote '{name}' configured" + (" as a promisor (lazy fetch)" if promisor else "")
        out.append(ctx.finding("G10", f"remote.{name}", net, "hygiene", title, where, ev, cmd,
                               hint="a git fetch (or a lazy fetch) brings the future history back"))
    existing = {n.split("/", 2)[2] for n in repo.refs if n.startswith("refs/heads/")}
    for name, fields in sorted(branches.items()):
        if name not in existing and fields:
            out.append(ctx.finding("G10", f"branch.{name}", "low", "metadata",
                                   f"config section for missing branch '{name}'", where,
                                   {"branch": name, **{k: cut(v) for k, v in sorted(fields.items())}}, cmd))
    if other.get("submodule"):
        out.append(ctx.finding("G10", "submodule", net, "hygiene", "submodule URLs configured", where,
                               capped(other["submodule"], ctx.max_items), cmd))
    for kind in ("url", "include"):
        if other.get(kind):
            out.append(ctx.finding("G10", kind, "info", "hygiene",
                                   "url rewriting configured" if kind == "url"
                                   else "config includes (reported, never followed)", where,
                                   capped(other[kind], ctx.max_items), cmd))
    if partial and partial not in remotes:
        out.append(ctx.finding("G10", "extensions.partialClone", net, "hygiene",
                               f"partial clone from remote '{partial}'", where, {"partial_clone": partial}, cmd))
    return out


def check_g11(ctx: Ctx) -> list[Finding]:
    """History rewriting: refs/replace pairs (graded by the replacement's content), grafts, shallow."""
    repo = ctx.repo
    out = []
    pairs, sevs = [], []
    for name, ref in sorted(repo.refs.items()):
        if ref.group != "replace" or not ref.oid:
            continue
        replaced = name.rsplit("/", 1)[-1]
        sev = ctx.grade_oid(ref.oid) or "medium"
        pairs.append({"ref": name, "replaced": replaced, "replacement": ref.oid,
                      "replacement_type": repo.type_of(ref.oid), "object_present": repo.has(ref.oid),
                      "equals_fixed": ref.oid in ctx.fixed_blobs(), "severity": sev})
        sevs.append(sev)
    if pairs:
        out.append(ctx.finding("G11", "refs/replace", worst(sevs), "content",
                               f"{plural(len(pairs), 'replace ref')}: git shows replaced content by default",
                               ctx.gp("refs/replace"), capped(pairs, ctx.max_items),
                               f"git cat-file -p {short(pairs[0]['replacement'])}",
                               hint="the audit runs with replacements off; the agent's git does not"))
    grafts = repo.parse(gf.parse_grafts, "info/grafts", common=True)
    if grafts:
        where = ctx.gp("info/grafts")
        # a graft line hands its parents to the agent's `git log` (the audit reads history without grafts):
        # it is graded, like a replace ref, by the content those parents make reachable
        # (never below medium, what any graft line was before)
        rows = [{"commit": c, "parents": p, "severity": worst([*(ctx.grade_oid(x) for x in p), "medium"])}
                for c, p in grafts]
        sev = worst(r["severity"] for r in rows)
        out.append(ctx.finding("G11", "info/grafts", sev, "hygiene" if sev == "medium" else "content",
                               f"{plural(len(grafts), 'graft line')}", where,
                               capped(sorted(rows, key=lambda r: SEVERITY_RANK[r["severity"]]), ctx.max_items),
                               f"cat {ctx.q(where)}",
                               hint="the audit reads history without grafts; the agent's git does not"))
    shallow = repo.parse(gf.parse_shallow, "shallow", common=True)
    if shallow:
        where = ctx.gp("shallow")
        out.append(ctx.finding("G11", "shallow", "info", "hygiene",
                               f"shallow repository ({plural(len(shallow), 'boundary commit')})", where,
                               capped(sorted(shallow), ctx.max_items), f"cat {ctx.q(where)}",
                               hint="a shallow clone at the base is normal"))
    return out


def check_g12(ctx: Ctx) -> list[Finding]:
    """IDs in commit-graph files, multi-pack-index and orphan .idx that are absent and not in HIST."""
    repo = ctx.repo
    sources: list[tuple[str, list[tuple[str, int | None]]]] = []
    graph = repo.parse(gb.parse_commit_graph, "objects/info/commit-graph", common=True)
    if graph:
        sources.append(("objects/info/commit-graph", [(g.oid, g.time) for g in graph]))
    chain = repo.parse(gb.parse_graph_chain, "objects/info/commit-graphs/commit-graph-chain", common=True)
    for h in chain or []:
        rel = f"objects/info/commit-graphs/graph-{h}.graph"
        g = repo.parse(gb.parse_commit_graph, rel, common=True)
        if g:
            sources.append((rel, [(c.oid, c.time) for c in g]))
    midx = repo.parse(gb.parse_midx, "objects/pack/multi-pack-index", common=True)
    if midx:
        sources.append(("objects/pack/multi-pack-index", [(o, None) for o in midx]))
    for f in list_dir(repo.common / "objects" / "pack"):
        if f.name.endswith(".idx") and not (repo.common / "objects" / "pack" / (f.name[:-4] + ".pack")).exists():
            rel = f"objects/pack/{f.name}"
            ids = repo.parse(gb.parse_pack_idx, rel, common=True, hashlen=repo.hexlen // 2)
            if ids:
                sources.append((rel, [(o, None) for o in ids]))
    out = []
    for rel, ids in sources:
        recs = [{"sha": o, "commit_time": iso(t), "is_fix_commit": ctx.is_fix_commit(o)}
                for o, t in ids if not repo.has(o) and not repo.in_hist(o)]
        if not recs:
            continue
        recs.sort(key=lambda r: (not r["is_fix_commit"], r["commit_time"] or "", r["sha"]))
        where = ctx.gp(rel)
        out.append(ctx.finding(
            "G12", rel, ctx.sha_only(), "metadata",
            f"{rel.rsplit('/', 1)[-1]} lists {plural(len(recs), 'object ID')} absent from the store",
            where, {"file": where, **capped(recs, ctx.max_items)},
            f"git cat-file -e {short(recs[0]['sha'])}; echo $?",
            hint="metadata only: with network, git fetch origin <sha> or the forge serves the commit"))
    return out


def check_g13(ctx: Ctx) -> list[Finding]:
    """Nested git folders (submodules, vendored clones, bare stores): their own G checks and fixed blobs."""
    if ctx.nested_depth >= 2:
        raise NotApplicable("nested store inside a nested store: not descended further")
    out: list[Finding] = []
    blocked: list[str] = []
    fixed = ctx.fixed_blobs()
    for rel, gitdir in ctx.nested_gitdirs():
        sub, findings, incomplete = ctx.nested(rel, gitdir)
        hits = []
        if sub is not None:
            for blob, ff in sorted(fixed.items()):
                if sub.has(blob):
                    hits.append({"path": ff.path, "kind": ff.kind, "blob": blob})
        sevs = [f.severity for f in findings] + (["critical"] if hits else [])
        sev = worst(s for s in sevs if s != "info") or "info"
        ev = {"path": rel, "kind": "bare" if not rel.endswith(".git") or gitdir.name != ".git" else "checkout",
              "objects": len(sub.all) if sub else None, "fixed_blobs": hits,
              "findings": [{"key": f.key, "severity": f.severity, "title": f.title} for f in findings],
              "incomplete": incomplete}
        out.append(ctx.finding("G13", rel, sev, "content", f"nested git store {rel}", rel, ev,
                               f"git --git-dir={ctx.q(rel)} count-objects -v",
                               related=[f"F1:{h['path']}" for h in hits]))
        reasons = list(dict.fromkeys(r.split(": ", 1)[1] for r in incomplete))
        if reasons:  # what a nested store hides is not known: never `clean` on it
            blocked.append(f"nested store {rel}: " + "; ".join(reasons))
    # a submodule whose git folder is gone holds no history here to leak, but the report says it was not checked
    for rel, why in ctx.lost_gitdirs():
        out.append(ctx.finding("G13", rel, "info", "hygiene", f"nested git store {rel} not checked: {why}", rel,
                               {"path": rel, "kind": "missing", "objects": None, "fixed_blobs": [], "findings": [],
                                "incomplete": [], "not_checked": why},
                               f"cat {ctx.q(rel.lstrip('/') if ctx.fsroot is not None else rel)}", run_on="host"))
    if blocked:
        raise Incomplete("; ".join(blocked), out)
    return out


def check_g14(ctx: Ctx) -> list[Finding]:
    """HEAD vs base: setup commits in B..HEAD (high when one touches R), base missing, HEAD not descending."""
    repo = ctx.repo
    out = []
    if repo.base_missing:  # an input mismatch (wrong repository or a pruned base), not something leaked
        out.append(ctx.finding("G14", "base_missing", "info", "hygiene",
                               f"input: base {short(repo.base_missing)} is not in this store; audited against "
                               f"HEAD {short(repo.head.oid if repo.head else None)} instead",
                               ctx.gp("HEAD"),
                               {"base": repo.base_missing, "head": repo.head.oid if repo.head else None,
                                "input_error": True},
                               f"git cat-file -t {short(repo.base_missing)}",
                               hint="check --base (or the record's base_commit) against this repository"))
    if not repo.head_descends and repo.head and repo.head.oid:
        out.append(ctx.finding("G14", "head_not_descendant", "medium", "hygiene",
                               "HEAD does not descend from the base", ctx.gp("HEAD"),
                               {"base": repo.base, "head": repo.head.oid},
                               f"git merge-base --is-ancestor {short(repo.base)} {short(repo.head.oid)}; echo $?"))
    if repo.setup:
        r = ctx.reference.paths
        recs = []
        for oid in repo.setup:
            info = repo.commits.get(oid)
            paths = (info.paths or []) if info else []
            touching = sorted(p for p in paths if p in r)
            recs.append({"sha": oid, "subject": cut(info.commit.subject) if info else None,
                         "committer_date": iso(info.commit.committer_time) if info else None,
                         "paths": paths[: ctx.max_items], "touches_reference": touching})
        sev = "high" if any(x["touches_reference"] for x in recs) else "info"
        out.append(ctx.finding(
            "G14", "setup_commits", sev, "content" if sev == "high" else "hygiene",
            f"{plural(len(recs), 'setup commit')} between base and HEAD"
            + (" touch the reference paths" if sev == "high" else ""), ctx.gp("HEAD"),
            {"base": repo.base, "head": repo.head.oid if repo.head else None, **capped(recs, ctx.max_items)},
            f"git --no-pager log --oneline {short(repo.base)}..{short(repo.head.oid if repo.head else '')}"))
    return out


def check_g15(ctx: Ctx) -> list[Finding]:
    """Formats not understood: reftable, unknown extensions, a newer repository format, git missing or old."""
    if ctx.gitdir is None:
        raise NotApplicable(NO_REPOSITORY)
    reasons: list[str] = []
    if ctx.git_error:
        reasons.append(ctx.git_error)
    else:
        repo, err = ctx.repo_blocked()
        if err:
            reasons.extend(repo.blocked if repo is not None and repo.blocked else [err])
    index = ctx.index()
    if index is not None and index.shared_index and not (ctx.gitdir / f"sharedindex.{index.shared_index}").is_file():
        reasons.append(f"split index: sharedindex.{index.shared_index} is missing")
    if not reasons:
        return []
    if (ctx.repo_blocked()[1] or "").startswith("git not run:"):  # entries "<path>: <what it is>"
        first = reasons[0].split(": ", 1)[0]
        return [ctx.finding("G15", "format", "info", "hygiene",
                            "git store entries refused (never opened): " + cut(reasons[0], 120), first,
                            {"reasons": reasons, "blocks": ["git", "fixed-content"]},
                            f"ls -l {ctx.q(first.lstrip('/') if ctx.fsroot is not None else first)}", run_on="host")]
    return [ctx.finding("G15", "format", "info", "hygiene",
                        "git data this version cannot read: " + cut(reasons[0], 120), ctx.gp("config"),
                        {"reasons": reasons, "blocks": ["git", "fixed-content"]},
                        f"cat {ctx.q(ctx.gp('config'))}")]
