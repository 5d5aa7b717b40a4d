"""The shared grading rules (docs/audit.md, Severity and verdicts): how bad a commit, an object ID or a blob is.

A mixin of ``context.Ctx`` (it uses ``self.repo``, ``self._repo``, ``self.reference``, ``self.network``,
``self.limits`` and ``self.max_items``): every check grades what it finds the same way through ``ctx``.
"""

from __future__ import annotations

from typing import Any

from .content.matchers import distinctive_hunks, holds, stripped_lines
from .git import files as gf
from .model import worst
from .wording import cut, iso

SIDE_HISTORY_NOTE = ("dated before the base, never reaching it, holding no fixed blob nor the fix's hunks: the "
                     "base's past (an old release, upstream history), not its future")


class Grading:
    """The grades of ``Ctx``: an absent object ID, a commit, the content an object makes reachable."""

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
