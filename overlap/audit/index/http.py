"""Bounded reads from a package index over urllib3 (and ``file://`` for a folder laid out as an index).

An index is as untrusted as a registry: every request has connect and read timeouts, and retries and
redirects are decided here, never by urllib3: 429 and 502–504 are asked again as the registry client asks
(``image.retry``: up to 3 times, honouring ``Retry-After`` up to 30 s). Redirects are followed at most 5 times,
only to the same scheme, host and port (an index that sends the client to another host is refused, so its
credentials and its trust never leak there). Bodies
are read with ``read1`` in bounded chunks, up to a byte limit and under a minimum average rate, so a body that
never ends or drips cannot hang a task. Every failure is one :class:`Unavailable` line for that task.
Credentials come only from the index URL the user's own tools are configured with (``user:password@``) or an
npm ``_authToken``; they are sent to that host only and never appear in a message (URLs are shown redacted).
"""

from __future__ import annotations

import base64
import os
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import urllib3

from ..image.body import BodyBroken, discard, read_chunks, reason
from ..image.retry import RETRY_AFTER_CAP, retry_wait

MAX_REDIRECTS = 5


class Unavailable(Exception):
    """The index or an archive cannot be used for this task; the message is one line saying why."""


def redact(url: str) -> str:
    """A URL without its credentials (``user:password@`` becomes ``***@``)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = "***@" + host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def timeouts() -> urllib3.Timeout:
    raw = os.environ.get("OVERLAP_INDEX_TIMEOUT", "").strip()
    try:
        t = float(raw) if raw else None
    except ValueError:
        t = None
    return urllib3.Timeout(connect=t or 10.0, read=t or 30.0)


@dataclass
class Counters:
    """What the index reads cost one task (the report's ``network.stats``)."""
    requests: int = 0
    bytes_downloaded: int = 0
    archives_read: int = 0
    archives_cached: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def to_dict(self) -> dict:
        return {"requests": self.requests, "bytes_downloaded": self.bytes_downloaded,
                "archives_read": self.archives_read, "archives_cached": self.archives_cached,
                "skipped": dict(sorted(self.skipped.items()))}


def _origin(url: str) -> tuple[str, str, int | None]:
    p = urllib.parse.urlsplit(url)
    return p.scheme, (p.hostname or "").lower(), p.port


class Http:
    """GETs with the bounds above; ``auth`` maps a host to the Authorization value the user configured."""

    def __init__(self, counters: Counters, auth: dict[str, str] | None = None):
        self.counters = counters
        self.auth = dict(auth or {})
        self.timeout = timeouts()
        self.pools: dict[str, urllib3.PoolManager] = {}

    def _pool(self, url: str) -> urllib3.PoolManager:
        host = urllib.parse.urlsplit(url).hostname or ""
        proxy = None
        if host not in ("127.0.0.1", "localhost", "::1") and not urllib.request.proxy_bypass(host):
            proxy = urllib.request.getproxies().get(urllib.parse.urlsplit(url).scheme)
        key = str(proxy)
        if key not in self.pools:
            kw = dict(retries=False, timeout=self.timeout)
            self.pools[key] = urllib3.ProxyManager(proxy, **kw) if proxy else urllib3.PoolManager(**kw)
        return self.pools[key]

    def _headers(self, url: str, accept: str | None) -> dict[str, str]:
        headers = {"Accept-Encoding": "identity", "User-Agent": "overlap-audit"}
        if accept:
            headers["Accept"] = accept
        parts = urllib.parse.urlsplit(url)
        if parts.username is not None:
            creds = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            headers["Authorization"] = "Basic " + base64.b64encode(creds.encode()).decode()
        elif (parts.hostname or "").lower() in self.auth:
            headers["Authorization"] = self.auth[(parts.hostname or "").lower()]
        return headers

    def open(self, url: str, accept: str | None = None):
        """(response, final URL) of a GET that answered 200; every other outcome is :class:`Unavailable`."""
        start = url
        redirects = retries = 0
        while redirects <= MAX_REDIRECTS:
            clean = _without_userinfo(url)
            self.counters.requests += 1
            try:
                r = self._pool(clean).request("GET", clean, headers=self._headers(url, accept),
                                              preload_content=False, redirect=False, retries=False)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise Unavailable(f"{redact(clean)}: {reason(exc)}") from None
            if r.status in (301, 302, 303, 307, 308):
                location = r.headers.get("Location")
                discard(r)
                if not location:
                    raise Unavailable(f"{redact(clean)}: redirect without a Location")
                target = urllib.parse.urljoin(clean, location)
                if _origin(target) != _origin(start):
                    raise Unavailable(f"{redact(clean)}: redirect to another host ({_origin(target)[1]}) refused")
                url = _with_userinfo(target, url)
                redirects += 1
                continue
            if r.status != 200:
                discard(r)
                wait = retry_wait(r.status, r.headers.get("Retry-After"), retries)
                if wait is not None and wait <= RETRY_AFTER_CAP:
                    retries += 1
                    time.sleep(wait)
                    continue
                if wait is not None:
                    raise Unavailable(f"{redact(clean)}: {status_text(r.status)}, asked to retry after {wait:.0f} s "
                                      "(more than this audit waits)")
                raise Unavailable(f"{redact(clean)}: {status_text(r.status)}")
            return r, clean
        raise Unavailable(f"{redact(start)}: more than {MAX_REDIRECTS} redirects")

    def stream(self, r, what: str):
        """The body in bounded chunks (``image.body.read_chunks``, as the registry client reads); a broken or
        dripping body is unavailable for this task."""
        try:
            yield from read_chunks(r, what, self._count)
        except BodyBroken as exc:
            raise Unavailable(exc.args[0]) from None

    def _count(self, n: int) -> None:
        self.counters.bytes_downloaded += n

    def get(self, url: str, limit: int, accept: str | None = None) -> tuple[bytes, dict[str, str], str]:
        """(body, headers, final URL) of a small document, refused past ``limit`` bytes."""
        if url.startswith("file:"):
            return read_file_url(url, limit), {}, url
        r, final = self.open(url, accept)
        headers = {k.lower(): v for k, v in r.headers.items()}
        out = bytearray()
        for chunk in self.stream(r, redact(final)):
            out += chunk
            if len(out) > limit:
                raise Unavailable(f"{redact(final)}: larger than {limit:,} bytes (an index page is not that big)")
        return bytes(out), headers, final


def read_file_url(url: str, limit: int) -> bytes:
    """A ``file://`` URL's file, or its ``index.html`` for a folder (a static PEP 503 tree), up to ``limit``."""
    path = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
    if os.path.isdir(path):
        path = os.path.join(path, "index.html")
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise Unavailable(f"{url}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise Unavailable(f"{url}: larger than {limit:,} bytes")
    return data


def status_text(status: int) -> str:
    what = {401: "needs credentials (401); configure them in the tool's own config (pip.conf, .npmrc)",
            403: "access refused (403)", 404: "not found (404)", 429: "rate limited (429); try again later"}
    if status in what:
        return what[status]
    return f"server error ({status})" if status >= 500 else f"unexpected HTTP status {status}"


def _without_userinfo(url: str) -> str:
    p = urllib.parse.urlsplit(url)
    if p.username is None:
        return url
    return urllib.parse.urlunsplit(p._replace(netloc=(p.hostname or "") + (f":{p.port}" if p.port else "")))


def _with_userinfo(target: str, original: str) -> str:
    """A same-origin redirect keeps the credentials of the URL it came from."""
    o = urllib.parse.urlsplit(original)
    if o.username is None:
        return target
    t = urllib.parse.urlsplit(target)
    return urllib.parse.urlunsplit(t._replace(netloc=o.netloc))
