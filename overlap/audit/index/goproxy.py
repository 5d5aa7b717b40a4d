"""The Go module proxy protocol (``GOPROXY``): ``<module>/@v/list`` (one version a line),
``@v/<version>.info`` (``{"Version", "Time"}``) and ``@v/<version>.zip``. Module paths are escaped as the
protocol says (an upper-case letter becomes ``!`` and its lower case). The protocol carries no archive digest
(the checksum database does, and is not consulted): archives are cached by the SHA-256 of what was read."""

from __future__ import annotations

import json

from .http import Unavailable, redact
from .release import MAX_RELEASES, Release


def escape(path: str) -> str:
    return "".join("!" + c.lower() if c.isupper() else c for c in path)


class GoProxy:
    ecosystem = "go"

    def __init__(self, url: str, cache):
        self.url = url.rstrip("/") + "/"
        self.cache = cache

    def releases(self, name: str) -> list[Release]:
        base = self.url + escape(name) + "/@v/"
        body, _ = self.cache.page(base + "list", None, limit=4 << 20)
        listed = [ln.strip() for ln in body.decode("utf-8", "replace").splitlines() if ln.strip()]
        if len(listed) > MAX_RELEASES:
            raise Unavailable(f"{redact(base)}list: {len(listed):,} versions, over the limit of {MAX_RELEASES:,}")
        out = []
        for ver in dict.fromkeys(listed):
            if "/" in ver or ver.startswith("."):
                self.cache.http.counters.skip("go version with a path in it")
                continue
            out.append(Release(version=ver, url=base + f"{ver}.zip", filename=f"{ver}.zip", kind="go-zip"))
        return out

    def details(self, release: Release) -> None:
        """The upload time from ``@v/<version>.info``, read only for the releases the check reads."""
        info_url = release.url[: -len(".zip")] + ".info"
        try:
            body, _ = self.cache.page(info_url, None, limit=64 << 10)
            doc = json.loads(body)
        except (Unavailable, ValueError, RecursionError):
            self.cache.http.counters.skip("go version without a readable .info")
            return
        when = doc.get("Time") if isinstance(doc, dict) else None
        if isinstance(when, str):
            release.upload_time, release.upload_time_source = when, "index"
