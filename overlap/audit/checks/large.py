"""Files over ``scan_file_bytes``, and the count of what the scan could not read.

A file over the limit is not read whole. An archive is still read member by member (up to 16 ×
``archive_member_bytes``), a git bundle by its header, and a text (no NUL byte in its first 8 KiB) is streamed
line by line, up to the same 16 × ``archive_member_bytes``, through the matchers that follow lines in order: the
reference's hunks (F3 near copies, L1 patch text, L6 logs holding the fix), the diff markers and the paths a
diff touches. What is left (binaries, larger files, archive members over their limit, and in an image the files
pass 2 left sparse) is counted in ``not_scanned``, which the report shows (``stats.not_scanned``).

A mixin of ``leftovers._Scan`` (it uses ``self.ctx``, ``self.hunks``, ``self.archive``, ``self.bundle`` and the
graders of each check).
"""

from __future__ import annotations

import codecs
import os
import posixpath
import re

from ..content.archives import ARCHIVE_SUFFIXES, BUNDLE_MAGIC, HEAD_BYTES, is_archive
from ..content.matchers import HunkLines
from ..tree import open_regular, read_head

LARGE_HEAD = 8192  # as pass 2 of an image judges a large file: text has no NUL byte in it
LONG_LINE = 1 << 20
_DIFF_HEAD = re.compile(r"diff --git |--- \S|@@ -\d")
_TOUCHED = re.compile(r"\+\+\+ [ab]/(\S+)")


class _Progress:
    """``matchers.holds`` over a stream: how many distinctive lines of each hunk were seen, in order. Each hunk
    waits for one line, so a line costs one dict look-up whatever the number of hunks."""

    def __init__(self, hunks: list[HunkLines]):
        self.hunks = hunks
        self.seen = [0] * len(hunks)
        self.waiting: dict[str, list[int]] = {}
        for i, h in enumerate(hunks):
            self.waiting.setdefault(h.lines[0], []).append(i)

    def feed(self, line: str) -> None:
        ready = self.waiting.pop(line, None)
        for i in ready or ():
            self.seen[i] += 1  # one step per line, as ``holds`` takes it, even when the next line is the same
            lines = self.hunks[i].lines
            if self.seen[i] < len(lines):
                self.waiting.setdefault(lines[self.seen[i]], []).append(i)

    def held(self) -> list[HunkLines]:
        return [h for h, n in zip(self.hunks, self.seen, strict=True) if n == len(h.lines)]


def _lines(fh, limit: int):
    """The lines of a UTF-8 text (invalid bytes replaced), as ``str.splitlines`` cuts them, read in 1 MiB
    chunks; raises ``_TooLong`` past ``limit`` bytes. A line longer than ``LONG_LINE`` (a JSON document on one
    line) is dropped as it streams: no distinctive line is that long, and holding it would copy it per chunk."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    rest, total, dropping = "", 0, False
    while True:
        chunk = fh.read(1 << 20)
        total += len(chunk)
        if total > limit:
            raise _TooLong
        lines = (rest + decoder.decode(chunk, final=not chunk)).splitlines(keepends=True)
        rest = ""
        if chunk and lines and len(lines[-1].splitlines()[0]) == len(lines[-1]):  # no line end yet
            rest = lines.pop()
        if dropping and lines:  # the end of a dropped line
            lines, dropping = lines[1:], False
        if len(rest) > LONG_LINE:
            rest, dropping = "", True
        yield from lines
        if not chunk:
            return


class _TooLong(Exception):
    pass


class Large:
    def not_read(self, path: str, reason: str, size: int | None = None) -> None:
        """Count one file or archive member the scan could not read (``stats.not_scanned``)."""
        self.unscanned.append({"path": path, "reason": reason, **({"size": size} if size is not None else {})})

    def large(self, fe, shown: str, wt: str | None) -> None:
        """A regular file over ``scan_file_bytes``: read as an archive, a bundle or a streamed text, or counted."""
        ctx, size = self.ctx, fe.st.st_size
        sparse = ctx.merged.sparse.get(fe.rel) if ctx.merged is not None and ctx.fsroot is not None else None
        if sparse:  # an image's file whose bytes pass 2 did not copy: its zeros are no content
            self.not_read(shown, sparse, size)
            return
        head = read_head(fe.path, LARGE_HEAD)
        if head.startswith(BUNDLE_MAGIC):
            self.bundle(fe, shown)
            return
        room = size <= 16 * ctx.limits["archive_member_bytes"]
        if room and (fe.rel.endswith(ARCHIVE_SUFFIXES) or is_archive(head[:HEAD_BYTES])) and self.archive(
                fe, shown, self.outside(wt)):
            return
        if b"\0" in head:
            self.not_read(shown, "binary, over scan_file_bytes", size)
        elif not room or not self.stream_text(fe, shown, wt):
            self.not_read(shown, "text over 16 × archive_member_bytes", size)

    def stream_text(self, fe, shown: str, wt: str | None) -> bool:
        """F3, L1 and L6 on a large text, line by line; False when it is longer than the bound after all."""
        ctx = self.ctx
        fd = open_regular(fe.path)
        if fd is None:
            return True
        plain, plus = _Progress(self.hunks), _Progress(self.hunks)
        diff_head = plus_line = False
        touched: set[str] = set()
        with os.fdopen(fd, "rb") as fh:
            try:
                for n, line in enumerate(_lines(fh, 16 * ctx.limits["archive_member_bytes"])):
                    stripped = line.strip()
                    plain.feed(stripped)
                    if line.startswith("+") and not line.startswith("+++"):
                        plus.feed(line[1:].strip())
                        plus_line = plus_line or n > 0
                    else:
                        plus.feed(stripped)
                        if line.startswith("+++") and (m := _TOUCHED.match(line)):
                            touched.add(m.group(1))
                            plus_line = plus_line or n > 0
                    diff_head = diff_head or bool(_DIFF_HEAD.match(line))
            except _TooLong:
                return False
        name = posixpath.basename(fe.rel)
        hits = [f"{h.kind} {h.path} {h.header}" for h in plus.held()]
        if self.hunks and not ctx.exact_copies.get(fe.rel) and self.outside(wt):
            found = plain.held()  # streamed: whole files by hunk, order within each hunk only
            whole = [f"{k}:{p}" for k, p in dict.fromkeys((h.kind, h.path) for h in found)
                     if all(h in found for h in self.hunks if (h.kind, h.path) == (k, p))]
            if found:
                self.pending.append(("near", shown, (found, whole)))
        elif self.hunks and not ctx.exact_copies.get(fe.rel):
            self.near_held(shown, plain.held())
        if name.endswith(self.PATCH_SUFFIXES) or (diff_head and plus_line):
            self.patch_graded(shown, name, hits, sorted(touched & set(self.tracked)), None)
        if self.is_log(shown, name) and hits:
            self.log_graded(shown, hits, None, [])
        return True
