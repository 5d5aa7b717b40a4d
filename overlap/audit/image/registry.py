"""A read-only client of the OCI distribution API (``/v2/``) over urllib3, for hostile registries too.

Every request has connect and read timeouts (``OVERLAP_REGISTRY_TIMEOUT`` seconds, default 10 and 60),
no automatic retry and no automatic redirect: redirects are followed here (at most 5; to another host
without the Authorization header, never from HTTPS down to HTTP), 429 and 502–504 are retried up to 3
times honouring ``Retry-After`` up to 30 s, and every other failure is one ``InputError`` line naming the
reference. Authentication: the ``WWW-Authenticate`` challenge of a 401 — a bearer token from its realm
(anonymous, or with the auth-file credentials) or HTTP basic with them. Bodies are read with ``read1`` in
bounded chunks and a minimum average rate, so a server that drips bytes or never ends cannot hang a run.
Plain HTTP is used only for loopback hosts and ``--insecure-registry`` hosts (after trying HTTPS).
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable

import urllib3

from ...errors import InputError
from . import authfile
from .body import BodyBroken, discard, read_chunks, reason
from .reference import RegistryRef, is_loopback
from .retry import RETRY_AFTER_CAP, retry_wait

MAX_REDIRECTS = 5
TOKEN_LIMIT = 1 << 20


MAX_TIMEOUT = 86400.0


def timeouts() -> urllib3.Timeout:
    raw = os.environ.get("OVERLAP_REGISTRY_TIMEOUT", "").strip()
    try:
        t = float(raw) if raw else None
    except ValueError:
        t = -1.0
    # a negative or NaN timeout is refused by the socket layer mid-pull; infinity would be no timeout at all
    if t is not None and not 0 < t <= MAX_TIMEOUT:
        raise InputError(f"OVERLAP_REGISTRY_TIMEOUT={raw[:40]}: expected seconds, a number above 0 and at most "
                         f"{MAX_TIMEOUT:.0f} (e.g. 30); unset it for the defaults (10 to connect, 60 per read)")
    return urllib3.Timeout(connect=t or 10.0, read=t or 60.0)


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, rest = header.strip().partition(" ")
    return scheme.lower(), {k.lower(): v for k, v in re.findall(r'(\w+)="([^"]*)"', rest)}


class Client:
    """One repository of one registry. ``log(method, url)`` (optional) is told of each request sent."""

    def __init__(self, ref: RegistryRef, insecure: Iterable[str] = (), log: Callable[[str, str], None] | None = None):
        self.ref = ref
        insecure = {h.strip().lower() for h in insecure if h and h.strip()}
        names = {ref.host.lower(), ref.api_host.lower(), ref.hostname.lower()}
        # named as HOST or HOST:PORT, the host is then known by every form (URLs are compared by hostname)
        self.insecure = names if names & insecure else set()
        self.plain_ok = is_loopback(ref.hostname) or bool(self.insecure)
        self.timeout = timeouts()
        self.pools: dict[str, urllib3.PoolManager] = {}
        self.base: str | None = None
        self.auth: str | None = None  # the Authorization value for the registry host
        self.creds, self.creds_note = authfile.lookup(ref)
        self.log = log
        self.sent_auth_to: list[str] = []  # hosts that received the Authorization header (tests read it)

    # ----------------------------------------------------------------------------------- transport
    def fail(self, what: str, advice: str = "") -> InputError:
        return InputError(f"{self.ref.given}: {what}" + (f"; {advice}" if advice else ""))

    def _pool(self, url: str, verify: bool) -> urllib3.PoolManager:
        host = urllib.parse.urlsplit(url).hostname or ""
        proxy = None
        if not is_loopback(host) and not urllib.request.proxy_bypass(host):
            proxy = urllib.request.getproxies().get(urllib.parse.urlsplit(url).scheme)
        key = f"{proxy}|{verify}"
        if key not in self.pools:
            kw = dict(retries=False, timeout=self.timeout, cert_reqs="CERT_REQUIRED" if verify else "CERT_NONE")
            self.pools[key] = urllib3.ProxyManager(proxy, **kw) if proxy else urllib3.PoolManager(**kw)
        return self.pools[key]

    def _verify(self, url: str) -> bool:
        host = (urllib.parse.urlsplit(url).hostname or "").lower()
        return not (host in self.insecure or (is_loopback(host) and self.plain_ok))

    def send(self, method: str, url: str, headers: dict[str, str]) -> urllib3.BaseHTTPResponse:
        if self.log is not None:
            self.log(method, url)
        if "Authorization" in headers:
            self.sent_auth_to.append(urllib.parse.urlsplit(url).netloc)
        verify = self._verify(url)
        try:
            if not verify:
                urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
            return self._pool(url, verify).request(method, url, headers={"Accept-Encoding": "identity", **headers},
                                                   preload_content=False, redirect=False, retries=False)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self.fail(f"{urllib.parse.urlsplit(url).netloc}: {reason(exc)}",
                            "check the address and the network, or try again") from None

    def base_url(self) -> str:
        """``scheme://host``; HTTPS unless the host may speak plain HTTP and HTTPS does not answer."""
        if self.base is None:
            https = f"https://{self.ref.api_host}"
            if not self.plain_ok:
                self.base = https
            else:
                try:
                    r = self.send("GET", https + "/v2/", {})
                    r.drain_conn()
                    r.release_conn()
                    self.base = https
                except InputError:
                    self.base = f"http://{self.ref.api_host}"
        return self.base

    # ----------------------------------------------------------------------------------- requests
    def get(self, path: str, accept: str | None = None, what: str = "") -> urllib3.BaseHTTPResponse:
        """A 200 answer to GET ``path`` (after auth, redirects and retries), body not read yet."""
        url = self.base_url() + path
        what = what or path
        registry = urllib.parse.urlsplit(url).netloc
        authed = retries = redirects = 0
        while True:
            headers = {"Accept": accept} if accept else {}
            here = urllib.parse.urlsplit(url)
            if self.auth and here.netloc == registry:
                headers["Authorization"] = self.auth
            r = self.send("GET", url, headers)
            status = r.status
            if status in (200, 203):
                return r
            hdrs = dict(r.headers)
            location = r.headers.get("Location")
            discard(r)
            if status == 401 and here.netloc == registry and authed == 0:
                authed += 1
                self._authenticate(r.headers.get("WWW-Authenticate", ""), what)
                continue
            if status in (301, 302, 303, 307, 308) and location:
                redirects += 1
                if redirects > MAX_REDIRECTS:
                    raise self.fail(f"{what}: more than {MAX_REDIRECTS} redirects", "the registry is misconfigured")
                try:  # a Location that is no URL ("http://[::1") is the registry's fault, said in one line
                    nxt = urllib.parse.urljoin(url, location)
                    scheme = urllib.parse.urlsplit(nxt).scheme
                    host = (urllib.parse.urlsplit(nxt).hostname or "").lower()
                except ValueError:
                    raise self.fail(f"{what}: redirected to a malformed address {location[:120]!r}",
                                    "the registry is misconfigured") from None
                # plain HTTP goes to loopback and --insecure-registry hosts only, whoever sends the redirect
                # (a loopback registry too): decided here, before anything connects to the new host
                plain_ok = is_loopback(host) or host in self.insecure
                if scheme not in ("http", "https") or (scheme == "http" and not plain_ok):
                    raise self.fail(f"{what}: redirected to {nxt[:120]}", "only HTTPS redirects are followed (plain "
                                    "HTTP only to loopback and --insecure-registry hosts)")
                url = nxt
                continue
            wait = retry_wait(status, hdrs.get("Retry-After"), retries)
            if wait is not None:
                retries += 1
                if wait > RETRY_AFTER_CAP:
                    raise self.fail(f"{what}: HTTP {status}, asked to retry after {wait:.0f} s",
                                    "the registry is rate-limiting; try again later")
                time.sleep(wait)
                continue
            raise self._status_error(status, what)

    def _status_error(self, status: int, what: str) -> InputError:
        if status == 401:
            how = self.creds_note or ("the credentials in your auth file were refused" if self.creds
                                      else "no credentials for this registry in REGISTRY_AUTH_FILE, "
                                           "~/.docker/config.json or containers/auth.json")
            return self.fail(f"{what}: authentication required (HTTP 401)", f"{how}; log in with docker/podman login")
        if status == 403:
            return self.fail(f"{what}: access denied (HTTP 403)", "check that your account may pull this image")
        if status == 404:
            return self.fail(f"{what}: not found (HTTP 404)", "check the repository, tag or digest")
        if status == 429:
            return self.fail(f"{what}: too many requests (HTTP 429)", "the registry is rate-limiting; try again later")
        return self.fail(f"{what}: the registry answered HTTP {status}", "try again later")

    def _authenticate(self, header: str, what: str) -> None:
        scheme, params = parse_challenge(header)
        basic = None
        if self.creds:
            basic = "Basic " + base64.b64encode(f"{self.creds[0]}:{self.creds[1]}".encode()).decode()
        if scheme == "basic":
            if basic is None:
                raise self._status_error(401, what)
            self.auth = basic
            return
        if not header.strip():
            raise self._status_error(401, what)
        if scheme != "bearer" or not params.get("realm"):
            raise self.fail(f"{what}: HTTP 401 with an unsupported challenge {header[:80]!r}")
        try:
            realm = urllib.parse.urlsplit(params["realm"])
            host = (realm.hostname or "").lower()
        except ValueError:
            raise self.fail(f"{what}: the token service address {params['realm'][:120]!r} is malformed",
                            "the registry is misconfigured") from None
        if realm.scheme not in ("http", "https") or (
                realm.scheme == "http" and not (is_loopback(host) or host in self.insecure)):
            raise self.fail(f"{what}: the token service {params['realm'][:120]} is not HTTPS",
                            "name the registry with --insecure-registry if that is intended")
        query = {"scope": params.get("scope") or f"repository:{self.ref.repo}:pull"}
        if params.get("service"):
            query["service"] = params["service"]
        sep = "&" if realm.query else "?"
        url = params["realm"] + sep + urllib.parse.urlencode(query)
        r = self.send("GET", url, {"Authorization": basic} if basic else {})
        if r.status != 200:
            discard(r)
            if r.status in (401, 403):
                raise self._status_error(401, what)
            raise self.fail(f"{what}: the token service answered HTTP {r.status}", "try again later")
        body = self.read_body(r, TOKEN_LIMIT, "the token answer")
        try:
            doc = json.loads(body)
            token = doc.get("token") or doc.get("access_token")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError, RecursionError):
            token = None
        if not isinstance(token, str) or not token or any(c in token for c in "\r\n"):
            raise self.fail(f"{what}: the token service sent no token")
        self.auth = f"Bearer {token}"

    def read_body(self, r: urllib3.BaseHTTPResponse, limit: int, what: str) -> bytes:
        """A small body whole, refused past ``limit`` bytes."""
        out = bytearray()
        for chunk in self.stream(r, what):
            out += chunk
            if len(out) > limit:
                discard(r)
                raise self.fail(f"{what}: larger than {limit:,} bytes", "this is not a registry manifest")
        return bytes(out)

    def stream(self, r: urllib3.BaseHTTPResponse, what: str):
        """The body in bounded chunks (``body.read_chunks``); a broken or dripping body is this client's failure."""
        try:
            yield from read_chunks(r, what)
        except BodyBroken as exc:
            raise self.fail(*exc.args) from None
