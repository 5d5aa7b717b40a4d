"""Reading container images without Docker: formats, digests, layer merging.

``open_image`` reads a ``docker save`` archive (legacy or Docker 25+ with an OCI layout inside) or an
OCI image layout (folder or tar), checks every blob digest and every layer's ``diff_id`` (sha256 of the
uncompressed tar, computed while streaming), and ``merge`` applies the layers bottom to top with OCI
whiteouts and opaque folders (applied to lower layers only, wherever the marker sits). Decompressors
are chosen by magic bytes; decompressed bytes are counted against ``image_bytes`` as they stream.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import posixpath
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from .. import zstd_input
from ..targets import inside
from ..tree import TooLarge, open_regular, read_regular
from .strict_tar import BoundedInfo, HeaderTooLarge

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
AUFS_META = (".wh..wh.plnk", ".wh..wh.aufs", ".wh..wh.orph")
JSON_LIMIT = 64 << 20


class LimitHit(Exception):
    """The input cannot be read whole: a safety limit (``name``) or a missing decompressor; every check is
    ``incomplete`` with ``reason``."""

    def __init__(self, name: str, reason: str | None = None):
        super().__init__(name)
        self.name = name
        self.reason = reason or f"the {name} limit was reached while reading the input"


FOREIGN_TYPES = ("nondistributable", "foreign")


def _zstd_reader(buf, layer_index: int):
    """A streaming zstd decompressor; without one the image cannot be read (incomplete, not an error)."""
    stream = zstd_input.decompressor(buf)
    if stream is None:
        raise LimitHit("zstd", f"layer {layer_index} is zstd-compressed and {zstd_input.NO_DECOMPRESSOR}")
    return stream


def _decompression_error(exc: Exception) -> bool:
    return isinstance(exc, (EOFError, zlib.error, OSError, ValueError)) or zstd_input.corrupt(exc)


class _Hashing(io.RawIOBase):
    """Reads through ``raw`` while hashing; optional budget of bytes (a limit name is raised past it)."""

    def __init__(self, raw, budget: list[int] | None = None, limit_name: str = "", what: str | None = None):
        self.raw, self.sha, self.budget, self.limit_name = raw, hashlib.sha256(), budget, limit_name
        self.what = what  # the layer a decompressed stream is of: its read errors are named by it

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self.raw.read(len(b))
        except Exception as exc:
            # gzip ends early (EOFError) or finds bad bytes (BadGzipFile, zlib.error), zstd raises ZstdError:
            # one line naming the layer, never a traceback
            if self.what is None or not _decompression_error(exc):
                raise
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"{self.what}: the compressed layer is truncated or corrupt ({reason}); save or pull "
                             "the image again") from None
        n = len(data)
        if self.budget is not None:
            self.budget[0] -= n
            if self.budget[0] < 0:
                raise LimitHit(self.limit_name)
        self.sha.update(data)
        b[:n] = data
        return n


@dataclass
class Layer:
    index: int
    name: str  # member or blob path inside the archive or folder
    digest: str | None  # blob digest to verify (compressed bytes), None for legacy layer.tar
    diff_id: str | None
    created_by: str = ""
    foreign: bool = False  # a non-distributable layer (media type or LayerSources): it may be left out
    missing: bool = False  # foreign and absent from the archive: merged without it, every check incomplete


@dataclass
class Image:
    kind: str
    tags: list[str]
    config: dict
    config_digest: str | None
    layers: list[Layer]
    annotations: dict[str, str] = field(default_factory=dict)
    source: object = None
    platform: str | None = None
    layer_sources: dict = field(default_factory=dict)  # docker save: diff_id -> descriptor of a foreign layer
    unread: str | None = None  # why the archive could not be read (a limit): every check incomplete

    @property
    def present_layers(self) -> list[Layer]:
        return [x for x in self.layers if not x.missing]

    def missing_reason(self) -> str | None:
        """Why the merged view lacks layers (missing foreign layers make the image routes incomplete)."""
        gone = [x for x in self.layers if x.missing]
        if not gone:
            return None
        return "foreign (non-distributable) layer(s) not in the archive: " + ", ".join(
            f"{x.index} ({(x.diff_id or x.digest or x.name)[:19]}…)" for x in gone) + "; audited without them"

    def open_layer(self, layer: Layer, budget: list[int]) -> tuple[_Hashing, _Hashing, io.IOBase]:
        """(raw hasher, uncompressed hasher, uncompressed stream) of one layer."""
        raw = _Hashing(self.source.open(layer.name))
        buf = io.BufferedReader(raw, 1 << 16)
        magic = buf.peek(4)[:4]
        if magic[:2] == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=buf)
        elif magic == b"\x28\xb5\x2f\xfd":
            stream = _zstd_reader(buf, layer.index)
        else:
            stream = buf
        plain = _Hashing(stream, budget, "image_bytes", what=f"layer {layer.index} ({layer.name})")
        return raw, plain, io.BufferedReader(plain, 1 << 16)


class _TarSource:
    def __init__(self, path: Path, spool: Path | None = None, max_bytes: int | None = None):
        file = path
        if zstd_input.is_zstd(path):  # members are opened in any order: tarfile needs a plain, seekable copy
            try:
                self.copy = zstd_input.PlainCopy(path, spool, max_bytes)  # removed with this source
            except zstd_input.PastLimit:
                raise LimitHit("image_bytes") from None
            file = self.copy.tar
        try:
            self.tar = tarfile.open(file, "r:*", tarinfo=BoundedInfo)
            self.members = {}
            for m in self.tar.getmembers():
                self.members.setdefault(_norm(m.name) or m.name, m)
        except HeaderTooLarge as exc:
            raise InputError(f"{path}: unreadable image archive: {exc}; save the image again") from None
        except (tarfile.TarError, OSError, EOFError) as exc:  # tarfile's "r:*" error spans lines: one line
            raise InputError(f"{path}: unreadable image archive ({' '.join(str(exc).split())}); save the image "
                             "again") from None
        self.path = path

    def _member(self, name: str, depth: int = 0) -> tarfile.TarInfo:
        m = self.members.get(name)
        if m is None:
            raise InputError(f"{self.path}: the archive has no member {name}")
        if m.issym() or m.islnk():
            if depth >= 8:
                raise InputError(f"{self.path}: member link chain too deep at {name}")
            base = posixpath.dirname(name) if m.issym() else ""
            target = _norm(posixpath.join(base, m.linkname))
            if target is None:
                raise InputError(f"{self.path}: member {name} links outside the archive")
            return self._member(target, depth + 1)
        if not m.isreg():
            raise InputError(f"{self.path}: member {name} is not a regular file")
        return m

    def has(self, name: str) -> bool:
        return name in self.members

    def read_small(self, name: str) -> bytes:
        m = self._member(name)
        if m.size > JSON_LIMIT:
            raise InputError(f"{self.path}: {name} is larger than {JSON_LIMIT >> 20} MiB")
        return self.tar.extractfile(m).read()

    def open(self, name: str):
        return self.tar.extractfile(self._member(name))


class _DirSource:
    def __init__(self, path: Path):
        self.path = path

    def _file(self, name: str) -> Path:
        p = inside(self.path, "/" + name)
        if p is None or not p.is_file():
            raise InputError(f"{self.path}: no regular file {name} in the image folder")
        return p

    def has(self, name: str) -> bool:
        p = inside(self.path, "/" + name)
        return p is not None and p.is_file()

    def read_small(self, name: str) -> bytes:
        try:
            data = read_regular(self._file(name), JSON_LIMIT)
        except TooLarge:
            raise InputError(f"{self.path}: {name} is larger than {JSON_LIMIT >> 20} MiB") from None
        if data is None:
            raise InputError(f"{self.path}: cannot read {name}")
        return data

    def open(self, name: str):
        fd = open_regular(self._file(name))
        if fd is None:
            raise InputError(f"{self.path}: {name} is not a regular file")
        return os.fdopen(fd, "rb")


class _FileSource:
    """A rootfs tar (``docker export``): the file itself is the only layer."""

    def __init__(self, path: Path):
        self.path = path

    def open(self, name: str):
        fd = open_regular(self.path)
        if fd is None:
            raise InputError(f"{self.path}: not a regular file")
        return os.fdopen(fd, "rb")


def _norm(name: str) -> str | None:
    """Layer member names: one leading ``./`` or ``/`` stripped (as a prefix), normalised; None when it escapes."""
    if name.startswith("./"):
        name = name[2:]
    elif name.startswith("/"):
        name = name[1:]
    if not name:
        return None
    name = posixpath.normpath(name)
    if name == "." or name.startswith("../") or name == ".." or name.startswith("/"):
        return None
    return name


def _json(source, name: str, what: str, digest: str | None = None):
    data = source.read_small(name)
    if digest is not None:
        _verify(data, digest, name)
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:  # nested past the parser's depth
        raise InputError(f"{what} {name}: not valid JSON ({exc})") from None


def _obj(value, what: str, where) -> dict:
    """``value`` when it is a JSON object, else one line naming the file and the field."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: {what} is not a JSON object; the image layout is damaged, save the image again")
    return value


def _listed(value, kind: type, what: str, where) -> list:
    """A list of `kind` (JSON objects: dict, strings: str; a missing list is empty), else one line naming the
    file and the field."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, kind) for x in value):
        noun = "JSON objects" if kind is dict else "strings"
        raise InputError(f"{where}: {what} is not a list of {noun}; the image layout is damaged, save the image "
                         "again")
    return value


def _digest_of(desc: dict, what: str, where) -> str:
    digest = desc.get("digest")
    if not isinstance(digest, str) or not digest:
        raise InputError(f"{where}: {what} has no digest; the image layout is damaged, save the image again")
    return digest


def _verify(data: bytes, digest: str, name: str) -> None:
    alg, _, hexd = digest.partition(":")
    if alg != "sha256":
        raise InputError(f"{name}: unsupported digest algorithm {alg}")
    if hashlib.sha256(data).hexdigest() != hexd:
        raise InputError(f"{name}: content does not match its digest {digest[:19]}…")


def _blob(digest: str) -> str:
    alg, _, hexd = str(digest).partition(":")
    if not alg or not hexd or "/" in hexd or ".." in hexd:
        raise InputError(f"bad blob digest {digest!r}")
    return f"blobs/{alg}/{hexd}"


DEFAULT_PLATFORM = "linux/amd64"


def platform_of(desc: dict) -> str:
    """An index entry's platform as `os/architecture[/variant]`."""
    p = desc.get("platform") if isinstance(desc.get("platform"), dict) else {}
    return "/".join(str(x) for x in (p.get("os"), p.get("architecture"), p.get("variant")) if x)


def wanted_platform(platform: str | None) -> list[str]:
    """`--platform` (default linux/amd64) as its parts, or one line saying how to write it."""
    want = (platform or DEFAULT_PLATFORM).split("/")
    if not 2 <= len(want) <= 3 or not all(want):
        raise InputError(f"--platform {platform}: give os/architecture[/variant], e.g. linux/amd64 or "
                         "linux/arm64/v8")
    return want


def check_platform(img: Image, platform: str | None, where: str) -> None:
    """An image of one platform (no index to choose from) audited for an explicit `--platform`: its config
    must say that platform, else the audit would read another platform's files than the one asked for."""
    if platform is None or img.platform is not None:
        return
    want = wanted_platform(platform)
    have = platform_of({"platform": img.config})
    if have and have.split("/")[:len(want)] != want[:len(have.split("/"))]:
        raise InputError(f"{where}: the image is for {have}, not {'/'.join(want)}; leave out --platform or give "
                         f"--platform {have}")


def choose_platform(descs: list[dict], platform: str | None, where: str) -> dict:
    """The entry of an image index for `platform` (`os/architecture[/variant]`, default linux/amd64; an entry
    whose platform starts with it, so linux/arm64 takes linux/arm64/v8); without --platform, an index of one
    entry is that entry. Else one line naming the platforms the index has."""
    want = wanted_platform(platform)
    match = [d for d in descs if platform_of(d).split("/")[:len(want)] == want]
    if not match and platform is None and len(descs) == 1:
        match = descs
    if not match:
        have = ", ".join(sorted({platform_of(d) or "?" for d in descs})) or "none"
        raise InputError(f"{where}: no manifest for platform {'/'.join(want)} (the index has: {have}); "
                         "choose one with --platform")
    return match[0]


def open_image(path: Path, kind: str, *, image: str | None = None, platform: str | None = None,
               spool: Path | None = None, max_bytes: int | None = None) -> Image:
    """The image at ``path``. A zstd-compressed archive is decompressed into a temporary folder below ``spool``
    (the audit's private folder; else the system's), up to ``max_bytes`` (the audit's ``image_bytes``; None: no
    limit): past it, the image has no layers and ``unread`` says why (every check incomplete)."""
    if kind == "rootfs-tar":  # one layer, read front to back: a compressed one is decompressed as it streams
        return Image("rootfs-tar", [], {}, None, [Layer(0, path.name, None, None)], source=_FileSource(path))
    try:
        source = _TarSource(path, spool, max_bytes) if path.is_file() else _DirSource(path)
    except LimitHit as exc:
        return Image(kind, [], {}, None, [], unread=exc.reason)
    if kind == "docker-save":
        img = _docker_save(source, path, image)
    else:
        img = _oci(source, path, image, platform)
    finish_image(img, source)
    check_platform(img, platform, str(path))
    return img


def finish_image(img: Image, source) -> None:
    """Attach the source and what the config tells of each layer (``created_by``, ``diff_id``, foreign and
    missing); shared by the archive readers and a registry pull (``pull.py``), whose source is the cache."""
    img.source = source
    where = f"{getattr(source, 'path', 'the image')}: the image config"
    _obj(img.config, "it", where)
    for part in ("config", "rootfs"):
        if img.config.get(part) is not None:
            _obj(img.config[part], part, where)
    # the fields the checks read, of the types the runtime needs (a number for WorkingDir, a list for Labels):
    # one line naming the field, never a traceback
    run_cfg = img.config.get("config") or {}
    for key in ("Env", "Cmd", "Entrypoint"):
        _listed(run_cfg.get(key), str, f"config.{key}", where)
    if run_cfg.get("Labels") is not None:
        _obj(run_cfg["Labels"], "config.Labels", where)
    if not isinstance(run_cfg.get("WorkingDir") or "", str):
        raise InputError(f"{where}: config.WorkingDir is not a string; the image layout is damaged, save the image "
                         "again")
    history = [h for h in _listed(img.config.get("history"), dict, "history", where) if not h.get("empty_layer")]
    for layer, h in zip(img.layers, history, strict=False):
        layer.created_by = str(h.get("created_by", ""))
    diff_ids = (img.config.get("rootfs") or {}).get("diff_ids") or []
    if not isinstance(diff_ids, list):
        raise InputError(f"{where}: rootfs.diff_ids is not a list; the image archive is damaged, save the image "
                         "again")
    diff_ids = [d if isinstance(d, str) else None for d in diff_ids]  # an entry that is no digest checks nothing
    for layer, d in zip(img.layers, diff_ids, strict=False):
        layer.diff_id = d
        layer.foreign = layer.foreign or d in img.layer_sources
    for layer in img.layers:
        # a foreign layer may legitimately be left out of `docker save`; any other absent layer is an error
        layer.missing = layer.foreign and not source.has(layer.name)


def _docker_save(source, path: Path, image: str | None) -> Image:
    manifest = _json(source, "manifest.json", str(path))
    if not isinstance(manifest, list) or not manifest:
        raise InputError(f"{path}: manifest.json lists no image")
    _listed(manifest, dict, "manifest.json's list", path)
    for m in manifest:
        _listed(m.get("RepoTags"), str, "manifest.json's RepoTags", path)
        _listed(m.get("Layers"), str, "manifest.json's Layers", path)
    if len(manifest) > 1 and image is None:
        tags = [t for m in manifest for t in (m.get("RepoTags") or [m.get("Config", "?")])]
        raise InputError(f"{path}: holds {len(manifest)} images; choose one with --image ({', '.join(tags)})")
    chosen = manifest[0] if image is None else next(
        (m for m in manifest if image in (m.get("RepoTags") or []) or image in str(m.get("Config", ""))), None)
    if chosen is None:
        raise InputError(f"{path}: no image {image!r} in manifest.json")
    cname = str(chosen.get("Config", ""))
    cdigest = None
    if cname.startswith("blobs/sha256/"):
        cdigest = "sha256:" + cname.rsplit("/", 1)[1]
    elif cname.endswith(".json") and len(cname) == 69:
        cdigest = "sha256:" + cname[:-5]
    config = _json(source, cname, str(path), cdigest)
    layers = []
    for i, name in enumerate(chosen.get("Layers") or []):
        digest = "sha256:" + name.rsplit("/", 1)[1] if str(name).startswith("blobs/sha256/") else None
        layers.append(Layer(i, str(name), digest, None))
    sources = chosen.get("LayerSources") if isinstance(chosen.get("LayerSources"), dict) else {}
    foreign = {k: v for k, v in sources.items() if isinstance(v, dict) and
               any(t in str(v.get("mediaType", "")) for t in FOREIGN_TYPES)}
    return Image("docker-save", list(chosen.get("RepoTags") or []), config, cdigest, layers, layer_sources=foreign)


def _oci(source, path: Path, image: str | None, platform: str | None) -> Image:
    index = _obj(_json(source, "index.json", str(path)), "index.json", path)

    def ref_name(d: dict) -> str | None:
        notes = d.get("annotations")
        return notes.get("org.opencontainers.image.ref.name") if isinstance(notes, dict) else None

    descs = _listed(index.get("manifests"), dict, "index.json's manifests", path)
    for d in descs:
        _digest_of(d, "a descriptor of index.json", path)
    if image is not None:
        descs = [d for d in descs if image in (ref_name(d), d.get("digest"))]
    if not descs:
        raise InputError(f"{path}: no image {image!r} in index.json" if image else f"{path}: index.json is empty")
    chosen_platform = None
    if len(descs) > 1 and all(isinstance(d.get("platform"), dict) for d in descs) \
            and len({ref_name(d) for d in descs}) == 1:
        # index.json is itself an image index: entries of one image that differ only by platform (as a
        # multi-platform export writes them) are chosen by --platform, as the entries of a nested index are
        descs = [choose_platform(descs, platform, str(path))]
        chosen_platform = platform_of(descs[0]) or None
    if len(descs) > 1:
        names = [ref_name(d) or d.get("digest") for d in descs]
        raise InputError(f"{path}: holds {len(descs)} images; choose one with --image ({', '.join(map(str, names))})")
    desc = descs[0]
    annotations = dict(_obj(desc.get("annotations") or {}, "the manifest descriptor's annotations", path))
    doc = _obj(_json(source, _blob(desc["digest"]), str(path), desc["digest"]), f"manifest {desc['digest'][:19]}…",
               path)
    if desc.get("mediaType") in INDEX_TYPES or doc.get("manifests"):
        plats = _listed(doc.get("manifests"), dict, "the image index's manifests", path)
        desc = choose_platform(plats, platform, str(path))
        chosen_platform = platform_of(desc) or None
        digest = _digest_of(desc, f"the image index's manifest for {chosen_platform or 'its platform'}", path)
        doc = _obj(_json(source, _blob(digest), str(path), digest), f"manifest {digest[:19]}…", path)
    config_desc = _obj(doc.get("config") or {}, "the manifest's config", path)
    config_digest = _digest_of(config_desc, "the manifest's config", path)
    config = _json(source, _blob(config_digest), str(path), config_digest)
    annotations.update(_obj(doc.get("annotations") or {}, "the manifest's annotations", path))
    layer_descs = _listed(doc.get("layers"), dict, "the manifest's layers", path)
    layers = [Layer(i, _blob(_digest_of(d, f"layer {i} of the manifest", path)), d["digest"], None,
                    foreign=any(t in str(d.get("mediaType", "")) for t in FOREIGN_TYPES) or bool(d.get("urls")))
              for i, d in enumerate(layer_descs)]
    tags = [str(annotations["org.opencontainers.image.ref.name"])] \
        if "org.opencontainers.image.ref.name" in annotations else []
    return Image("oci-layout", tags, config, config_digest, layers, annotations, platform=chosen_platform)
