"""PyPI-compatible indexes through the simple API (PEP 503 HTML, PEP 691 JSON), as pip reads them.

JSON is asked for first (``Accept``, PEP 691) and HTML taken when that is what comes back. Upload times are
PEP 700's ``upload-time`` (JSON only); an index without them (pypiserver, a static folder) leaves the time to
the archive's ``Last-Modified`` once it is downloaded, and the release says which. Yanking is PEP 592
(``yanked`` in JSON, ``data-yanked`` in HTML): a yanked release still installs with an exact pin, so it counts.
Each version is read from its sdist, else its most generic wheel (``py3-none-any`` first).
"""

from __future__ import annotations

import html.parser
import json
import urllib.parse

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from .http import Unavailable, redact
from .release import MAX_RELEASES, Release

ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"


class _Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.files: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs):
        if tag != "a":
            return
        a = dict(attrs)
        if a.get("href") is None:
            return
        self._open = {"href": a["href"], "yanked": a.get("data-yanked", False) if "data-yanked" in a else False,
                      "text": ""}
        if self._open["yanked"] is None:  # data-yanked with no value: yanked, no reason
            self._open["yanked"] = ""

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data

    def handle_endtag(self, tag):
        if tag == "a" and self._open is not None:
            self.files.append(self._open)
            self._open = None


def parse_page(body: bytes, content_type: str, page_url: str) -> list[dict]:
    """The files of a project page: dicts with filename, url, hashes, upload_time, yanked, size."""
    # a static folder (file://) has no content type: a PEP 691 page is told apart by its first byte
    if "json" in content_type or (not content_type and body.lstrip()[:1] == b"{"):
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError):
            raise Unavailable(f"{redact(page_url)}: not valid PEP 691 JSON") from None
        files = doc.get("files") if isinstance(doc, dict) else None
        if not isinstance(files, list):
            raise Unavailable(f"{redact(page_url)}: PEP 691 JSON without a files list")
        out = []
        for f in files:
            if not isinstance(f, dict) or not isinstance(f.get("filename"), str) or not isinstance(f.get("url"), str):
                continue
            hashes = f.get("hashes") if isinstance(f.get("hashes"), dict) else {}
            y = f.get("yanked", False)
            size = f.get("size") if isinstance(f.get("size"), int) and not isinstance(f.get("size"), bool) else None
            out.append({"filename": f["filename"], "url": urllib.parse.urljoin(page_url, f["url"]),
                        "hashes": {k: v for k, v in hashes.items() if isinstance(v, str)},
                        "upload_time": f.get("upload-time") if isinstance(f.get("upload-time"), str) else None,
                        "yanked": (y if isinstance(y, str) else "") if y else None, "size": size})
        return out
    parser = _Anchors()
    try:
        parser.feed(body.decode("utf-8", "replace"))
    except (AssertionError, ValueError):
        raise Unavailable(f"{redact(page_url)}: unreadable HTML") from None
    out = []
    for a in parser.files:
        url = urllib.parse.urljoin(page_url, a["href"])
        base, _, frag = url.partition("#")
        hashes = {}
        alg, _, value = frag.partition("=")
        if alg in ("sha256", "sha512", "sha1") and value:
            hashes[alg] = value
        filename = urllib.parse.unquote(base.rstrip("/").rpartition("/")[2]) or a["text"].strip()
        out.append({"filename": filename, "url": base, "hashes": hashes, "upload_time": None,
                    "yanked": a["yanked"] if a["yanked"] is not False else None, "size": None})
    return out


def _wheel_rank(filename: str) -> tuple:
    tags = {str(t) for t in parse_wheel_filename(filename)[3]}
    return (0 if "py3-none-any" in tags else 1 if any(t.endswith("none-any") for t in tags) else 2, filename)


class SimpleIndex:
    ecosystem = "pypi"

    def __init__(self, url: str, cache):
        self.url = url.rstrip("/") + "/"
        self.cache = cache

    def releases(self, name: str) -> list[Release]:
        project = canonicalize_name(name)
        page_url = urllib.parse.urljoin(self.url, f"{project}/")
        body, headers = self.cache.page(page_url, ACCEPT)
        files = parse_page(body, headers.get("content-type", ""), page_url)
        if len(files) > MAX_RELEASES * 4:
            raise Unavailable(f"{redact(page_url)}: lists {len(files):,} files, over the limit of "
                              f"{MAX_RELEASES * 4:,} (a hostile or broken index)")
        by_version: dict[str, list[tuple[str, dict]]] = {}
        counters = self.cache.http.counters
        for f in files:
            fn = f["filename"]
            try:
                if fn.endswith(".whl"):
                    fname, ver = parse_wheel_filename(fn)[:2]
                    kind = "wheel"
                else:
                    fname, ver = parse_sdist_filename(fn)
                    kind = "sdist"
            except (InvalidSdistFilename, InvalidWheelFilename, ValueError):
                counters.skip("file name not an sdist or wheel")
                continue
            if canonicalize_name(fname) != project:
                counters.skip("file of another project")
                continue
            by_version.setdefault(str(ver), []).append((kind, f))
        if len(by_version) > MAX_RELEASES:
            raise Unavailable(f"{redact(page_url)}: lists {len(by_version):,} versions, over the limit of "
                              f"{MAX_RELEASES:,} (a hostile or broken index)")
        out = []
        for ver, items in by_version.items():
            sdists = sorted((f for k, f in items if k == "sdist"), key=lambda f: (not f["filename"].endswith(".tar.gz"),
                                                                                f["filename"]))
            wheels = sorted((f for k, f in items if k == "wheel"), key=lambda f: _wheel_rank(f["filename"]))
            kind, f = ("sdist", sdists[0]) if sdists else ("wheel", wheels[0])
            # a version is yanked when every file of it is (PEP 592)
            yanked = [x["yanked"] for _, x in items]
            times = sorted(x["upload_time"] for _, x in items if x["upload_time"])
            out.append(Release(version=ver, url=f["url"], filename=f["filename"], kind=kind, digests=f["hashes"],
                               size=f["size"], upload_time=times[0] if times else None,
                               upload_time_source="index" if times else None,
                               yanked=yanked[0] if all(y is not None for y in yanked) else None))
        return out

    def details(self, release: Release) -> None:
        """Nothing to add: the project page said it all."""
