"""Image layers the reader cannot take whole: zstd layers with and without a zstd decompressor,
and foreign (non-distributable) layers left out of the archive. Both give `incomplete`, never a crash
or an input error; a missing layer that is not foreign stays an input error."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
from audit_helpers import assert_valid_report
from test_audit_fixtures import assert_findings
from test_audit_images import _assert_same_findings

from overlap.audit import audit
from overlap.errors import InputError

FOREIGN_OCI = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"
FOREIGN_DOCKER = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"


def _extract(tar: Path, out: Path) -> Path:
    with tarfile.open(tar) as t:
        t.extractall(out, filter="data")
    return out


def _blob(blobs: Path, data: bytes, write: bool = True) -> str:
    h = hashlib.sha256(data).hexdigest()
    if write:
        (blobs / h).write_bytes(data)
    return "sha256:" + h


def _edit_oci(oci_dir: Path, edit) -> None:
    """Rewrite an OCI layout's manifest and config through ``edit(manifest, config, blobs)``."""
    blobs = oci_dir / "blobs/sha256"
    index = json.loads((oci_dir / "index.json").read_text())
    man = json.loads((blobs / index["manifests"][0]["digest"].split(":")[1]).read_text())
    config = json.loads((blobs / man["config"]["digest"].split(":")[1]).read_text())
    edit(man, config, blobs)
    cdata = json.dumps(config, sort_keys=True).encode()
    man["config"].update(digest=_blob(blobs, cdata), size=len(cdata))
    mdata = json.dumps(man).encode()
    index["manifests"][0].update(digest=_blob(blobs, mdata), size=len(mdata))
    (oci_dir / "index.json").write_text(json.dumps(index))


def _one_file_layer(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def zstd_oci(gitfix, tmp_path) -> Path:
    zstandard = pytest.importorskip("zstandard")
    oci_dir = _extract(gitfix.L / "img-validate-oci.tar", tmp_path / "oci")

    def to_zstd(man, config, blobs):
        for layer in man["layers"]:
            raw = gzip.decompress((blobs / layer["digest"].split(":")[1]).read_bytes())
            z = zstandard.ZstdCompressor().compress(raw)
            layer.update(digest=_blob(blobs, z), size=len(z), mediaType="application/vnd.oci.image.layer.v1.tar+zstd")

    _edit_oci(oci_dir, to_zstd)
    return oci_dir


def test_zstd_layers_read_like_gzip(gitfix, zstd_oci):
    _assert_same_findings(audit(gitfix.path("img-validate-oci.tar"), **gitfix.R), audit(str(zstd_oci), **gitfix.R))


def test_zstd_layers_without_a_decompressor_are_incomplete(gitfix, zstd_oci, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # `import zstandard` now raises ImportError
    monkeypatch.setitem(sys.modules, "compression", None)  # and so does Python 3.14's compression.zstd
    report = audit(str(zstd_oci), **gitfix.R)
    t = report.targets[0]
    assert report.verdict == "incomplete" and report.exit_code == 2 and not report.complete
    assert {c.status for c in t.checks} == {"incomplete"}
    assert all("zstd-compressed" in c.reason and "zstandard" in c.reason for c in t.checks)
    assert t.findings == []


def test_missing_foreign_oci_layer_is_incomplete_and_the_rest_is_audited(gitfix, tmp_path):
    oci_dir = _extract(gitfix.L / "img-validate-oci.tar", tmp_path / "oci")
    base = _one_file_layer("Windows/System32/kernel32.dll", b"MZ" + b"\0" * 64)
    gz = gzip.compress(base, mtime=0)

    def add_foreign_base(man, config, blobs):
        man["layers"].insert(0, {"mediaType": FOREIGN_OCI, "digest": _blob(blobs, gz, write=False),
                                 "size": len(gz), "urls": ["https://example.invalid/base.tar.gz"]})
        config["rootfs"]["diff_ids"].insert(0, "sha256:" + hashlib.sha256(base).hexdigest())
        config["history"].insert(0, {"created_by": "foreign base"})

    _edit_oci(oci_dir, add_foreign_base)
    report = audit(str(oci_dir), **gitfix.R)
    t = report.targets[0]
    assert_valid_report(report)
    assert report.verdict == "leak" and not report.complete  # a leak in the layers present still counts
    keys = {f.key for f in t.findings}
    assert {"T1:worktree", "T3:layers", "L8:config.Env.0", "L11:/tmp/fix.patch"} <= keys
    ran = [c for c in t.checks if c.status != "not_applicable"]
    assert ran and all(c.status == "incomplete" and "foreign (non-distributable) layer(s)" in c.reason for c in ran)
    assert t.image["layers"][0]["created_by"] == "foreign base"


def test_missing_foreign_docker_layer_is_incomplete(gitfix, tmp_path):
    """`docker save` names a foreign layer in LayerSources and leaves its layer.tar out."""
    d = _extract(gitfix.L / "ctl-img.tar", tmp_path / "docker")
    manifest = json.loads((d / "manifest.json").read_text())
    entry = manifest[0]
    config = json.loads((d / entry["Config"]).read_text())
    base = _one_file_layer("Windows/System32/kernel32.dll", b"MZ" + b"\0" * 64)
    diff_id = "sha256:" + hashlib.sha256(base).hexdigest()
    config["rootfs"]["diff_ids"].insert(0, diff_id)
    config["history"].insert(0, {"created_by": "foreign base"})
    cdata = json.dumps(config, sort_keys=True).encode()
    (d / entry["Config"]).unlink()
    entry["Config"] = hashlib.sha256(cdata).hexdigest() + ".json"
    (d / entry["Config"]).write_bytes(cdata)
    entry["Layers"].insert(0, "foreign/layer.tar")
    entry["LayerSources"] = {diff_id: {"mediaType": FOREIGN_DOCKER, "size": len(base), "digest": diff_id,
                                       "urls": ["https://example.invalid/base.tar"]}}
    (d / "manifest.json").write_text(json.dumps(manifest))
    report = audit(str(d), **gitfix.R)
    assert report.verdict == "incomplete" and report.exit_code == 2
    assert_findings(report, {}, "incomplete")
    # present after all (an archive that kept it): read like any layer, and the image is clean
    (d / "foreign").mkdir()
    (d / "foreign/layer.tar").write_bytes(base)
    assert_findings(audit(str(d), **gitfix.R), {}, "clean")
    # a missing layer that is not foreign is still an input error
    shutil.rmtree(d / "foreign")
    del entry["LayerSources"]
    (d / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="foreign/layer.tar"):
        audit(str(d), **gitfix.R)

