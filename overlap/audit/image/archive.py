"""Opening an image archive without Docker: a ``docker save`` archive (legacy or Docker 25+ with an OCI layout
inside), an OCI image layout (folder or tar) or a rootfs tar, read into an ``Image``.

``open_image`` reads the manifests and the config, checks the digest of every JSON blob it reads and the
types of the config fields the checks use, and attaches what the config tells of each layer (``finish_image``,
shared with a registry pull). The layers' own digests and ``diff_id`` are checked while they stream
(``model.Image.open_layer``, read by ``layers.merge``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ...errors import InputError
from .model import Image, Layer, LimitHit
from .platform import check_platform, choose_platform, platform_of
from .sources import _DirSource, _FileSource, _TarSource

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
FOREIGN_TYPES = ("nondistributable", "foreign")


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
