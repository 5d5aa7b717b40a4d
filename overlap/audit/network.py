"""The network route: the first package release that already hands the agent the reference fix.

For a task record (SWE-bench fields ``repo``, ``patch``, ``created_at``, ``version``) the check finds the package
the repository publishes, lists its releases on the index the agent's installer uses, and reads the files the
fix changes out of release archives (never installing or running anything). A release **carries** the fix when
the file holds every usable hunk of the fix, by the audit's F3 rule (``content.matchers``): the distinctive
added lines (stripped, 12+ characters, not only punctuation, absent from the unfixed file), in order. The
unfixed file is the newest release before the base's version; the fix's removed lines never count. A release
that holds every line only once the text is cut into tokens (a formatter rewrapped it) carries the fix with
``match: "tokens"``; one that holds some lines is ``partial`` with k of n.

Candidates are the releases at or after the base's version, and older-line releases uploaded after the task's
``created_at`` (backports); they are read in ascending version order, stopping at the first that carries the
fix (``all_releases`` reads every one). The first is the lowest version carrying the fix, so ``PKG<VERSION``
keeps every carrying release out of an install.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from packaging.version import Version

from ..errors import InputError
from .content.matchers import HunkLines, distinctive_hunks, holds
from .content.patch import parse_patch
from .content.reference import Reference, RefSource
from .index import Release, client, version_or_none
from .index.archive import read_members
from .index.cache import IndexCache
from .index.config import index_url, npm_auth
from .index.http import Counters, Http, Unavailable, redact
from .package_meta import package_for, read_at_base

ARCHIVE_LIMIT = 256 << 20
MEMBER_LIMIT = 16 << 20
PROBE_LIMIT = 200  # older releases whose upload time is asked of the server (an index without PEP 700)
_TOKEN = re.compile(r"\w+|[^\w\s]")
_LAYOUT = frozenset("()[]{},\\;")


@dataclass(frozen=True)
class NetworkOptions:
    package: str | None = None  # NAME or ECOSYSTEM:NAME (--package)
    index_url: str | None = None  # --index-url
    all_releases: bool = False
    cache_root: Path | None = None
    offline: bool | None = None  # None: OVERLAP_OFFLINE


@dataclass
class _Read:
    """One release as read: lines and tokens found per file."""
    release: Release
    status: str  # carries | partial | absent | no_file | unreadable
    match: str | None = None  # lines | tokens
    lines_found: int = 0
    tokens_found: int = 0
    reason: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # repo path -> member read


def closed(network: str) -> dict:
    """The section of a target whose environment declares no network access."""
    return {"route": "closed", "reason": f"--network {network}: the environment declares no network access, so no "
                                         "index is reachable", "first_release": None, "pin": None}


# ------------------------------------------------------------------------------------------ the fix lines
def _fix_source(record: dict) -> RefSource:
    text = record.get("patch")
    if not isinstance(text, str) or not text.strip():
        raise InputError("the task record has no patch (the reference fix): the network route needs it")
    data = text.encode("utf-8", "surrogateescape")
    return RefSource("fix", "instance:patch", "", parse_patch(data, "instance patch"))


def _usable(src: RefSource, unfixed: dict[str, str]) -> tuple[list[HunkLines], list[str]]:
    removed = {p: {ln.strip() for fp in src.patches if (fp.new_path or fp.old_path) == p for h in fp.hunks
                   for ln in h.removed} for p in src.paths}
    # the removed lines are part of the unfixed file even when no unfixed release was found
    base = {p: unfixed.get(p, "") + "\n" + "\n".join(removed.get(p, ())) for p in src.paths}
    return distinctive_hunks(Reference(fix=[src]), base)


# -------------------------------------------------------------------------------------- archive members
def _strip_top(names: list[str], kind: str) -> dict[str, str]:
    """{path inside the project: member name}: an sdist's ``name-1.0/``, npm's ``package/`` and a Go zip's
    ``module@version/`` top folder dropped."""
    out = {}
    for n in names:
        rel = n
        if kind == "go-zip" and "/" in n[n.find("@") + 1:] and "@" in n:
            rel = n[n.index("/", n.find("@")) + 1:]  # module paths hold slashes: cut after the version's
        elif kind in ("sdist", "npm-tarball") and "/" in n:
            rel = n.split("/", 1)[1]
        out[rel] = n
    return out


def member_for(path: str, inside: dict[str, str]) -> str | None:
    """The member holding the repository file ``path``: the same path, else the longest shared tail of two or
    more components (``src/pkg/a.py`` in a repo is ``pkg/a.py`` in a wheel), else a unique file name."""
    if path in inside:
        return inside[path]
    want = path.split("/")
    best, best_len, ties = None, 1, 0
    for rel, name in inside.items():
        parts = rel.split("/")
        n = 0
        while n < min(len(parts), len(want)) and parts[-1 - n] == want[-1 - n]:
            n += 1
        if n > best_len:
            best, best_len, ties = name, n, 0
        elif n == best_len and n > 1:
            ties += 1
    if best is not None and not ties:
        return best
    same = [name for rel, name in inside.items() if rel.rpartition("/")[2] == want[-1]]
    return same[0] if len(same) == 1 and best is None else None


def _tokens(text: str) -> str:
    """The text as tokens, without the brackets, commas and line continuations a formatter adds or removes
    when it rewraps a statement (black's parenthesised wraps, magic trailing commas)."""
    return " " + " ".join(t for t in _TOKEN.findall(text) if t not in _LAYOUT) + " "


# ------------------------------------------------------------------------------------------------ check
class _Checker:
    def __init__(self, options: NetworkOptions, counters: Counters, stage: Callable[[str], None] | None):
        self.options = options
        self.counters = counters
        self.http = Http(counters, auth=npm_auth())
        self.cache = IndexCache(self.http, options.cache_root, options.offline)
        self.stage = stage

    def texts(self, release: Release, paths: list[str]) -> tuple[dict[str, str], dict[str, str]]:
        """({repo path: text}, {repo path: member}) of a release's archive."""
        archive, meta = self.cache.archive(release.url, release.digests, release.size, ARCHIVE_LIMIT)
        self.counters.archives_read += 1
        if release.upload_time is None and meta.get("last_modified"):
            release.upload_time, release.upload_time_source = _http_date(meta["last_modified"]), "last-modified"
        wanted = {PurePosixPath(p).name for p in paths}
        data = read_members(archive, lambda name: PurePosixPath(name).name in wanted, self.counters, MEMBER_LIMIT,
                            ARCHIVE_LIMIT)
        inside = _strip_top(list(data), release.kind)
        texts, where = {}, {}
        for p in paths:
            m = member_for(p, inside)
            if m is not None:
                texts[p] = data[m].decode("utf-8", "replace")
                where[p] = m
        return texts, where


def _http_date(value: str) -> str | None:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        return None


def _when(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def _days(after: str | None, before: str | None) -> float | None:
    a, b = _when(after), _when(before)
    return None if a is None or b is None else round((a - b).total_seconds() / 86400, 1)


def _series(v: Version) -> tuple[int, ...]:
    rel = v.release + (0,) * 3
    return rel[:3]


def check_task(record: dict, options: NetworkOptions = NetworkOptions(), *,
               stage: Callable[[str], None] | None = None, checkout: str | None = None) -> dict:
    """The ``network`` section of one task (see the module); ``checkout``: the task's repository, whose own
    packaging metadata at the base commit names the package."""
    started = time.monotonic()
    counters = Counters()
    src = _fix_source(record)
    fix_paths = sorted({fp.new_path for fp in src.patches if fp.new_path})
    section: dict = {"route": None, "reason": None, "ecosystem": None, "package": None, "package_source": None,
                     "index": None, "base_version": record.get("version"), "created_at": record.get("created_at"),
                     "files": fix_paths, "fix_lines": None, "first_release": None, "pin": None, "partial": [],
                     "releases_read": [], "unfixed_release": None, "skipped": {}}
    try:
        own = read_at_base(checkout, record.get("base_commit")) if checkout and not options.package else None
        found = package_for(record, options.package, fix_paths, own)
        if found is None:
            return section | {"route": "unknown_package",
                              "reason": f"no package is known for {record.get('repo') or 'this task'} (add a row to "
                                        "mappings/repo_packages.csv, a package field, or give --package)"}
        eco, name, source = found
        section.update(ecosystem=eco, package=name, package_source=source)
        checker = _Checker(options, counters, stage)
        url = index_url(eco, options.index_url)
        section["index"] = redact(url)
        index = client(eco, url, checker.cache)
        if stage is not None:
            stage(f"listing the releases of {eco}:{name} on {section['index']}")
        try:
            releases = index.releases(name)
        except Unavailable as exc:
            return section | {"route": "unavailable", "reason": str(exc)}
        section.update(_walk(checker, index, releases, src, fix_paths, record, options))
        if section["first_release"] is not None:
            section["pin"] = f"{name}<{section['first_release']['version']}"
        return section
    finally:
        section["skipped"] = dict(sorted(counters.skipped.items()))
        _report_cost(record, counters, time.monotonic() - started)


def _walk(checker: _Checker, index, releases: list[Release], src: RefSource, fix_paths: list[str], record: dict,
          options: NetworkOptions) -> dict:
    counters = checker.counters
    parsed = []
    for r in releases:
        v = version_or_none(r.version)
        if v is None:
            counters.skip("version packaging cannot parse")
        else:
            parsed.append((v, r))
    parsed.sort(key=lambda x: x[0])
    base_text = record.get("version")
    base = version_or_none(str(base_text)) if base_text not in (None, "") else None
    created = _when(record.get("created_at"))
    if base is None and created is None:
        return {"route": "unknown_base", "reason": "the task record has neither a version nor a created_at, so no "
                                                   "release can be told to come after the base"}
    older = [(v, r) for v, r in parsed if base is not None and _series(v) < _series(base)]
    if created is not None:  # an index without upload times: ask the server for the older releases' dates
        for _, r in older[-PROBE_LIMIT:]:
            if r.upload_time is None:
                index.details(r)
            if r.upload_time is None and not r.url.startswith("file:"):
                _probe_time(checker, r)

    def after_created(r: Release) -> bool:
        t = _when(r.upload_time)
        return t is not None and created is not None and t > created

    candidates = [(v, r) for v, r in parsed if (base is not None and _series(v) >= _series(base)) or after_created(r)]
    before = [(v, r) for v, r in older if not after_created(r)] if base is not None else \
        [(v, r) for v, r in parsed if not after_created(r)]
    unfixed_texts: dict[str, str] = {}
    out: dict = {}
    if before:
        v, r = before[-1]
        if checker.stage is not None:
            checker.stage(f"reading the unfixed file from {r.filename}")
        try:
            unfixed_texts, _ = checker.texts(r, fix_paths)
            out["unfixed_release"] = {"version": r.version, "files_found": sorted(unfixed_texts)}
        except Unavailable as exc:
            counters.skip("unfixed release unreadable")
            out["unfixed_release"] = {"version": r.version, "error": str(exc)}
    hunks, unusable = _usable(src, unfixed_texts)
    lines = sorted({(h.path, ln) for h in hunks for ln in h.lines})
    out["fix_lines"] = len(lines)
    if not hunks:
        return out | {"route": "not_applicable", "reason": "; ".join(unusable) or "the fix adds no distinctive line"}
    if not candidates:
        return out | {"route": "checked", "reason": "no release after the base's version"}
    read: list[_Read] = []
    first: _Read | None = None
    for i, (_, r) in enumerate(candidates, 1):
        if checker.stage is not None:
            checker.stage(f"reading {r.filename} ({i}/{len(candidates)})")
        index.details(r)
        item = _read_release(checker, r, hunks, lines, fix_paths)
        read.append(item)
        if item.status == "carries" and first is None:
            first = item
            if not options.all_releases:
                break
    out["releases_read"] = [_release_dict(x, len(lines)) for x in read]
    out["partial"] = [{"version": x.release.version, "lines_found": x.lines_found, "lines_total": len(lines),
                       "upload_time": x.release.upload_time} for x in read
                      if x.status == "partial" and (first is None or x.release.parsed < first.release.parsed)]
    out["route"] = "open" if first is not None else "checked"
    if first is None:
        out["reason"] = f"no release read carries every line of the fix ({len(read)} read)"
        return out
    r = first.release
    out["first_release"] = {
        "version": r.version, "archive": r.filename, "upload_time": r.upload_time,
        "upload_time_source": r.upload_time_source, "match": first.match, "yanked": r.yanked is not None,
        "yanked_reason": r.yanked or None,
        "days_after_created": _days(r.upload_time, record.get("created_at")),
        "days_after_fix_commit": _days(r.upload_time, record.get("fix_commit_date")),
        "files": first.files}
    return out


def _probe_time(checker: _Checker, r: Release) -> None:
    try:
        value = checker.cache.last_modified(r.url)
    except Unavailable:
        checker.counters.skip("older release without an upload time")
        return
    if value:
        r.upload_time, r.upload_time_source = _http_date(value), "last-modified"


def _read_release(checker: _Checker, r: Release, hunks: list[HunkLines], lines: list[tuple[str, str]],
                  fix_paths: list[str]) -> _Read:
    try:
        texts, where = checker.texts(r, fix_paths)
    except Unavailable as exc:
        checker.counters.skip("release archive unreadable")
        return _Read(r, "unreadable", reason=str(exc))
    if not texts:
        return _Read(r, "no_file", reason="the archive holds none of the files the fix changes")
    stripped = {p: [ln.strip() for ln in t.splitlines()] for p, t in texts.items()}
    as_set = {p: set(v) for p, v in stripped.items()}
    tokens = {p: _tokens(t) for p, t in texts.items()}
    k = sum(ln in as_set.get(p, ()) for p, ln in lines)
    kt = sum(p in tokens and _tokens(ln) in tokens[p] for p, ln in lines)
    item = _Read(r, "absent", lines_found=k, tokens_found=kt, files=where)
    if all(h.path in stripped and holds(stripped[h.path], h) for h in hunks):
        item.status, item.match = "carries", "lines"
    elif kt == len(lines):
        item.status, item.match = "carries", "tokens"
    elif k or kt:
        item.status = "partial"
    return item


def _release_dict(x: _Read, total: int) -> dict:
    r = x.release
    return {"version": r.version, "archive": r.filename, "kind": r.kind, "upload_time": r.upload_time,
            "status": x.status, "match": x.match, "lines_found": x.lines_found, "tokens_found": x.tokens_found,
            "lines_total": total, "yanked": r.yanked is not None, "reason": x.reason}


def _report_cost(record: dict, c: Counters, seconds: float) -> None:
    """What the check cost, on stderr (kept out of the report, which is the same online and from the cache)."""
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    sys.stderr.write(f"network: {record.get('instance_id') or record.get('repo') or 'task'}: "
                     f"{c.archives_read} archives read ({c.archives_cached} from the cache), "
                     f"{c.bytes_downloaded:,} bytes downloaded, {c.requests} requests, {seconds:.2f} s, "
                     f"peak RSS {rss} MiB\n")

