"""An image archive cut short (a copy that stopped): one line that says so and what to do, not "not a tar
archive", whether the cut falls before the archive's manifest or inside a layer after it."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from audit_helpers import run_cli


def _archive(manifest_first: bool) -> bytes:
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as t:
        info = tarfile.TarInfo("etc/os-release")
        data = b"ID=test\n" * 4000
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    manifest = json.dumps([{"Config": "c.json", "RepoTags": ["t:1"], "Layers": ["0/layer.tar"]}]).encode()
    files = [("c.json", b"{}"), ("0/layer.tar", layer.getvalue())]
    files = [("manifest.json", manifest), *files] if manifest_first else [*files, ("manifest.json", manifest)]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize("manifest_first, says", [
    (False, "the tar archive is truncated (it ends inside a member); save, export or copy it again"),
    (True, "unreadable image archive (unexpected end of data); save the image again")])
def test_a_cut_archive_is_one_line_saying_so(tmp_path, manifest_first, says):
    data = _archive(manifest_first)
    (tmp_path / "task.tar").write_bytes(data[: len(data) // 2])
    r = run_cli("task.tar", cwd=tmp_path)
    assert r.code == 2 and r.stdout == ""
    line, = r.stderr.strip().splitlines()
    assert line.endswith(f"task.tar: {says}"), line
