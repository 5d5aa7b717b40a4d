"""Damaged stores. A pack whose compressed data is damaged: git lists its objects (headers only) and fails when
one is read, quoting the pack file it read. The read check is incomplete, and in an image that quote names the
image's path, never the audit's private copy (the report names no temporary path and stays byte-identical between
runs). A damaged index: git's diff-tree reads it and dies, but history does not depend on it, so only the checks
that read the index (G7, T2) are incomplete and a fix commit in the store is still found."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from audit_helpers import CALC_DATES, CALC_FIX_PATCH, calc_repo, git

from overlap.audit import audit

FIX_PATCH = CALC_FIX_PATCH
DATES = CALC_DATES


def _damaged_repo(root: Path) -> Path:
    """calc.py at the base; an unreachable commit holding a near copy of the fix and other.txt, packed, with
    other.txt's compressed bytes overwritten."""
    calc_repo(root)
    git("checkout", "-q", "-b", "side", cwd=root)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b  # the sum, as the tests ask\n\nx = 1\n")
    (root / "other.txt").write_text("z" * 40 + " other\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "side", cwd=root, env=DATES)
    other = git("rev-parse", "HEAD:other.txt", cwd=root).strip()
    git("checkout", "-q", "main", cwd=root)
    git("repack", "-qad", cwd=root)
    git("branch", "-qD", "side", cwd=root)
    git("reflog", "expire", "--expire=now", "--all", cwd=root)
    idx = next((root / ".git" / "objects" / "pack").glob("*.idx"))
    offset = next(int(line.split()[4]) for line in git("verify-pack", "-v", str(idx), cwd=root).splitlines()
                  if line.startswith(other))
    pack = idx.with_suffix(".pack")
    pack.chmod(0o644)
    with open(pack, "r+b") as fh:
        fh.seek(offset + 5)
        fh.write(b"garbage")
    return root


def _image(path: Path, repo: Path) -> Path:
    import hashlib

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        t.add(repo, arcname="testbed")
    layer = buf.getvalue()
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"WorkingDir": "/testbed"},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}})
    files = [("config.json", config.encode()), ("0/layer.tar", layer),
             ("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["t:1"],
                                            "Layers": ["0/layer.tar"]}]).encode())]
    with tarfile.open(path, "w") as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def test_damaged_pack_in_an_image_names_no_private_path(tmp_path):
    image = _image(tmp_path / "task.tar", _damaged_repo(tmp_path / "repo"))
    fix = tmp_path / "fix.patch"
    fix.write_text(FIX_PATCH)
    first, second = (audit(str(image), fix=[str(fix)]).to_json() for _ in range(2))
    assert first == second and "overlap-audit-" not in first
    checks = {c["id"]: c for c in json.loads(first)["targets"][0]["checks"]}
    assert checks["F3"]["status"] == "incomplete"
    reason = checks["F3"]["reason"]
    assert "git cat-file failed" in reason
    if "stored in" in reason:  # git names the pack it read: as the container sees it
        assert "stored in /testbed/.git/objects/pack/pack-" in reason


@pytest.mark.parametrize("index", [b"", b"\x00" * 100, b"DIRC\x00\x00\x00\x02\x7f\xff\xff\xff" + b"\x00" * 64])
def test_damaged_index_leaves_history_checks_running(tmp_path, index):
    root = tmp_path / "repo"
    root.mkdir()
    git("init", "-q", "-b", "main", cwd=root)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "base", cwd=root, env=DATES)
    base = git("rev-parse", "HEAD", cwd=root).strip()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b  # the sum, as the tests ask\n")
    git("commit", "-qam", "fix", cwd=root, env=DATES)
    git("reset", "-q", "--hard", base, cwd=root)
    git("reflog", "expire", "--expire=now", "--all", cwd=root)
    (root / ".git" / "index").write_bytes(index)
    fix = tmp_path / "fix.patch"
    fix.write_text(FIX_PATCH)
    report = audit(str(root), fix=[str(fix)])
    assert report.verdict == "leak"
    assert {"G6", "F1"} <= {f.check for f in report.targets[0].findings if f.severity == "critical"}
    incomplete = {c.id for c in report.targets[0].checks if c.status == "incomplete"}
    assert incomplete == {"G7", "T2"}
