"""A content-addressed cache of registry blobs: ``<root>/blobs/sha256/<hex>``, root = ``OVERLAP_CACHE`` or the
user cache folder (``platformdirs``: ``~/.cache/overlap`` on Linux).

A blob is written to a temporary file beside its final name (``<root>/tmp``, same file system) while it is
hashed, and renamed into place only when its size and digest match: a cached file is always verified
content, so images that share a base layer download it once, and a blob that failed is never cached or
read. While one process downloads a blob it holds a lock on ``<root>/locks/<hex>`` (``flock``), so the audits
of an image set, run at once in several processes over one cache, fetch a shared layer once: the others wait,
then find it cached. Tags are remembered in ``<root>/refs/<host>/<repo>/<tag>`` (one digest), so an offline run
(``OVERLAP_OFFLINE=1``) can resolve a tag it pulled before.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import InputError
from ..tree import TooLarge, is_regular, open_regular, read_regular
from .reference import RegistryRef

_HEX = re.compile(r"[a-f0-9]{64}")
_TRUE = {"1", "true", "yes", "on"}


def offline() -> bool:
    """Whether only the cache may be used (read when called, so a changed environment is respected). Only
    ``OVERLAP_OFFLINE``: ``HF_HUB_OFFLINE`` is about the Hugging Face Hub alone (clusters often set it), and
    closing registry pulls with it would refuse even a loopback registry."""
    return os.environ.get("OVERLAP_OFFLINE", "").strip().lower() in _TRUE


def default_root() -> Path:
    env = os.environ.get("OVERLAP_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs  # imported here: only a registry pull needs it

    return Path(platformdirs.user_cache_dir("overlap"))


class BlobMismatch(Exception):
    """A streamed blob's size or digest differs from its descriptor; the message says which."""


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class _Writer:
    """Streams one blob into a temporary file, hashing it; ``commit`` verifies and renames."""

    def __init__(self, cache: BlobCache, digest: str, size: int):
        self.cache, self.digest, self.size = cache, digest, size
        self.sha = hashlib.sha256()
        self.written = 0
        tmp = cache.root / "tmp"
        self.folder: int | None = None
        try:
            tmp.mkdir(parents=True, exist_ok=True, mode=0o700)
            if os.open not in os.supports_dir_fd:  # no directory descriptors here (Windows): by name
                fd, name = tempfile.mkstemp(prefix="blob-", suffix=".part", dir=tmp)
            else:
                # the folder is opened without following a link, and the file made inside that very folder: a
                # `tmp` that is (or becomes) a symlink never has a blob written where it points
                self.folder = os.open(tmp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
                name = f"blob-{secrets.token_hex(8)}.part"
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=self.folder)
        except OSError as exc:
            self._close_folder()
            raise InputError(f"{tmp}: cannot write into the blob cache's temporary folder ({exc.strerror or exc}; "
                             "a symbolic link is never followed); remove it, or use another cache "
                             "(OVERLAP_CACHE)") from None
        self.tmp = name if self.folder is not None else Path(name)
        self.fh = os.fdopen(fd, "wb")

    def write(self, chunk: bytes) -> None:
        self.written += len(chunk)
        if self.written > self.size:
            raise BlobMismatch(f"sent more than the {self.size:,} bytes its manifest declares")
        self.sha.update(chunk)
        self.fh.write(chunk)

    def commit(self) -> Path:
        self.fh.close()
        if self.written != self.size:
            raise BlobMismatch(f"ended after {self.written:,} of the {self.size:,} bytes its manifest declares")
        if "sha256:" + self.sha.hexdigest() != self.digest:
            raise BlobMismatch(f"content does not match its digest {self.digest[:19]}…")
        final = self.cache.path(self.digest)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.tmp, final, src_dir_fd=self.folder)
        self.tmp = None
        return final

    def discard(self) -> None:
        if not self.fh.closed:
            self.fh.close()
        if self.tmp is not None:
            try:
                os.unlink(self.tmp, dir_fd=self.folder)
            except FileNotFoundError:
                pass
            self.tmp = None
        self._close_folder()

    def _close_folder(self) -> None:
        if self.folder is not None:
            os.close(self.folder)
            self.folder = None

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()  # after a commit the temporary name is gone already


class BlobCache:
    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root is not None else default_root()

    @staticmethod
    def hex_of(digest: str) -> str:
        alg, _, hexd = str(digest).partition(":")
        if alg != "sha256" or not _HEX.fullmatch(hexd):
            raise InputError(f"unsupported or malformed digest {str(digest)[:80]!r} (only sha256 is supported)")
        return hexd

    def path(self, digest: str) -> Path:
        return self.root / "blobs" / "sha256" / self.hex_of(digest)

    def has(self, digest: str, size: int | None = None) -> bool:
        p = self.path(digest)
        if not is_regular(p):
            return False
        return size is None or p.stat().st_size == size

    def writer(self, digest: str, size: int) -> _Writer:
        self.hex_of(digest)
        return _Writer(self, digest, size)

    @contextmanager
    def claim(self, digest: str) -> Iterator[None]:
        """Held while this process downloads ``digest``; another process sharing the cache waits for it. The
        lock goes with the holder's process (a killed audit never blocks the others); its empty file stays,
        since removing it would let a waiter and a newcomer hold two different locks on one blob."""
        fd = None
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        try:
            import fcntl

            locks = self.root / "locks"
            locks.mkdir(parents=True, exist_ok=True, mode=0o700)
            # the folder itself is never followed either: a `locks` that is a symlink would put lock files
            # wherever it points
            folder = os.open(locks, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow)
            try:
                fd = os.open(self.hex_of(digest), os.O_RDWR | os.O_CREAT | nofollow, 0o600, dir_fd=folder)
            finally:
                os.close(folder)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except (ImportError, OSError, NotImplementedError):  # NotImplementedError: no dir_fd on this system
            # no flock (Windows) or no lock file: concurrent pulls may fetch a shared blob twice, nothing worse
            if fd is not None:
                os.close(fd)
                fd = None
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)

    def put(self, digest: str, data: bytes) -> None:
        """Store small verified content (a manifest) under its digest."""
        with self.writer(digest, len(data)) as w:
            w.write(data)
            w.commit()

    def read(self, digest: str, limit: int) -> bytes | None:
        try:
            data = read_regular(self.path(digest), limit)
        except TooLarge:
            return None
        if data is not None and hashlib.sha256(data).hexdigest() != self.hex_of(digest):
            return None  # changed on disk since it was verified: treated as absent
        return data

    def open(self, digest: str):
        fd = open_regular(self.path(digest))
        if fd is None:
            raise InputError(f"blob {digest[:19]}… is not in the cache {self.root}")
        return os.fdopen(fd, "rb")

    # tags: the digest a tag named when it was last pulled
    def _ref_path(self, ref: RegistryRef) -> Path:
        # host, repo and tag passed the reference grammar: no '..' component, no separator but '/'
        return self.root / "refs" / ref.host.replace(":", "_") / ref.repo / (ref.tag or "latest")

    def remember(self, ref: RegistryRef, digest: str) -> None:
        p = self._ref_path(ref)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".ref-", dir=p.parent)
        with os.fdopen(fd, "w") as fh:
            fh.write(digest + "\n")
        os.replace(tmp, p)

    def recall(self, ref: RegistryRef) -> str | None:
        try:
            data = read_regular(self._ref_path(ref), 200)
        except TooLarge:
            return None
        text = (data or b"").decode("ascii", "replace").strip()
        return text if text.startswith("sha256:") and _HEX.fullmatch(text[7:]) else None
