"""Test caches and artefacts (L4): what a test run or a build left behind.

The cache families of L4 are recognised by path, wherever they sit (repository, ``/root``, ``/home/*``
or ``/tmp`` of a root filesystem or image): pytest's ``nodeids``/``lastfailed``, jest caches
(``/tmp/jest_*``, transformed sources), Go's build and test cache, Maven ``-SNAPSHOT`` artefacts, Gradle
build-cache entries (gzipped tars), Bazel's output base (test logs), Julia's compiled cache, coverage.py
databases, mypy and ruff caches, and pip's cache (wheels and HTTP bodies). Each file, or each member when
it is an archive, goes through the test-ID matcher (hidden ID → high, an ID absent from B → medium), the
F3 matcher (every usable hunk of the fix or of the tests → critical, some → high), the fixed blobs
(an exact member → critical) and, for binary entries, fix-only strings (→ high, as for L5 binaries).

A mixin of ``leftovers._Scan`` (it uses ``self.ctx``, ``self.ref``, ``self.hunks``, ``self.tokens``,
``self.ids_graded`` and ``self.add``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
from pathlib import Path

from ...words import plural
from ..content.archives import GZIP_MAGIC, HEAD_BYTES, has_zip_directory, is_archive, members
from ..content.fixed import blob_id
from ..content.matchers import holds, stripped_lines
from ..model import worst
from ..tree import TooLarge, read_head, read_regular
from ..wording import capped, cut

CACHE_PLACES: tuple[tuple[str, re.Pattern], ...] = tuple((k, re.compile(p)) for k, p in (
    ("pytest", r"/\.pytest_cache/v/cache/(?:nodeids|lastfailed)$"),
    ("jest", r"^/tmp/jest_[^/]*/"),
    ("go", r"/\.cache/go-build/"),
    ("maven", r"/\.m2/.*-SNAPSHOT"),
    ("gradle", r"/\.gradle/caches/build-cache-[^/]*/"),
    ("bazel", r"/\.cache/bazel/"),
    ("julia", r"/\.julia/compiled/"),
    ("coverage", r"/\.coverage(?:\.[^/]*)?$"),
    ("mypy", r"/\.mypy_cache/"),
    ("ruff", r"/\.ruff_cache/"),
    ("pip", r"/\.cache/pip/"),
))
_GO_TEST_LINE = re.compile(r"^\s*(?:=== (?:RUN|PAUSE|CONT)|--- (?:PASS|FAIL|SKIP):)\s+(\S+)", re.M)
_JUNIT_CASE = re.compile(r"<testcase\b[^>]*>")
_ATTR = re.compile(r"""\b(classname|name)\s*=\s*["']([^"']*)["']""")
_MYPY_DATA = re.compile(r"/\.mypy_cache/[^/]+/(.+)\.data\.json$")


def cache_kind(shown: str) -> str | None:
    """The L4 cache family a scanned path belongs to (None: not a cache this check reads)."""
    path = shown if shown.startswith("/") else "/" + shown
    return next((kind for kind, pattern in CACHE_PLACES if pattern.search(path)), None)


def coverage_names(data: bytes, private: Path) -> str:
    """Measured file paths and test contexts (``tests/x.py::test_y|run``) of a coverage.py database.

    SQLite reads the bytes from a private copy, opened read-only with ``immutable=1`` (no journal, no
    lock, nothing written); a file that is not such a database gives an empty text.
    """
    with tempfile.NamedTemporaryFile(dir=private, suffix=".coverage") as copy:
        copy.write(data)
        copy.flush()
        try:
            con = sqlite3.connect(f"{Path(copy.name).as_uri()}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error:
            return ""
        try:
            names = []
            for table, column in (("context", "context"), ("file", "path")):
                try:
                    names += [str(r[0]) for r in con.execute(f"SELECT {column} FROM {table} LIMIT 100000")]
                except sqlite3.Error:
                    continue
            return "\n".join(names)
        finally:
            con.close()


def mypy_names(shown: str, text: str) -> str:
    """``module/path.py::name`` for each name of a mypy ``.data.json`` symbol table (the test-ID form)."""
    m = _MYPY_DATA.search(shown if shown.startswith("/") else "/" + shown)
    try:
        table = json.loads(text).get("names") or {}
    except (json.JSONDecodeError, AttributeError, RecursionError):  # a hostile file nests past the parser
        return ""
    if m is None or not isinstance(table, dict):
        return ""
    module = m.group(1) + ".py"
    # the module's own definitions: imports carry a cross_ref, and _private and dunder names are no tests
    return "\n".join(f"{module}::{name}" for name, node in table.items() if isinstance(name, str)
                     and not name.startswith((".", "_")) and not (isinstance(node, dict) and "cross_ref" in node))


class Caches:
    def cache_entry(self, fe, shown: str, kind: str) -> None:
        """L4 for one cache file: every member of an archive, or the file itself."""
        ctx = self.ctx
        limit = ctx.limits["scan_file_bytes"]
        skipped = 0
        head = read_head(fe.path, HEAD_BYTES) if fe.st.st_size <= 16 * ctx.limits["archive_member_bytes"] else b""
        if is_archive(head) or (kind == "pip" and head and has_zip_directory(fe.path)):
            items = members(fe.path, ctx.limits["archive_member_bytes"])
        else:
            try:
                data = read_regular(fe.path, limit)
            except TooLarge:
                self.not_read(shown, "cache file over scan_file_bytes")
                return
            if data is None:
                return
            items = [(None, data)]
        hits: dict[str, list] = {"test_ids": [], "hunks": [], "equals_fixed": [], "tokens": [], "members": []}
        sevs: list[str] = []
        content = False
        for member, data in items:
            if data is None:
                skipped += 1
                self.not_read(f"{shown}!/{member}", "archive member over archive_member_bytes or past the archive's "
                                                    "budget")
                continue
            found = self._cache_matches(shown, kind, data)
            if not found:
                continue
            for sev, key, values, is_content in found:
                sevs.append(sev)
                hits[key] += [v for v in values if v not in hits[key]]
                content = content or is_content
            if member is not None:
                hits["members"].append(member)
        if not sevs:
            return
        evidence = {"cache": kind, "members_skipped": skipped,
                    **{k: capped(v, ctx.max_items) for k, v in hits.items() if v}}
        if hits["equals_fixed"]:
            what = f"holds the fixed {hits['equals_fixed'][0]}"
        elif hits["hunks"]:
            what = f"holds {plural(len(hits['hunks']), 'reference hunk')}"
        elif hits["tokens"]:
            what = f"holds strings only the fix adds ({cut(hits['tokens'][0], 40)})"
        else:
            ids = hits["test_ids"]
            what = f"names {ids[0]}" + (f" (+{len(ids) - 1} more)" if len(ids) > 1 else "")
        lister = "tar -tzf" if head.startswith(GZIP_MAGIC) else "python3 -m zipfile -l"
        see = f"{lister} {ctx.q(shown)}" if hits["members"] else f"cat {ctx.q(shown)}"
        self.add("L4", shown, worst(sevs), "content" if content else "location", f"{kind} cache {what}", evidence,
                 see)

    def _cache_matches(self, shown: str, kind: str, data: bytes) -> list[tuple[str, str, list, bool]]:
        """(severity, evidence key, values, is content) for each matcher that fires on one cached text."""
        out = []
        fixed = self.ctx.fixed_blobs()
        if fixed:
            hexlen = self.ctx._repo.hexlen if self.ctx._repo is not None else 40
            f = fixed.get(blob_id(data, hexlen))
            if f is not None:
                out.append(("critical", "equals_fixed", [f.path], True))
        binary = b"\0" in data[:8192]
        if kind == "coverage":
            text = coverage_names(data, self.ctx.private)
        elif binary:  # printable runs, one a line: cached sources inside binary records stay line-shaped
            text = "\n".join(s.decode("ascii") for s in re.findall(rb"[\x20-\x7e]{8,}", data))
        else:
            text = data.decode("utf-8", "replace")
        if kind == "mypy":
            text += "\n" + mypy_names(shown, text)
        lines = stripped_lines(text)
        for part in ("fix", "tests"):
            mine = [h for h in self.hunks if h.kind == part]
            held = [h for h in mine if holds(lines, h)]
            if held:
                out.append(("critical" if len(held) == len(mine) else "high", "hunks",
                            [f"{h.kind} {h.path} {h.header}" for h in held], True))
        sev, ids = self.ids_graded(text + "\n" + "\n".join(self._named_tests(text)))
        if sev:
            out.append((sev, "test_ids", ids, False))
        if binary and kind != "coverage":
            tokens = sorted({t for t in self.tokens if t.encode("utf-8", "replace") in data})
            if tokens:
                out.append(("high", "tokens", [cut(t, 120) for t in tokens], True))
        return out

    def _named_tests(self, text: str) -> list[str]:
        """Hidden test IDs named the way Go test output or JUnit XML names them (bare or class-qualified)."""
        names: set[tuple[str | None, str]] = {(None, m.group(1)) for m in _GO_TEST_LINE.finditer(text)}
        for case in _JUNIT_CASE.findall(text):
            attrs = dict(_ATTR.findall(case))
            if attrs.get("name"):
                names.add((attrs.get("classname"), attrs["name"]))
        out = []
        for tid in self.ref.test_ids:
            path, _, name = tid.rpartition("::")
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            for cls, n in names:
                if n.split("[")[0] == name and (cls is None or cls.rsplit(".", 1)[-1] in (stem, name) or
                                                 cls.replace(".", "/") == path.rsplit(".", 1)[0]):
                    out.append(tid)
        return out
