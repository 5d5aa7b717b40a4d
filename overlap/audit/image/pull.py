"""Pulling an image by ``docker://`` reference into the blob cache, and reading it as an OCI image.

``open_registry_image(ref, …)`` is the entry point: it resolves the reference (a tag, a digest; a manifest
list or OCI index resolved to ``--platform``, default ``linux/amd64``), downloads every blob the cache lacks
(each verified while it streams, see ``blobcache``), and returns the ``model.Image`` the image audit reads,
its blobs read straight from the cache (no copy, no link). Before any layer is fetched the manifest is
checked: at most ``MAX_LAYERS`` layers, well-formed sha256 digests, and a total declared size within the
``image_bytes`` limit, so each blob is capped at its declared size and the whole pull at their sum.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...errors import InputError
from .archive import FOREIGN_TYPES, INDEX_TYPES, _oci, finish_image
from .blobcache import BlobCache, BlobMismatch, offline
from .body import discard
from .model import Image
from .platform import check_platform, choose_platform, platform_of
from .reference import RegistryRef, parse_ref
from .sources import JSON_LIMIT

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
ACCEPT = ", ".join((OCI_MANIFEST, DOCKER_MANIFEST, *INDEX_TYPES))
MANIFEST_LIMIT = 4 << 20  # what containerd and the distribution server accept
# far above any real image (overlay file systems stack at most ~128 layers), far below a hostile list
MAX_LAYERS = 4096


@dataclass
class Pulled:
    """What a pull did: the manifest read, where its blobs are, and what crossed the network."""

    ref: RegistryRef
    digest: str  # the image manifest's digest (the platform's, for a multi-platform image)
    manifest: dict
    cache: BlobCache
    platform: str | None = None  # set when a manifest list or index was resolved
    index_digest: str | None = None
    downloaded_bytes: int = 0
    downloaded_blobs: list[str] = field(default_factory=list)
    cached_blobs: list[str] = field(default_factory=list)
    skipped_foreign: list[str] = field(default_factory=list)


class _CacheSource:
    """The source interface of ``sources`` over the cache: a synthetic ``index.json`` naming the manifest."""

    def __init__(self, cache: BlobCache, index: bytes, label: str):
        self.cache, self.index, self.path = cache, index, label

    def _digest(self, name: str) -> str:
        if not name.startswith("blobs/sha256/"):
            raise InputError(f"{self.path}: no {name} in a registry image")
        return "sha256:" + name.rsplit("/", 1)[1]

    def has(self, name: str) -> bool:
        return name in ("index.json", "oci-layout") or self.cache.has(self._digest(name))

    def read_small(self, name: str) -> bytes:
        if name == "index.json":
            return self.index
        data = self.cache.read(self._digest(name), JSON_LIMIT)
        if data is None:
            raise InputError(f"{self.path}: {name} is not in the cache {self.cache.root} (pull again)")
        return data

    def open(self, name: str):
        return self.cache.open(self._digest(name))


def _client(ref: RegistryRef, insecure: Iterable[str], log):
    from .registry import Client  # imported here: an offline run never loads the HTTP client

    return Client(ref, insecure, log)


def _json_doc(ref: RegistryRef, body: bytes, what: str) -> dict:
    try:
        doc = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:  # nested past the parser's depth
        raise InputError(f"{ref.given}: {what} is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(doc, dict):
        raise InputError(f"{ref.given}: {what} is not a JSON object")
    if doc.get("schemaVersion") == 1:
        raise InputError(f"{ref.given}: {what} is a schema 1 manifest, which is not supported; "
                         "push the image again with a current docker, podman or skopeo")
    return doc


class _Puller:
    def __init__(self, ref: RegistryRef, cache: BlobCache, insecure: Iterable[str], log):
        self.ref, self.cache, self.insecure, self.log = ref, cache, insecure, log
        self.offline = offline()
        self._c = None

    @property
    def client(self):
        if self._c is None:
            self._c = _client(self.ref, self.insecure, self.log)
        return self._c

    def missing(self, what: str) -> InputError:
        return InputError(f"{self.ref.given}: {what} is not in the cache {self.cache.root} and OVERLAP_OFFLINE "
                          "is set; pull it once with the network on (unset OVERLAP_OFFLINE)")

    def manifest(self, reference: str, size: int | None = None) -> tuple[str, dict]:
        """(digest, document) of a manifest or index by tag or digest; by digest from the cache when there."""
        by_digest = reference.startswith("sha256:")
        if size is not None and size > MANIFEST_LIMIT:
            raise InputError(f"{self.ref.given}: manifest {reference[:19]}… declares {size:,} bytes, more than "
                             f"{MANIFEST_LIMIT >> 20} MiB")
        if not by_digest and self.offline:
            reference = self.cache.recall(self.ref) or ""
            if not reference:
                raise self.missing(f"tag {self.ref.tag}")
            by_digest = True
        if by_digest:
            body = self.cache.read(reference, MANIFEST_LIMIT)
            if body is not None:
                return reference, _json_doc(self.ref, body, "the manifest")
            if self.offline:
                raise self.missing(f"manifest {reference[:19]}…")
        what = f"manifest {reference if not by_digest else reference[:19] + '…'}"
        r = self.client.get(f"/v2/{self.ref.repo}/manifests/{reference}", accept=ACCEPT, what=what)
        header = r.headers.get("Docker-Content-Digest", "")
        body = self.client.read_body(r, MANIFEST_LIMIT, what)
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        if by_digest and digest != reference:
            raise InputError(f"{self.ref.given}: {what} does not match its digest (the registry sent other content)")
        if not by_digest and header.startswith("sha256:") and header != digest:
            raise InputError(f"{self.ref.given}: {what} does not match the digest the registry announced "
                             f"({header[:19]}…)")
        doc = _json_doc(self.ref, body, what)
        self.cache.put(digest, body)
        if not by_digest:
            self.cache.remember(self.ref, digest)
        return digest, doc

    def blob(self, digest: str, size: int, what: str, pulled: Pulled, progress: Callable[[int], None]) -> None:
        if self.cache.has(digest, size):
            pulled.cached_blobs.append(digest)
            return
        if self.offline:
            raise self.missing(f"{what} ({digest[:19]}…)")
        with self.cache.claim(digest):
            if self.cache.has(digest, size):  # another process fetched it while this one waited
                pulled.cached_blobs.append(digest)
                return
            self._download(digest, size, what, pulled, progress)

    def _download(self, digest: str, size: int, what: str, pulled: Pulled, progress: Callable[[int], None]) -> None:
        r = self.client.get(f"/v2/{self.ref.repo}/blobs/{digest}", what=what)
        length = r.headers.get("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) != size:
            discard(r)
            raise InputError(f"{self.ref.given}: {what} is {int(length):,} bytes on the registry but its manifest "
                             f"declares {size:,}; the image is corrupt")
        with self.cache.writer(digest, size) as w:
            try:
                for chunk in self.client.stream(r, what):
                    w.write(chunk)
                    pulled.downloaded_bytes += len(chunk)
                    progress(len(chunk))
                w.commit()
            except BlobMismatch as exc:
                raise InputError(f"{self.ref.given}: {what} {exc}; nothing was cached") from None
        pulled.downloaded_blobs.append(digest)


def _descriptor(ref: RegistryRef, d: object, what: str) -> tuple[str, int]:
    if not isinstance(d, dict):
        raise InputError(f"{ref.given}: the manifest's {what} is not a descriptor")
    digest, size = d.get("digest"), d.get("size")
    BlobCache.hex_of(str(digest))
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise InputError(f"{ref.given}: the manifest's {what} has no valid size")
    return str(digest), size


def resolve(ref: str | RegistryRef, *, insecure_registries: Iterable[str] = (), cache: BlobCache | None = None) -> str:
    """The digest of the manifest (or index) ``ref`` names now: its own digest, else what its tag points to in
    the registry (with the cache only, what it pointed to when last pulled). One manifest request, no layer."""
    ref = parse_ref(ref) if isinstance(ref, str) else ref
    if ref.reference.startswith("sha256:"):
        return ref.reference
    return _Puller(ref, cache or BlobCache(), insecure_registries, None).manifest(ref.reference)[0]


def pull(ref: str | RegistryRef, *, platform: str | None = None, insecure_registries: Iterable[str] = (),
         cache: BlobCache | None = None, max_bytes: int | None = None,
         log: Callable[[str, str], None] | None = None, stage: Callable[[str], None] | None = None) -> Pulled:
    """Resolve ``ref`` and bring its manifest, config and layers into the cache (only what it lacks).
    ``stage(text)`` (optional) is told of each image and layer and of the bytes so far (the CLI's spinner)."""
    stage = stage or (lambda text: None)
    ref = parse_ref(ref) if isinstance(ref, str) else ref
    cache = cache or BlobCache()
    puller = _Puller(ref, cache, insecure_registries, log)
    stage(f"pulling {ref.canonical()}")
    digest, doc = puller.manifest(ref.reference)
    chosen, index_digest = None, None
    if doc.get("mediaType") in INDEX_TYPES or ("manifests" in doc and "layers" not in doc):
        index_digest = digest
        desc = choose_platform([d for d in doc.get("manifests") or [] if isinstance(d, dict)], platform, ref.given)
        chosen = platform_of(desc) or None
        digest, doc = puller.manifest(*_descriptor(ref, desc, "platform entry"))
    pulled = Pulled(ref, digest, doc, cache, chosen, index_digest)
    layers = doc.get("layers")
    if not isinstance(layers, list):
        raise InputError(f"{ref.given}: the manifest lists no layers (not an image manifest)")
    if len(layers) > MAX_LAYERS:
        raise InputError(f"{ref.given}: the manifest lists {len(layers):,} layers, more than {MAX_LAYERS:,}; "
                         "not an image overlap can audit")
    config = _descriptor(ref, doc.get("config"), "config")
    if config[1] > JSON_LIMIT:
        raise InputError(f"{ref.given}: the image config declares {config[1]:,} bytes, more than "
                         f"{JSON_LIMIT >> 20} MiB")
    blobs = [(*config, "config")]
    for i, d in enumerate(layers):
        digest_i, size_i = _descriptor(ref, d, f"layer {i}")
        if any(t in str(d.get("mediaType", "")) for t in FOREIGN_TYPES) or d.get("urls"):
            pulled.skipped_foreign.append(digest_i)  # never fetched from the URLs it names: audited without it
            continue
        blobs.append((digest_i, size_i, f"layer {i + 1}/{len(layers)}"))
    total = sum(s for _, s, _ in blobs)
    if max_bytes is not None and total > max_bytes:
        raise InputError(f"{ref.given}: the image declares {total:,} bytes of blobs, more than the image_bytes limit "
                         f"({max_bytes:,}); raise it with --limit image_bytes=…")
    done, last = [0], [0.0]
    for digest_i, size_i, what in blobs:
        def progress(n: int, what=what, size_i=size_i) -> None:
            done[0] += n
            now = time.monotonic()
            if now - last[0] > 0.2:
                last[0] = now
                stage(f"pulling {what}: {done[0] / 1e6:,.1f} of {total / 1e6:,.1f} MB")
        stage(f"pulling {what} ({size_i / 1e6:,.1f} MB)")
        puller.blob(digest_i, size_i, what, pulled, progress)
    return pulled


def open_registry_image(ref: str, *, platform: str | None = None, insecure_registries: Iterable[str] = (),
                        cache: BlobCache | None = None, max_bytes: int | None = None,
                        log: Callable[[str, str], None] | None = None,
                        stage: Callable[[str], None] | None = None) -> tuple[Image, Pulled]:
    """Pull ``ref`` (see ``pull``) and open it as the image the audit reads; user mistakes and registry
    failures raise ``InputError`` with one line naming the reference."""
    pulled = pull(ref, platform=platform, insecure_registries=insecure_registries, cache=cache,
                  max_bytes=max_bytes, log=log, stage=stage)
    media = pulled.manifest.get("mediaType") or OCI_MANIFEST
    index = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": media, "digest": pulled.digest, "size": 0}]}).encode()
    source = _CacheSource(pulled.cache, index, pulled.ref.given)
    img = _oci(source, pulled.ref.given, None, None)
    # the reference as given, normalised (not the resolved digest: L9 would read its hex as a commit id)
    img.kind, img.tags, img.platform = "registry", [pulled.ref.canonical()], pulled.platform
    finish_image(img, source)
    check_platform(img, platform, pulled.ref.given)
    return img, pulled
