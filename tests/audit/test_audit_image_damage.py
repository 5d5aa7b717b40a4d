"""Image inputs the runtime would refuse or unpack in its own way: damaged layer tars (Python's tarfile stops
quietly where Go's archive/tar fails), members whose parent is a file or a symlink loop, a folder replaced by a
symlink in the same layer, and OCI layouts whose JSON has the wrong shape. Each refusal is one line naming the
input, the layer and the path; nothing is a traceback or the host's error about some other file."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from overlap.audit import audit
from overlap.audit.context import DEFAULT_LIMITS
from overlap.audit.image.archive import open_image
from overlap.audit.image.layers import merge
from overlap.audit.image.materialise import materialise
from overlap.errors import InputError


def tar_of(entries, fmt: int = tarfile.GNU_FORMAT) -> bytes:
    """A layer tar: (name, data) for files, (name, "->target") for symlinks, (name, None) for folders; a file
    may carry a third item, its PAX headers (written in `fmt`, then PAX)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data, *pax in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            if pax:
                info.pax_headers = pax[0]
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                t.addfile(info)
            elif isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data[2:]
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def docker_save(path: Path, layers: list[bytes]) -> Path:
    """A `docker save` archive of plain layer tars (diff_ids of the bytes as given, damage included)."""
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"WorkingDir": "/testbed"},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(b).hexdigest()
                                                                   for b in layers]},
                         "history": [{"created_by": f"layer {i}"} for i in range(len(layers))]}).encode()
    files = [*((f"l{i}/layer.tar", b) for i, b in enumerate(layers)), ("config.json", config),
             ("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["t:1"],
                                            "Layers": [f"l{i}/layer.tar" for i in range(len(layers))]}]).encode())]
    with tarfile.open(path, "w") as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


BODY = [("etc", None), ("etc/os-release", b"ID=test\n"), ("root", None), ("root/a.txt", b"a\n"),
        ("root/calc.py.orig", b"def add(a, b):\n    return a + b\n")]


def _offset(layer: bytes, name: str) -> int:
    with tarfile.open(fileobj=io.BytesIO(layer)) as t:
        return t.getmember(name).offset


@pytest.mark.parametrize("damage, says", [
    ("cut-inside-header", "the tar ends inside a header block at byte"),
    ("flipped-checksum-bit", "a damaged header block at byte"),
    ("lone-zero-block", "a lone zero block at byte"),
])
def test_a_damaged_layer_tar_is_refused_naming_the_layer(tmp_path, damage, says):
    """tarfile ended the layer quietly at the damage, dropping every member after it (an image then read as
    clean, or as holding no repository); containerd and Docker refuse such a layer."""
    layer = tar_of(BODY)
    at = _offset(layer, "root/calc.py.orig")
    bad = {"cut-inside-header": layer[:at + 100],
           "flipped-checksum-bit": layer[:at] + bytes([layer[at] ^ 0x20]) + layer[at + 1:],
           "lone-zero-block": layer[:at] + bytes(512) + layer[at:]}[damage]
    image = docker_save(tmp_path / "img.tar", [tar_of([("opt", None)]), bad])
    with pytest.raises(InputError) as raised:
        audit(str(image))
    message = str(raised.value)
    assert message.startswith(f"{image}: layer 1 (l1/layer.tar): {says} {at:,}"), message
    assert "\n" not in message and "no git repository" not in message


def _pax_layer(pax: dict[str, str]) -> bytes:
    """BODY, then one file whose PAX header carries ``pax`` (the file's data as declared by the ustar header)."""
    return tar_of([*BODY, ("root/late.txt", b"late\n", pax)], fmt=tarfile.PAX_FORMAT)


@pytest.mark.parametrize("pax, says", [
    ({"size": "99999999999999999999"}, "the tar ends inside a member's data at byte"),
    ({"mtime": "nan"}, "a damaged PAX mtime 'nan' at byte"),
    ({"mtime": "1e30"}, "a damaged PAX mtime '1e30' at byte"),
    ({"path": "root/a\0b"}, "a name with a NUL byte at byte"),
    ({"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "root/s", "GNU.sparse.realsize": "9"},
     "a damaged extended header at byte"),
])
def test_a_pax_header_go_refuses_is_one_line_never_a_hang(tmp_path, pax, says):
    """A declared size beyond the layer's end made tarfile skip it block by block for ever (it ignores the end
    of a stream while it skips); a NaN or 1e30 time, a NUL in a name or an unparsable sparse map was an
    internal error (ValueError, OverflowError). Go's archive/tar refuses each."""
    image = docker_save(tmp_path / "img.tar", [_pax_layer(pax)])
    with pytest.raises(InputError) as raised:
        audit(str(image))
    message = str(raised.value)
    assert message.startswith(f"{image}: layer 0 (l0/layer.tar): {says}") and "\n" not in message, message


def test_a_pax_time_with_a_fraction_reads(tmp_path):
    image = docker_save(tmp_path / "img.tar", [_pax_layer({"mtime": "1700000000.25"})])
    merged = merge(open_image(image, "docker-save"), DEFAULT_LIMITS)
    assert merged.entries["root/late.txt"].mtime == 1700000000.25


def test_two_zero_blocks_end_a_layer_and_what_follows_is_ignored(tmp_path):
    """The runtime stops at the end marker: data after it (tar's padding, a trailer) is no damage."""
    image = docker_save(tmp_path / "img.tar", [tar_of(BODY) + b"trailing bytes after the end"])
    merged = merge(open_image(image, "docker-save"), DEFAULT_LIMITS)
    assert "root/calc.py.orig" in merged.entries


@pytest.mark.parametrize("entries, layers, problem", [
    ([("f", b"file"), ("f/y", b"child of a file")], 1, "/f/y: its parent /f is a file, not a folder"),
    ([("a", "->b"), ("b", "->a"), ("a/x/y", b"through a loop")], 1, "/a/x/y: its parent /b is a symlink loop"),
    ([("f", b"file"), ("a", "->/f")], 2, "/a/y: its parent /f is a file, not a folder"),
])
def test_a_member_whose_parent_is_no_folder_is_refused_naming_layer_and_path(tmp_path, entries, layers, problem):
    """The private view's mkdir met a file or a symlink loop: the audit died with the host's NotADirectoryError
    (the CLI then blamed --out, which was not given)."""
    extra = [tar_of([("a/y", b"child of a symlink to a file")])] if layers == 2 else []
    image = docker_save(tmp_path / "img.tar", [tar_of(entries), *extra])
    with pytest.raises(InputError) as raised:
        audit(str(image))
    message = str(raised.value)
    assert message.startswith(f"{image}: layer {layers - 1} (l{layers - 1}/layer.tar): {problem}"), message
    assert "--out" not in message and "\n" not in message


def test_a_folder_replaced_by_a_symlink_in_the_same_layer_loses_its_files(tmp_path):
    """`opt/d/z` then the symlink `opt/d`: the runtime removes the folder (and z) and writes the symlink."""
    layer = tar_of([("opt", None), ("opt/d/z", b"z"), ("opt/d", "->/root"), ("root", None)])
    image = open_image(docker_save(tmp_path / "img.tar", [layer]), "docker-save")
    merged = merge(image, DEFAULT_LIMITS)
    assert "opt/d/z" not in merged.entries and merged.entries["opt/d"].kind == "symlink"
    view = tmp_path / "view"
    materialise(image, merged, view, DEFAULT_LIMITS)
    assert os.readlink(view / "opt/d") == "/root"


def test_a_folder_replaced_by_a_file_in_a_later_layer_shows_its_files_as_hidden(tmp_path):
    layers = [tar_of([("opt", None), ("opt/d/fix.patch", b"+fixed\n")]), tar_of([("opt/d", b"now a file")])]
    merged = merge(open_image(docker_save(tmp_path / "img.tar", layers), "docker-save"), DEFAULT_LIMITS)
    assert merged.entries["opt/d"].kind == "file" and "opt/d/fix.patch" not in merged.entries
    assert [(s["path"], s["layer"], s["hidden_by"]) for s in merged.shadowed] == [("/opt/d/fix.patch", 0, 1)]


def _oci_layout(root: Path) -> Path:
    """An OCI layout folder with one image of one layer."""
    blobs = root / "blobs/sha256"
    blobs.mkdir(parents=True)

    def blob(data: bytes) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return {"digest": "sha256:" + digest, "size": len(data)}

    layer = tar_of(BODY)
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
                         "history": [{"created_by": "body"}]}).encode()
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **blob(config)},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **blob(layer)}]}
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": manifest["mediaType"], **blob(json.dumps(manifest).encode())}]}))
    return root


def _rewrite_manifest(root: Path, edit) -> None:
    index = json.loads((root / "index.json").read_text())
    blobs = root / "blobs/sha256"
    manifest = json.loads((blobs / index["manifests"][0]["digest"][7:]).read_text())
    edit(manifest)
    data = json.dumps(manifest).encode()
    (blobs / hashlib.sha256(data).hexdigest()).write_bytes(data)
    index["manifests"][0].update(digest="sha256:" + hashlib.sha256(data).hexdigest(), size=len(data))
    (root / "index.json").write_text(json.dumps(index))


@pytest.mark.parametrize("case, says", [
    ("index-is-a-list", "index.json is not a JSON object"),
    ("manifests-is-a-string", "index.json's manifests is not a list of JSON objects"),
    ("descriptor-without-digest", "a descriptor of index.json has no digest"),
    ("layer-without-digest", "layer 0 of the manifest has no digest"),
    ("layers-is-a-string", "the manifest's layers is not a list of JSON objects"),
    ("history-of-strings", "the image config: history is not a list of JSON objects"),
    ("env-of-numbers", "the image config: config.Env is not a list of strings"),
    ("workingdir-a-number", "the image config: config.WorkingDir is not a string"),
    ("labels-a-list", "the image config: config.Labels is not a JSON object"),
])
def test_a_malformed_oci_layout_is_one_line_naming_the_file(tmp_path, case, says):
    """Each was an internal error (AttributeError, TypeError, KeyError) instead of an input error."""
    root = _oci_layout(tmp_path / "oci")
    index = root / "index.json"
    if case == "index-is-a-list":
        index.write_text("[1, 2]")
    elif case == "manifests-is-a-string":
        index.write_text('{"manifests": "nope"}')
    elif case == "descriptor-without-digest":
        index.write_text('{"manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json"}]}')
    elif case == "layer-without-digest":
        _rewrite_manifest(root, lambda m: m["layers"][0].pop("digest"))
    elif case == "layers-is-a-string":
        _rewrite_manifest(root, lambda m: m.update(layers="nope"))
    else:
        blobs = root / "blobs/sha256"
        config = json.dumps({"config": {"env-of-numbers": {"Env": [1, None]}, "workingdir-a-number": {"WorkingDir": 5},
                                        "labels-a-list": {"Labels": ["a=b"]}}.get(case, {}),
                             "rootfs": {"diff_ids": []}, "history": ["x"] if case == "history-of-strings" else []}
                            ).encode()
        (blobs / hashlib.sha256(config).hexdigest()).write_bytes(config)
        _rewrite_manifest(root, lambda m: m["config"].update(digest="sha256:" + hashlib.sha256(config).hexdigest(),
                                                             size=len(config)))
    with pytest.raises(InputError) as raised:
        audit(str(root))
    message = str(raised.value)
    assert message.startswith(f"{root}: ") and says in message and "\n" not in message, message


def test_the_intact_layout_reads(tmp_path):
    img = open_image(_oci_layout(tmp_path / "oci"), "oci-layout")
    assert [x.diff_id is not None for x in img.layers] == [True]


@pytest.mark.parametrize("link", ["root", "/root", "./root"])
def test_a_whiteout_under_a_symlinked_folder_removes_the_file_the_link_leads_to(tmp_path, link):
    """`r -> root` in a lower layer, then `r/.wh.calc.py.orig`: the runtime resolves the marker's folder in the
    root and deletes /root/calc.py.orig; the merged view kept it (an audit reported a leak the container has
    not). An opaque marker under the link empties the folder it leads to."""
    lower = tar_of([("root", None), ("root/calc.py.orig", b"the fix"), ("root/keep", b"x"), ("r", "->" + link)])
    image = docker_save(tmp_path / "img.tar", [lower, tar_of([("r/.wh.calc.py.orig", b"")])])
    entries = merge(open_image(image, "docker-save"), DEFAULT_LIMITS).entries
    assert "root/calc.py.orig" not in entries and "root/keep" in entries
    opaque = docker_save(tmp_path / "opq.tar", [lower, tar_of([("r/.wh..wh..opq", b"")])])
    entries = merge(open_image(opaque, "docker-save"), DEFAULT_LIMITS).entries
    assert not any(k.startswith("root/") for k in entries) and "root" in entries
