"""The npm registry: one package document (``GET /<name>``, scoped names as ``@scope%2fname``) with every
version's ``dist.tarball`` and ``dist.integrity`` (or the older ``shasum``), and the ``time`` map of publish
times. npm has no yanking (an unpublished version is gone); ``deprecated`` is reported as the yank reason is
for PyPI, since such a version still installs."""

from __future__ import annotations

import json
import urllib.parse

from .http import Unavailable, redact
from .release import MAX_RELEASES, Release


def _integrity(dist: dict) -> dict[str, str]:
    out = {}
    for item in str(dist.get("integrity") or "").split():
        alg, _, value = item.partition("-")
        if alg in ("sha512", "sha256", "sha1") and value:
            out[alg] = value
    if isinstance(dist.get("shasum"), str) and "sha1" not in out:
        out["sha1"] = dist["shasum"]
    return out


class NpmRegistry:
    ecosystem = "npm"

    def __init__(self, url: str, cache):
        self.url = url.rstrip("/") + "/"
        self.cache = cache

    def releases(self, name: str) -> list[Release]:
        doc_url = self.url + urllib.parse.quote(name, safe="@")
        body, _ = self.cache.page(doc_url, "application/json")
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError):
            raise Unavailable(f"{redact(doc_url)}: not a JSON package document") from None
        versions = doc.get("versions") if isinstance(doc, dict) else None
        if not isinstance(versions, dict):
            raise Unavailable(f"{redact(doc_url)}: package document without versions")
        if len(versions) > MAX_RELEASES:
            raise Unavailable(f"{redact(doc_url)}: lists {len(versions):,} versions, over the limit of "
                              f"{MAX_RELEASES:,} (a hostile or broken registry)")
        times = doc.get("time") if isinstance(doc.get("time"), dict) else {}
        out = []
        for ver, meta in versions.items():
            dist = meta.get("dist") if isinstance(meta, dict) else None
            if not isinstance(dist, dict) or not isinstance(dist.get("tarball"), str):
                self.cache.http.counters.skip("npm version without a tarball")
                continue
            t = times.get(ver) if isinstance(times.get(ver), str) else None
            dep = meta.get("deprecated")
            out.append(Release(version=ver, url=urllib.parse.urljoin(doc_url, dist["tarball"]),
                               filename=dist["tarball"].rpartition("/")[2], kind="npm-tarball",
                               digests=_integrity(dist), upload_time=t, upload_time_source="index" if t else None,
                               yanked=("deprecated: " + dep[:200]) if isinstance(dep, str) and dep else None))
        return out

    def details(self, release: Release) -> None:
        """Nothing to add: the package document said it all."""
