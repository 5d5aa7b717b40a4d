"""Reading objects of a git store for the audit (G6): commit and tag contents through
``cat-file --batch``, paths touched through ``diff-tree --stdin``, blobs at given paths level by level,
and the in-process walks over NONBASE commits (reach, descends-from-base).

A mixin of ``repo.GitRepo``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import files as gf
from .files import unhex

BATCH = 5000


@dataclass
class CommitInfo:
    oid: str
    commit: gf.Commit
    paths: list[str] | None = None  # touched vs the first parent; None when unknown
    rchanges: dict[str, str | None] | None = None  # reference path -> new blob (None: deleted) in that diff
    rblobs: dict[str, str] = field(default_factory=dict)  # reference path -> blob id in its tree


class ObjectReader:
    """Mixin: needs ``all``, ``runner``, ``gitdir``, ``hexlen``, ``nonbase``, ``in_hist``, ``has``, ``type_of``."""

    def read_objects(self, oids: list[str], *, max_size: int = 16 << 20) -> dict[str, tuple[str, bytes]]:
        """Raw content of the given objects (``cat-file --batch``); larger or absent ones are left out."""
        return {o: (t, d) for o, t, d in self.iter_objects(oids, max_size=max_size, budget=256 << 20)}

    def iter_objects(self, oids: list[str], *, max_size: int = 16 << 20,
                     budget: int = 64 << 20) -> Iterator[tuple[str, str, bytes]]:
        """``(oid, type, data)`` of the given objects in the given order, read in ``cat-file --batch`` calls
        of at most ``budget`` content bytes each (by the sizes the store listed), so memory holds one
        call's output however many objects there are. Larger or absent objects are left out, as in
        ``read_objects``."""
        chunk: list[str] = []
        size = 0
        for o in dict.fromkeys(oids):
            t = self.all.get(unhex(o)) if re.fullmatch(r"[0-9a-f]+", o or "") else None
            if not t or t[1] > max_size:
                continue
            if chunk and (size + t[1] > budget or len(chunk) >= BATCH):
                yield from self._batch(chunk)
                chunk, size = [], 0
            chunk.append(o)
            size += t[1]
        if chunk:
            yield from self._batch(chunk)

    def _batch(self, chunk: list[str]) -> Iterator[tuple[str, str, bytes]]:
        res = self.runner.run(["cat-file", "--batch"], git_dir=self.gitdir,
                              input="".join(f"{o}\n" for o in chunk).encode())
        data = memoryview(res.stdout)
        pos = 0
        while pos < len(data):
            nl = res.stdout.find(b"\n", pos)
            if nl < 0:
                break
            header = res.stdout[pos:nl].split(b" ")
            pos = nl + 1
            if len(header) != 3:
                continue
            size = int(header[2])
            yield header[0].decode(), header[1].decode(), bytes(data[pos : pos + size])
            pos += size + 1

    def _load_commits(self) -> None:
        nonbase_commits = [o.hex() for o in self.nonbase if self.all[o][0] == "commit"]
        tags = [o.hex() for o in self.nonbase if self.all[o][0] == "tag"]
        extra = [x for x in [self.base, self.head.oid if self.head else None, *self.setup] if x and self.has(x)]
        wanted = sorted(set(nonbase_commits) | set(extra))
        raw = self.read_objects(wanted + sorted(tags))
        for oid, (typ, data) in raw.items():
            try:
                if typ == "commit":
                    self.commits[oid] = CommitInfo(oid, gf.parse_commit(data, oid))
                elif typ == "tag":
                    self.tags[oid] = gf.parse_tag(data, oid)
            except gf.ParseError as exc:
                self.parse_errors.append(str(exc))
        # also the tags named by refs whose object sits in HIST's neighbourhood (annotated tags are never in HIST)
        ref_tags = [r.oid for r in self.refs.values()
                    if r.oid and self.type_of(r.oid) == "tag" and r.oid not in self.tags]
        for oid, (_, data) in self.read_objects(ref_tags).items():
            try:
                self.tags[oid] = gf.parse_tag(data, oid)
            except gf.ParseError as exc:
                self.parse_errors.append(str(exc))
        self._load_paths([c for c in self.commits if c != self.base])

    def _load_paths(self, oids: list[str]) -> None:
        """Paths each commit touches vs its first parent, and the new blob IDs at the reference paths."""
        lines, order = [], []
        for oid in sorted(oids):
            info = self.commits[oid]
            parents = info.commit.parents
            if not self.has(info.commit.tree):
                continue
            if parents and not (self.has(parents[0]) and self.type_of(parents[0]) == "commit"):
                continue
            lines.append(f"{oid} {parents[0]}" if parents else oid)
            order.append(oid)
        if not lines:
            return
        res = self.runner.run(["diff-tree", "--no-ext-diff", "--no-textconv", "--no-renames", "--stdin", "-r",
                               "--raw", "-z", "--root", "--always"], git_dir=self.gitdir,
                              input="\n".join(lines).encode() + b"\n")
        rpaths = self.rpaths
        tokens = iter(res.stdout.split(b"\0"))
        idx = 0
        current = None
        for tok in tokens:
            if tok.startswith(b":") and current is not None:
                meta = tok.split(b" ")
                path = next(tokens, b"").decode("utf-8", "backslashreplace")
                current.paths.append(path)
                if path in rpaths and len(meta) >= 4:
                    new = meta[3].decode("ascii", "replace")
                    current.rchanges[path] = None if set(new) == {"0"} else new
            elif tok:
                s = tok.decode("utf-8", "backslashreplace")
                if idx < len(order) and s == order[idx]:
                    current = self.commits[order[idx]]
                    current.paths, current.rchanges = [], {}
                    idx += 1

    def compute_rblobs(self, paths: list[str] | set[str]) -> None:
        """Blob IDs at the reference paths in every loaded commit's tree, without reading whole trees.

        A commit's blobs are its first parent's, updated by its own diff-tree changes; the trees are read
        (level by level) only for the boundary: parents outside the loaded set and commits without a diff.
        """
        paths = sorted(set(paths))
        if not paths:
            return
        loaded = self.commits
        boundary = set()
        for c, info in loaded.items():
            parents = info.commit.parents
            if info.rchanges is None:
                boundary.add(c)
            elif parents and parents[0] not in loaded:
                boundary.add(parents[0])
        base_map = self.blobs_at(sorted(boundary), paths)
        done: dict[str, dict[str, str]] = {}
        for start in sorted(loaded):
            stack = [start]
            while stack:
                c = stack[-1]
                if c in done:
                    stack.pop()
                    continue
                info = loaded[c]
                parent = info.commit.parents[0] if info.commit.parents else None
                if info.rchanges is not None and parent in loaded and parent not in done:
                    stack.append(parent)
                    continue
                stack.pop()
                if info.rchanges is None:
                    blobs = dict(base_map.get(c, {}))
                else:
                    blobs = dict(done[parent] if parent in loaded else base_map.get(parent, {}) if parent else {})
                    for path, blob in info.rchanges.items():
                        if blob is None:
                            blobs.pop(path, None)
                        else:
                            blobs[path] = blob
                done[c] = blobs
                info.rblobs = blobs

    def blobs_at(self, commits: list[str], paths: list[str], *, gitlinks: bool = False) -> dict[str, dict[str, str]]:
        """For each commit, the blob IDs at ``paths`` in its tree (level by level, one batch per depth);
        with ``gitlinks``, the commit IDs of submodule entries instead."""
        result: dict[str, dict[str, str]] = {c: {} for c in commits}
        if not paths:
            return result
        trees: dict[str, list[tuple[int, str, str]]] = {}
        # state: (commit, path, components left, current tree id)
        todo = []
        for c in commits:
            info = self.commits.get(c)
            if info is not None:
                for p in paths:
                    todo.append((c, p, p.split("/"), info.commit.tree))
        while todo:
            need = sorted({t for _, _, _, t in todo if t not in trees})
            for oid, (typ, data) in self.read_objects(need).items():
                if typ == "tree":
                    try:
                        trees[oid] = gf.parse_tree(data, self.hexlen // 2, oid)
                    except gf.ParseError as exc:
                        self.parse_errors.append(str(exc))
            nxt = []
            for c, p, comps, tree in todo:
                entries = trees.get(tree)
                if entries is None:
                    continue
                hit = next((e for e in entries if e[1] == comps[0]), None)
                if hit is None:
                    continue
                mode, _, oid = hit
                if len(comps) == 1:
                    if (mode == 0o160000) if gitlinks else mode not in (0o40000, 0o160000):
                        result[c][p] = oid
                elif mode == 0o40000:
                    nxt.append((c, p, comps[1:], oid))
            todo = nxt
        return result

    # ------------------------------------------------------------------------------------ graph
    def nonbase_commit_ids(self) -> list[str]:
        return sorted(o for o in self.commits if not self.in_hist(o))

    def peel(self, oid: str, depth: int = 0) -> str:
        tag = self.tags.get(oid)
        if tag is not None and depth < 10:
            return self.peel(tag.object, depth + 1)
        return oid

    def reach(self, oid: str) -> set[str]:
        """The NONBASE commits reachable from ``oid`` (tags peeled), walked in process."""
        start = self.peel(oid)
        out: set[str] = set()
        stack = [start]
        while stack:
            c = stack.pop()
            if c in out or self.in_hist(c) or c not in self.commits:
                continue
            out.add(c)
            stack.extend(self.commits[c].commit.parents)
        return out

    def predates_base(self, commit: str) -> bool:
        """A loaded commit dated (author and committer) before B that does not descend from B: history an
        upstream clone carries from before the task (old release branches), not the task's future."""
        info, base = self.commits.get(commit), self.commits.get(self.base or "")
        if info is None or base is None or base.commit.committer_time is None:
            return False
        c, limit = info.commit, base.commit.committer_time
        if c.committer_time is None or c.author_time is None:
            return False
        return c.committer_time < limit and c.author_time < limit and commit not in self.descends_from_base()

    def descends_from_base(self) -> set[str]:
        """NONBASE commits that have B (or a setup commit) among their ancestors."""
        if hasattr(self, "_desc"):
            return self._desc
        roots = set([self.base] if self.base else []) | set(self.setup)
        memo: dict[str, bool] = {}
        ids = self.nonbase_commit_ids()
        for start in ids:
            stack = [(start, False)]
            while stack:
                c, expanded = stack.pop()
                if c in memo:
                    continue
                parents = self.commits[c].commit.parents if c in self.commits else []
                if not expanded:
                    stack.append((c, True))
                    for p in parents:
                        if p not in memo and p in self.commits and not self.in_hist(p):
                            stack.append((p, False))
                    continue
                memo[c] = any(p in roots or memo.get(p, False) for p in parents)
        self._desc = {c for c in ids if memo.get(c)}
        return self._desc
