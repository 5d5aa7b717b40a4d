"""Leftovers route and the file part of F3, in one pass over the scanned files.

Every L check and the file part of F3 share one read of each scanned file: ``_Scan`` walks the files and
hands each to the matchers of its mixins (``patches`` L1, ``caches`` L4, ``compiled`` L3/L5, ``logs`` L6/L7,
``commit_ids`` L9, ``large`` for files over the limit, ``background`` for matches outside the repository).

Scope: the root filesystem in rootfs mode, the repository folder (untracked and ignored files
included) in repo mode. Each regular file up to ``scan_file_bytes`` is read once (opened safely, ``tree.py``)
and fed to every matcher; larger ones go to ``large.py`` (archives, bundles and texts still read, the rest
counted); tracked files whose index stat data still match are not leftovers and are skipped. Findings are
keyed ``<check>:<path as shown>``.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections import defaultdict

from ...words import plural
from ..content import pyc
from ..content.archives import ARCHIVE_SUFFIXES, BUNDLE_MAGIC, HEAD_BYTES, is_archive
from ..content.fixed import blob_id
from ..content.matchers import (
    distinctive_hunks,
    fix_only_tokens,
    holds,
    looks_like_diff,
    stripped_lines,
)
from ..context import Ctx, Incomplete, NotApplicable
from ..model import Finding, worst
from ..tree import TooLarge, read_regular, walk
from ..wording import cut
from .background import Background, Outside
from .caches import Caches, cache_kind
from .commit_ids import DIGEST, CommitIds
from .compiled import Compiled
from .fixed import worktree_link
from .large import Large
from .logs import Logs
from .patches import PATCH_SUFFIXES, Patches

HIDDEN_TEST_PLACES = ("/r2e_tests/", "/root/r2e_tests/", "/tests/", "/logs/")
HIDDEN_TEST_FILES = ("/eval.sh", "/tmp/test_files.json")
META_NAMES = {"parsed_commit.json", "modified_files.json", "modified_entities.json", "expected_test_output.json",
              "execution_result.json", "task_description.md"}
TASK_KEYS = ("patch", "test_patch", "gold_patch", "fix_patch", "FAIL_TO_PASS", "PASS_TO_PASS")


class _Scan(Compiled, Caches, Large, Outside, Patches, Logs, CommitIds):
    """The one pass: findings per check id."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self.ref = ctx.reference
        self.out: dict[str, list[Finding]] = defaultdict(list)
        self.hunks, self.unusable = distinctive_hunks(self.ref, self.ref.base_texts()) if self.ref.given \
            else ([], [])
        self.tracked = self._tracked()
        self.tokens = fix_only_tokens(self.ref, self._tracked_text()) if self.ref.fix else []
        self.pycs: list[tuple[str, str, dict]] = []
        self.unscanned: list[dict] = []  # files and archive members not read (``Large.not_read``)
        self.bg = Background(self.tokens, self.hunks)  # how common the fix's strings and lines are around the repo
        self.pending: list[tuple[str, str, tuple]] = []  # matches outside the repository, graded by ``settle``

    # ---------------------------------------------------------------------------------- helpers
    def _tracked(self) -> dict:
        index = self.ctx.index()
        return {e.path: e for e in index.entries} if index is not None else {}

    def _tracked_text(self) -> str:
        root = self.ctx.root
        if root is None:
            return ""
        parts, total = [], 0
        # a task without git tracks nothing: its own files are what the fix's strings must be absent from
        paths = sorted(self.tracked) if self.tracked or self.ctx.gitdir is not None else self.ctx.task_paths()
        for path in paths:
            try:
                data = read_regular(root / path, self.ctx.limits["scan_file_bytes"])
            except TooLarge:
                continue
            if data:
                parts.append(data.decode("utf-8", "replace"))
                total += len(data)
                if total > 64 << 20:
                    break
        return "\n".join(parts)

    def add(self, check: str, shown: str, sev: str, cls: str, title: str, evidence: dict, command: str,
            hint: str | None = None) -> None:
        self.out[check].append(self.ctx.finding(check, shown, sev, cls, title, shown, evidence, command, hint=hint))


    # ------------------------------------------------------------------------------------- pass
    def run(self) -> None:
        ctx = self.ctx
        self.links: dict[str, str] = {}
        for fe in ctx.files():  # symlinks first: they decide what a hidden-test folder is visible through
            if stat.S_ISLNK(fe.st.st_mode):
                self.symlink(fe, ctx.shown(fe.rel), ctx.in_worktree(fe.rel))
        for fe in ctx.files():
            shown, wt = ctx.shown(fe.rel), ctx.in_worktree(fe.rel)
            if not stat.S_ISREG(fe.st.st_mode):
                continue
            if self._unchanged(wt, fe):
                continue  # a tracked file as checked out: not a leftover
            kind = cache_kind(shown)
            if kind is not None:
                self.cache_entry(fe, shown, kind)
                continue
            if fe.st.st_size > ctx.limits["scan_file_bytes"]:
                self.large(fe, shown, wt)
                continue
            # an archive is known by its bytes, not its name (a `.tgz`, a `.tar.xz`, a cache entry named by hash);
            # one that yields no member is read as a file. So is a git bundle (commits `git fetch` restores).
            try:
                data = read_regular(fe.path, ctx.limits["scan_file_bytes"])
            except TooLarge:
                data = None
            if data is None:
                continue
            if data.startswith(BUNDLE_MAGIC):
                self.bundle(fe, shown)
                continue
            if (fe.rel.endswith(ARCHIVE_SUFFIXES) or is_archive(data[:HEAD_BYTES])) and self.archive(fe, shown,
                                                                                          self.outside(wt)):
                continue
            self.file(fe.rel, shown, wt, data)
        self.git_folder()
        self.bytecode()
        self.names()
        self.settle()

    def git_folder(self) -> None:
        """The git folder's own text files, outside ``objects/``, read for the reference's hunks: the fix left
        in ``.git/rebase-apply/patch``, ``MERGE_MSG`` or ``.git/notes.txt`` is read by ``cat`` like any file.
        Only a match is reported (L1 patch text, F3 near copy): git's files hold diffs of past commits too, and
        what git itself means by them is G4's."""
        ctx = self.ctx
        folder = ctx.gitdir or ctx.origin_gitdir
        if not self.hunks or folder is None:
            return
        fixed = {ff.blob for ff in self.ref.fixed}
        hexlen = ctx._repo.hexlen if ctx._repo is not None else 40
        for fe in walk(folder, skip_dir=lambda rel, name: rel == "objects"):
            if not stat.S_ISREG(fe.st.st_mode) or fe.st.st_size > ctx.limits["scan_file_bytes"]:
                continue
            try:
                data = read_regular(fe.path, ctx.limits["scan_file_bytes"])
            except TooLarge:
                continue
            if not data or b"\0" in data[:8192]:
                continue
            text, shown, name = data.decode("utf-8", "replace"), ctx.gp(fe.rel), posixpath.basename(fe.rel)
            if name.endswith(PATCH_SUFFIXES) or looks_like_diff(text):
                hits = self.patch_match(text)
                if hits:
                    self.patch_graded(shown, name, hits, [], text)
            if blob_id(data, hexlen) not in fixed:  # an exact copy is F1's
                self.near_copy(shown, text)

    def file(self, rel: str, shown: str, wt: str | None, data: bytes) -> None:
        name = posixpath.basename(rel)
        text = data.decode("utf-8", "replace") if b"\0" not in data[:8192] else None
        outside = self.outside(wt)
        if outside and text is None:
            self.bg.see(data, None)
        if name.endswith(".pyc"):
            src = pyc.source_of(wt) if wt is not None else None
            if src and (src in self.tracked or src in self.ref.added_paths()):
                self.pycs.append((shown, src, {"pyc": data}))
            return
        if text is None:
            self.binary(rel, shown, name, data, outside)
            return
        exact = self.ctx.exact_copies.get(rel)
        if outside:
            self.outside_text(shown, data, text, exact)
        elif self.hunks and not exact:
            self.near_copy(shown, text)
        if name.endswith(PATCH_SUFFIXES) or looks_like_diff(text):
            self.patch(shown, name, text)
        self.hidden_tests(shown, wt, name, exact)
        if name == "SOURCES.txt" and rel.rsplit("/", 2)[-2].endswith(".egg-info"):
            added = sorted(p for p in self.ref.added_paths() if p in text.splitlines())
            if added:
                self.add("L5", shown, "high", "location", "egg-info SOURCES.txt lists files the fix adds",
                         {"paths": added}, f"cat {self.ctx.q(shown)}")
        if self.is_log(shown, name):
            self.log(shown, text)
        if self.ctx.fsroot is not None and self.is_history(shown, name):
            self.history(shown, text)
        self.metadata(shown, rel, name, text)

    def symlink(self, fe, shown: str, wt: str | None) -> None:
        if wt is None:
            return
        try:
            target = os.readlink(fe.path)
        except OSError:
            return
        self.link_out(fe, shown, wt)
        outside = target.startswith("/") or posixpath.normpath(posixpath.join(posixpath.dirname(wt), target)) \
            .startswith("..")
        if outside:
            self.links[target if target.startswith("/") else shown] = shown

    def link_out(self, fe, shown: str, wt: str) -> None:
        """Repo mode, L2: a symlink leading out of the repository shows the agent content the audit never reads
        (a fixed or hidden-test file kept outside, R2E-Gym style): reported as what it is, never `clean`."""
        link = worktree_link(self.ctx, wt)
        if link is None or link[1] is None or self._unchanged(wt, fe):
            return
        text, problem, _ = link
        at_ref = wt in self.ref.paths
        self.add("L2", shown, "medium", "location",  # unconfirmed: its target is never read
                 f"{shown} is {problem}", {"symlink": shown, "target": text, "target_read": False,
                                           "reference_path": at_ref},
                 f"ls -l {self.ctx.q(shown)}",
                 hint="a symlink committed in the base repository is fine; one added by the builder is not")

    def _unchanged(self, wt: str | None, fe) -> bool:
        """A tracked entry as checked out (index size and mtime still match): part of the base, not a leftover."""
        entry = self.tracked.get(wt) if wt is not None else None
        return entry is not None and entry.stat_matches(fe.st.st_size, fe.st.st_mtime)

    def near_copy(self, shown: str, text: str) -> None:
        lines = stripped_lines(text)
        self.near_held(shown, [h for h in self.hunks if holds(lines, h)])

    def near_held(self, shown: str, found: list) -> None:
        """F3 for a text holding the hunks ``found`` (stripped lines in order)."""
        for kind in ("fix", "tests"):
            mine = [h for h in self.hunks if h.kind == kind]
            held = [h for h in found if h.kind == kind]
            if held:
                sev = "critical" if len(held) == len(mine) else "high"
                self.add("F3", shown, sev, "content",
                         f"{shown} holds {len(held)} of {plural(len(mine), f'{kind} hunk')}",
                         {"kind": kind, "hunks": [f"{h.path} {h.header}" for h in held],
                          "lines": [cut(x, 120) for h in held for x in h.lines][: self.ctx.max_items]},
                         f"cat {self.ctx.q(shown)}")

    def hidden_tests(self, shown: str, wt: str | None, name: str, exact: str | None) -> None:
        known = shown.startswith(HIDDEN_TEST_PLACES) or shown in HIDDEN_TEST_FILES or name == "run_tests.sh"
        test_named = wt is not None and wt not in self.tracked and bool(
            re.match(r"(test_.*\.py|.*_test\.go|.*\.test\.[jt]sx?|.*Test\.java)$", name))
        if not (known or test_named or exact == "tests"):
            return
        via = [ln for tgt, ln in self.links.items() if shown.startswith(tgt.rstrip("/") + "/")]
        sev = "critical" if exact == "tests" else "high" if via else "medium"
        self.add("L2", shown, sev, "content" if exact else "location",
                 "hidden test file" + (" (the hidden tests themselves)" if exact == "tests" else ""),
                 {"known_location": known, "untracked_test_file": test_named, "equals_hidden_test": exact == "tests",
                  "visible_through": via}, f"cat {self.ctx.q(shown)}", hint=None)

    def metadata(self, shown: str, rel: str, name: str, text: str) -> None:
        meta = name in META_NAMES or "/.build_env/" in "/" + rel
        if not meta and name.endswith((".json", ".jsonl", ".yaml", ".yml")):
            meta = any(re.search(rf"[\"']?\b{k}\b[\"']?\s*:", text) for k in TASK_KEYS)
        if meta:
            hits = self.patch_match(text.replace("\\n", "\n")) if self.hunks else []
            self.add("L10", shown, "critical" if hits else "high", "content" if hits else "location",
                     "task metadata file" + (" holding the reference patch" if hits else ""),
                     {"hunks": hits}, f"cat {self.ctx.q(shown)}")
        if meta or shown == "/etc/hostname":
            self.sha_ids(shown, text)


def scan(ctx: Ctx) -> _Scan:
    if getattr(ctx, "_scan", None) is None:
        if ctx.scope is None:
            raise NotApplicable("no folder to scan (bare repository)")
        s = _Scan(ctx)
        s.run()
        ctx._scan = s
    return ctx._scan


def _check(cid: str):
    def run(ctx: Ctx) -> list[Finding]:
        return scan(ctx).out.get(cid, [])

    run.__name__ = f"check_{cid.lower()}"
    return run


check_l1, check_l2, check_l4, check_l5, check_l6, check_l10 = (
    _check(c) for c in ("L1", "L2", "L4", "L5", "L6", "L10"))



def check_l9(ctx: Ctx) -> list[Finding]:
    return scan(ctx).out.get("L9", []) + image_sha_findings(ctx)


def image_sha_findings(ctx: Ctx) -> list[Finding]:
    """L9 on an image's tags and its ref.name annotation (e.g. ``task/calc:fix-9130aa3``): none without an image."""
    if ctx.image is None:
        return []
    s = scan(ctx)
    out = []
    for tag in ctx.image.tags:
        named = DIGEST.sub("", tag)  # `name@sha256:…` pins content: a digest is no commit id
        if ":" not in named.rpartition("/")[2]:
            continue
        graded = [(run, g) for run in re.findall(r"(?<![0-9a-f])[0-9a-f]{7,64}(?![0-9a-f])", named.split(":")[-1])
                  if (g := s.resolve(run)) is not None]
        if graded:
            out.append(ctx.finding("L9", f"tag:{tag}", worst(g[0] for _, g in graded), "metadata",
                                   f"image tag {tag} holds a commit ID: " + ", ".join(f"{r[:12]} ({g[1]})"
                                                                                       for r, g in graded),
                                   "image tag", {"tag": tag, "ids": [{"id": r, "resolves_to": g[1], "severity": g[0]}
                                                                      for r, g in graded]},
                                   "docker image ls --digests", run_on="host"))
    return out


def check_l3(ctx: Ctx) -> list[Finding]:
    s = scan(ctx)
    if getattr(s, "unreadable_pyc", 0):
        raise Incomplete(f"{plural(s.unreadable_pyc, 'pyc file')} could not be read", s.out.get("L3", []))
    return s.out.get("L3", [])


def check_l7(ctx: Ctx) -> list[Finding]:
    if ctx.fsroot is None:
        raise NotApplicable("shell history lives outside the repository (rootfs or image mode only)")
    return scan(ctx).out.get("L7", [])
