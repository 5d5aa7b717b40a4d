"""L9, commit IDs: hex runs in a file, a folder name or the audited path, resolved against the stores.

A mixin of ``leftovers._Scan`` (it uses ``self.ctx``, ``self.ref`` and ``self.add``): an ID that names a
commit beyond the base, or the fix commit, is graded as an ID whose object the agent may fetch.
"""

from __future__ import annotations

import posixpath
import re

from ..content.matchers import hex_runs
from ..model import worst
from ..tree import list_dir

DIGEST = re.compile(r"@sha(?:256|512):[0-9a-f]+")


class CommitIds:
    """The L9 part of the pass: which hex runs name a commit beyond the base."""

    def resolve(self, run: str) -> tuple[str, str] | None:
        """L9 resolution of a hex run: (severity, what it names) or None when it names base history."""
        ctx, fc = self.ctx, self.ref.fix_commit
        if fc and (fc.startswith(run) or run.startswith(fc)):
            return ctx.sha_only(), "fix commit"
        repo = ctx._repo
        if repo is not None:
            if any(c.startswith(run) for c in repo.nonbase_commit_ids()):
                return ctx.sha_only(), "non-base commit"
            if any(e.oid.startswith(run) and not repo.has(e.oid) and not repo.in_hist(e.oid) for e in repo.entries):
                return ctx.sha_only(), "absent commit named by a pseudo-ref"
            if any(o.startswith(run) for o in (repo.base or "", *(repo.setup or []))) or repo.rev_in_hist(run):
                return None
        if run.isdigit():
            return None
        return "info", "unresolved (pass --fix-commit to resolve)"

    def names(self) -> None:
        """L9 on top-level folder names of a root filesystem and on the audited path's own name."""
        ctx = self.ctx
        if ctx.fsroot is not None:
            for e in list_dir(ctx.fsroot):
                if e.is_dir(follow_symlinks=False) and e.name not in ("proc", "sys", "dev"):
                    self.sha_ids(f"/{e.name}/", e.name)
        name = posixpath.basename(DIGEST.sub("", ctx.path).rstrip("/"))
        self.sha_ids(f"target:{name}", name)

    def sha_ids(self, shown: str, text: str) -> None:
        graded = [(run, self.resolve(run)) for run in hex_runs(text)]
        graded = [(run, g) for run, g in graded if g is not None]
        if not graded:
            return
        sev = worst(g[0] for _, g in graded)
        self.add("L9", shown, sev, "metadata", f"{shown} holds commit IDs: " + ", ".join(
            f"{run[:12]} ({g[1]})" for run, g in graded[:3]),
            {"ids": [{"id": run, "resolves_to": g[1], "severity": g[0]} for run, g in graded][: self.ctx.max_items]},
            f"cat {self.ctx.q(shown)}")
