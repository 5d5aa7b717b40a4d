"""The index cache: release archives by the SHA-256 of their content (``<root>/index/sha256/<hex>``), and
the index pages last read, by the SHA-256 of their URL (``<root>/index/pages/<hex>``), root = ``OVERLAP_CACHE``
or the user cache folder (as for image blobs). A sample of tasks from one project downloads each release once.
An archive is streamed into a temporary file, hashed, checked against every digest the index gave and renamed
into place only then: a cached archive is always verified content. With ``OVERLAP_OFFLINE=1`` nothing is
fetched: pages and archives come from the cache or the task says it could not read them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..image.blobcache import default_root
from ..image.body import discard
from .http import Http, Unavailable, redact, timeouts

PAGE_LIMIT = 32 << 20  # an index page (PyPI's largest projects list well under this)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def offline() -> bool:
    """``OVERLAP_OFFLINE`` alone: unlike a registry pull, the index route answers to no other tool's switch."""
    return os.environ.get("OVERLAP_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


class IndexCache:
    def __init__(self, http: Http, root: Path | None = None, offline_only: bool | None = None):
        self.http = http
        self.root = (root or default_root()) / "index"
        self.offline = offline() if offline_only is None else offline_only


    # ------------------------------------------------------------------------------------------- pages
    def page(self, url: str, accept: str | None = None, limit: int = PAGE_LIMIT) -> tuple[bytes, dict[str, str]]:
        """An index document: fetched (and remembered) online, read from the cache offline."""
        where = self.root / "pages" / _key(f"{accept}|{url}")
        if self.offline and not url.startswith("file:"):  # a local index folder is no network
            try:
                meta = json.loads((where.with_suffix(".json")).read_text(encoding="utf-8"))
                return where.read_bytes(), meta["headers"]
            except (OSError, ValueError, KeyError):
                raise Unavailable(f"{redact(url)}: not in the cache and OVERLAP_OFFLINE=1") from None
        body, headers, _ = self.http.get(url, limit, accept)
        keep = {k: v for k, v in headers.items() if k in ("content-type", "last-modified")}
        _write(where, body)
        _write(where.with_suffix(".json"), json.dumps({"url": redact(url), "headers": keep}).encode())
        return body, keep

    def last_modified(self, url: str) -> str | None:
        """An archive's ``Last-Modified`` header without reading its body (an index without upload times);
        remembered, so an offline run sees the same date."""
        where = self.root / "dates" / _key(url)
        if self.offline or url.startswith("file:"):
            try:
                return json.loads(where.read_text(encoding="utf-8"))["last_modified"]
            except (OSError, ValueError, KeyError):
                return None
        r, _ = self.http.open(url)
        value = r.headers.get("Last-Modified")
        discard(r)
        _write(where, json.dumps({"last_modified": value}).encode())
        return value

    # ---------------------------------------------------------------------------------------- archives
    def archive(self, url: str, digests: dict[str, str], size: int | None, limit: int) -> tuple[Path, dict]:
        """(cached file, {"last_modified": …}) of a release archive, verified against ``digests``
        ({"sha256": hex, "sha512": base64 or hex, "sha1": hex}) and the declared ``size``."""
        by_url = self.root / "urls" / _key(url)
        want = digests.get("sha256")
        if want is None:
            try:
                want = json.loads(by_url.read_text(encoding="utf-8"))["sha256"]
            except (OSError, ValueError, KeyError):
                want = None
        if want is not None:
            path = self.root / "sha256" / want
            if path.is_file():
                self.http.counters.archives_cached += 1
                return path, _meta(by_url)
        if self.offline and not url.startswith("file:"):
            raise Unavailable(f"{redact(url)}: not in the cache and OVERLAP_OFFLINE=1")
        if size is not None and size > limit:
            raise Unavailable(f"{redact(url)}: {size:,} bytes, over the archive limit of {limit:,}")
        if url.startswith("file:"):
            from .http import read_file_url

            chunks, headers = iter([read_file_url(url, limit)]), {}
        else:
            r, final = self.http.open(url)
            headers = {k.lower(): v for k, v in r.headers.items()}
            chunks = self.http.stream(r, redact(final))
        tmpdir = self.root / "tmp"
        tmpdir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(prefix="archive-", suffix=".part", dir=tmpdir)
        tmp = Path(name)
        hashes = {"sha256": hashlib.sha256(), "sha512": hashlib.sha512(), "sha1": hashlib.sha1()}
        got = 0
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    got += len(chunk)
                    if got > limit or (size is not None and got > size):
                        bound = f"its declared {size:,} bytes" if size is not None and got > size else \
                            f"the archive limit of {limit:,} bytes"
                        raise Unavailable(f"{redact(url)}: more than {bound}")
                    for h in hashes.values():
                        h.update(chunk)
                    fh.write(chunk)
            if size is not None and got != size:
                raise Unavailable(f"{redact(url)}: {got:,} bytes, the index declared {size:,}")
            for alg, expected in digests.items():
                if not _same(hashes[alg], expected):
                    raise Unavailable(f"{redact(url)}: {alg} differs from the index's (a corrupt or swapped archive)")
            hexdigest = hashes["sha256"].hexdigest()
            final_path = self.root / "sha256" / hexdigest
            final_path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, final_path)
        finally:
            tmp.unlink(missing_ok=True)
        meta = {"sha256": hexdigest, "last_modified": headers.get("last-modified")}
        _write(by_url, json.dumps(meta).encode())
        return final_path, meta


def _same(h, expected: str) -> bool:
    expected = expected.strip()
    if len(expected) == h.digest_size * 2 and all(c in "0123456789abcdefABCDEF" for c in expected):
        return h.hexdigest() == expected.lower()
    try:
        return base64.b64decode(expected, validate=True) == h.digest()
    except ValueError:
        return False


def _meta(by_url: Path) -> dict:
    try:
        return json.loads(by_url.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


__all__ = ["IndexCache", "Unavailable", "timeouts"]
