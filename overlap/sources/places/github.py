"""Files of a public GitHub repo at a pinned commit, downloaded by URL and cached with their sha256.

Used for identity data that lives on GitHub (the ARVO mapping, ARVO-Meta). A cached file is checked
against the sha256 recorded when it was downloaded (and against the registry's pin when one is known),
so a corrupted or swapped cache file is caught instead of silently used.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ...errors import HubUnavailableError, InputError
from .files import FileSource, sha256_of

RAW_URL = "https://raw.githubusercontent.com/{repo}/{revision}/{path}"


def cache_root() -> Path:
    if os.environ.get("OVERLAP_CACHE"):
        return Path(os.environ["OVERLAP_CACHE"])
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("overlap"))


def offline() -> bool:
    flags = (os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("OVERLAP_OFFLINE", ""))
    return any(f.strip().lower() in {"1", "true", "yes", "on"} for f in flags)


@dataclass
class GithubRepo(FileSource):
    """`repo_id` = `owner/name`, `revision` = 40-hex commit. `pins` maps a path to its expected sha256."""

    pins: dict | None = None

    def _cached(self, relpath: str) -> Path:
        return cache_root() / "github" / self.repo_id / self.revision / relpath

    def fetch(self, relpath: str) -> Path:
        path = self._cached(relpath)
        if path.is_file():
            self._verify(relpath, path)
            return path
        hint = (
            f"download {RAW_URL.format(repo=self.repo_id, revision=self.revision, path=relpath)} yourself and "
            f"pass --data NAME=FILE (or a folder laid out like the repo)"
        )
        if offline():
            raise HubUnavailableError(f"{self.repo_id}@{self.revision[:12]}: '{relpath}' is not cached and "
                                      f"offline mode is set; {hint}")
        url = RAW_URL.format(repo=self.repo_id, revision=self.revision, path=relpath)
        try:
            with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed https URL
                data = response.read()
        except (urllib.error.URLError, OSError) as exc:
            raise HubUnavailableError(
                f"cannot download '{relpath}' from GitHub {self.repo_id} ({exc}); {hint}"
            ) from None
        digest = hashlib.sha256(data).hexdigest()
        expected = (self.pins or {}).get(relpath)
        if expected and digest != expected:
            raise InputError(f"{url}: sha256 {digest} differs from the pinned {expected}; not using it")
        path.parent.mkdir(parents=True, exist_ok=True)
        # temp file + rename, so an interrupted download never leaves a half file in the cache.
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
            tmp.write(data)
        Path(tmp.name).replace(path)
        path.with_name(path.name + ".sha256").write_text(digest + "\n")
        return path

    def _verify(self, relpath: str, path: Path) -> None:
        digest = sha256_of(path)
        sidecar = path.with_name(path.name + ".sha256")
        recorded = sidecar.read_text().strip() if sidecar.is_file() else None
        expected = (self.pins or {}).get(relpath) or recorded
        if expected and digest != expected:
            raise InputError(
                f"{path}: cached file's sha256 {digest[:12]}… differs from {expected[:12]}… recorded at download; "
                "delete it to download again"
            )

    def exists(self, relpath: str) -> bool:
        return self._cached(relpath).is_file()
