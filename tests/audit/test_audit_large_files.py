"""Files over ``scan_file_bytes``: archives and texts are still read (in an image too, where they were left as
sparse files of zeros), archives nested in archives are opened, and what stays unread is counted in
``stats.not_scanned`` and named under the table. The limit is lowered to 64 KiB so the files stay small."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from batch_helpers import FIXED, repo

from overlap.audit import audit, render_table

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SMALL = {"scan_file_bytes": "64K", "git_timeout": "30"}
MKIMAGE = Path(__file__).parent / "fixtures" / "mkimage.py"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """A clean repository at its base, and the fix as a patch file."""
    root = tmp_path_factory.mktemp("large")
    base, patch = repo(root / "repo", leak=False)
    (root / "fix.patch").write_text(patch)
    return root, base


def _copy(task, tmp_path: Path) -> tuple[Path, dict]:
    root, base = task
    work = tmp_path / "repo"
    shutil.copytree(root / "repo", work, symlinks=True)
    return work, {"base": base, "fix": [str(root / "fix.patch")], "limits": SMALL}


def _tgz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _keys(report) -> dict[str, str]:
    return {f.key: f.severity for f in report.targets[0].findings}


def test_a_text_over_the_scan_limit_is_streamed_for_the_fix(task, tmp_path):
    """A build log ending with the whole patch, over the limit: it was skipped unseen (clean, complete)."""
    work, opts = _copy(task, tmp_path)
    patch = (task[0] / "fix.patch").read_text()
    (work / "build.log").write_text("compiling module, all good so far\n" * 4000 + patch)
    report = audit(str(work), **opts)
    keys = _keys(report)
    assert keys["L1:build.log"] == "critical" and keys["L6:build.log"] == "critical", keys
    assert report.verdict == "leak" and "not_scanned" not in report.targets[0].stats


def test_an_archive_over_the_scan_limit_in_an_image_is_read(task, tmp_path):
    """3 MiB of random bytes and the fixed file in /root/backup.tar.gz: in an image its bytes were never copied
    to the private view (a sparse file of zeros), so the image was clean where the same archive in a repository
    folder leaks."""
    work, opts = _copy(task, tmp_path)
    archive = _tgz({"assets/blob.bin": os.urandom(96 << 10), "src/calc.py": FIXED.encode()})
    assert len(archive) > 64 << 10
    extra = tmp_path / "extra"
    (extra / "root").mkdir(parents=True)
    (extra / "root/backup.tar.gz").write_bytes(archive)
    layer0 = tmp_path / "l0"
    shutil.copytree(work, layer0 / "testbed", symlinks=True)
    image = tmp_path / "img.tar"
    subprocess.run([sys.executable, str(MKIMAGE), str(image), "docker", "t:1", "[]", str(layer0), "clone",
                    str(extra), "backup"], check=True)
    keys = _keys(audit(str(image), **opts))
    assert keys.get("L5:/root/backup.tar.gz") == "critical", keys
    shutil.copy(extra / "root/backup.tar.gz", work / "backup.tar.gz")  # the same, in a repository folder
    assert _keys(audit(str(work), **opts)).get("L5:backup.tar.gz") == "critical"


def test_what_stays_unread_is_counted_and_named(task, tmp_path):
    """A binary over the limit and an archive member over archive_member_bytes are not content-scanned; the
    report said nothing of them ("checks not run: none", no count in the JSON)."""
    work, opts = _copy(task, tmp_path)
    (work / "blob.bin").write_bytes(b"\0ELF" + os.urandom(80 << 10))
    (work / "bundle.tgz").write_bytes(_tgz({"big.bin": b"x" * (40 << 10), "small.txt": b"fine\n"}))
    report = audit(str(work), **{**opts, "limits": {**SMALL, "archive_member_bytes": "32K"}})
    unread = report.targets[0].stats["not_scanned"]
    assert unread["total"] == 2 and not unread["truncated"]
    assert unread["items"] == [{"path": "blob.bin", "reason": "binary, over scan_file_bytes", "size": (80 << 10) + 4},
                               {"path": "bundle.tgz!/big.bin",
                                "reason": "archive member over archive_member_bytes or past the archive's budget"}]
    assert json.loads(report.to_json())["targets"][0]["stats"]["not_scanned"] == unread
    table = render_table(report, width=200)
    assert "not content-scanned: 2 files or archive members, e.g. blob.bin (binary, over scan_file_bytes) " \
           "(+1 more)" in table


def test_a_large_binary_in_an_image_is_counted_not_read_as_zeros(task, tmp_path):
    work, opts = _copy(task, tmp_path)
    layer0, extra = tmp_path / "l0", tmp_path / "extra"
    shutil.copytree(work, layer0 / "testbed", symlinks=True)
    (extra / "opt").mkdir(parents=True)
    (extra / "opt/lib.so").write_bytes(b"\x7fELF\0" + os.urandom(70 << 10))
    image = tmp_path / "img.tar"
    subprocess.run([sys.executable, str(MKIMAGE), str(image), "docker", "t:1", "[]", str(layer0), "clone",
                    str(extra), "lib"], check=True)
    report = audit(str(image), **opts)
    items = report.targets[0].stats["not_scanned"]["items"]
    assert items == [{"path": "/opt/lib.so", "reason": "binary, over scan_file_bytes", "size": (70 << 10) + 5}]


def test_archives_nested_in_archives_are_opened(task, tmp_path):
    """A zip inside a tgz and a tgz inside a tar hold the fixed file: only the outer archive was opened."""
    work, opts = _copy(task, tmp_path)
    inner_zip = io.BytesIO()
    with zipfile.ZipFile(inner_zip, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("calc.py", FIXED)
    (work / "n.tgz").write_bytes(_tgz({"inner.zip": inner_zip.getvalue()}))
    outer = io.BytesIO()
    with tarfile.open(fileobj=outer, mode="w") as t:
        inner = _tgz({"src/calc.py": FIXED.encode()})
        info = tarfile.TarInfo("sdist/pkg-1.0.tar.gz")
        info.size = len(inner)
        t.addfile(info, io.BytesIO(inner))
    (work / "bundle.tar").write_bytes(outer.getvalue())
    report = audit(str(work), **opts)
    by = {f.key: f for f in report.targets[0].findings}
    assert by["L5:n.tgz"].severity == by["L5:bundle.tar"].severity == "critical"
    assert by["L5:n.tgz"].evidence["items"][0]["member"] == "inner.zip!/calc.py"
    assert by["L5:bundle.tar"].evidence["items"][0]["member"] == "sdist/pkg-1.0.tar.gz!/src/calc.py"


def test_nesting_stops_at_its_depth(tmp_path):
    from overlap.audit.content.archives import NESTED_DEPTH, members

    data = FIXED.encode()
    for level in range(NESTED_DEPTH + 2):
        data = _tgz({f"level{level}": data})
    (tmp_path / "deep.tgz").write_bytes(data)
    names = [name for name, _ in members(tmp_path / "deep.tgz", 1 << 20)]
    assert len(names) == NESTED_DEPTH + 1 and names[-1].count("!/") == NESTED_DEPTH
