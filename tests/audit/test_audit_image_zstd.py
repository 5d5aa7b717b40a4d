"""Image archives compressed whole with zstd (``docker save img | zstd > image.tar.zst``): read like the
gzip-compressed ones, through a plain copy in the private folder that counts against ``image_bytes`` and
never outlives the audit; without a zstd decompressor, or when the data is damaged, one line naming the file."""

from __future__ import annotations

import gzip
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
from audit_helpers import assert_valid_report
from test_audit_images import _assert_same_findings

from overlap.audit import audit
from overlap.errors import InputError

zstandard = pytest.importorskip("zstandard")  # a test dependency (the optional `images` extra)


def _compressed(src: Path, out: Path) -> Path:
    data = src.read_bytes()
    # with a checksum, as the zstd command writes it: a flipped byte is always caught
    out.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(data) if out.suffix == ".zst"
                    else gzip.compress(data))
    return out


@pytest.fixture
def temp(tmp_path, monkeypatch) -> Path:
    """The system temporary folder the audit's private folder goes into, watched for leftovers."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.parametrize("name", ["img-validate.tar", "img-validate-oci.tar"])
def test_a_zstd_image_archive_reads_like_a_gzip_one(gitfix, tmp_path, temp, name):
    gz = audit(str(_compressed(gitfix.L / name, tmp_path / f"{name}.gz")), **gitfix.R)
    zst = audit(str(_compressed(gitfix.L / name, tmp_path / f"{name}.zst")), **gitfix.R)
    assert_valid_report(zst)
    assert zst.targets[0].kind == gz.targets[0].kind == ("docker-save" if name == "img-validate.tar" else "oci-layout")
    assert zst.verdict == gz.verdict == "leak"
    assert [(c.id, c.status) for c in zst.targets[0].checks] == [(c.id, c.status) for c in gz.targets[0].checks]
    _assert_same_findings(gz, zst)
    assert list(temp.iterdir()) == []  # the plain copy went with the private folder


def test_a_zstd_rootfs_tar_reads_like_a_gzip_one(gitfix, tmp_path):
    plain = tmp_path / "root.tar"
    with tarfile.open(plain, "w") as t:
        t.add(gitfix.L / "root", arcname=".")
    gz = audit(str(_compressed(plain, tmp_path / "root.tar.gz")), repo_path="/testbed", **gitfix.R)
    zst = audit(str(_compressed(plain, tmp_path / "root.tar.zst")), repo_path="/testbed", **gitfix.R)
    assert zst.targets[0].kind == gz.targets[0].kind == "rootfs-tar"
    assert zst.verdict == gz.verdict == "leak"
    _assert_same_findings(gz, zst)


def test_a_zstd_archive_past_image_bytes_is_incomplete_like_a_gzip_one(gitfix, tmp_path, temp):
    """The plain copy stops at the limit the gzip archive's layers are held to: every check incomplete."""
    src = gitfix.L / "img-validate.tar"
    limits = {"image_bytes": src.stat().st_size // 4}
    for out in (tmp_path / "img.tar.gz", tmp_path / "img.tar.zst"):
        report = audit(str(_compressed(src, out)), limits=limits, **gitfix.R)
        assert_valid_report(report)
        t = report.targets[0]
        assert t.kind == "docker-save" and report.verdict == "incomplete" and report.exit_code == 2, out
        assert {c.status for c in t.checks} == {"incomplete"}, out
        assert all("image_bytes" in c.reason for c in t.checks), out
        assert t.findings == []
    assert list(temp.iterdir()) == []


def test_a_zstd_archive_without_a_decompressor_is_one_line_naming_the_fix(gitfix, tmp_path, monkeypatch):
    zst = _compressed(gitfix.L / "img-validate.tar", tmp_path / "img.tar.zst")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # `import zstandard` now raises ImportError
    monkeypatch.setitem(sys.modules, "compression", None)  # and so does Python 3.14's compression.zstd
    with pytest.raises(InputError) as raised:
        audit(str(zst), **gitfix.R)
    message = str(raised.value)
    assert message.startswith(f"{zst}: a zstd-compressed archive") and "pip install zstandard" in message
    assert "\n" not in message


@pytest.mark.parametrize("damage", ["cut", "flipped"])
def test_a_damaged_zstd_archive_is_one_line_naming_it(gitfix, tmp_path, temp, damage):
    data = _compressed(gitfix.L / "img-validate.tar", tmp_path / "whole.tar.zst").read_bytes()
    bad = tmp_path / f"{damage}.tar.zst"
    bad.write_bytes(data[: len(data) // 2] if damage == "cut" else data[:40] + bytes([data[40] ^ 0xFF]) + data[41:])
    with pytest.raises(InputError) as raised:
        audit(str(bad), **gitfix.R)
    message = str(raised.value)
    assert message.startswith(f"{bad}: the zstd-compressed archive is truncated or corrupt (") and "\n" not in message
    assert list(temp.iterdir()) == []
