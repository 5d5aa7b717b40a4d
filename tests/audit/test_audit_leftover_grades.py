"""Two gradings of the leftovers route: L3 bytecode whose only difference from the source is the recorded mtime (info,
checkouts and `touch` change mtimes), and L11 shadowed image files matched by the fixed blob's hash
(whatever their name), not only answer-like names."""

from __future__ import annotations

import io
import os
import py_compile
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from audit_helpers import assert_valid_report, git
from test_audit_fixtures import assert_findings

from overlap.audit import audit

MKIMAGE = Path(__file__).parent / "fixtures/mkimage.py"


def test_bytecode_differing_only_in_source_mtime_is_info(gitfix, tmp_path):
    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    py_compile.compile(str(repo / "src/m1.py"), dfile="src/m1.py")
    py_compile.compile(str(repo / "src/m2.py"), dfile="src/m2.py",
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    os.utime(repo / "src/m1.py", (1_500_000_000, 1_500_000_000))  # same content, another mtime
    os.utime(repo / "src/m2.py", (1_500_000_000, 1_500_000_000))  # hash-based: mtime is not recorded
    git("update-index", "-q", "--refresh", cwd=repo)  # a checkout that stamps new mtimes refreshes the index too
    report = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")])
    assert_findings(report, {}, "clean")
    l3 = [f for f in report.targets[0].findings if f.check == "L3"]
    assert [(f.evidence["source"], f.severity) for f in l3] == [("src/m1.py", "info")]
    assert l3[0].evidence["mtime_only"] is True and l3[0].evidence["source_mtime"] == "2017-07-14T02:40:00Z"


def test_shadowed_files_equal_to_the_fix_are_found_by_hash(gitfix, tmp_path):
    fixed = (gitfix.L / "calc_fixed.py").read_bytes()
    near = fixed.replace(b"issue #42", b"issue #43")  # the fixed size, another content: not the fix
    layers = {"l0": {}, "l1": {"testbed/src/calc.py": fixed, "opt/answer/calc.py": fixed, "opt/other/calc.py": near},
              "l2": {"testbed/src/calc.py": (gitfix.L / "r/src/calc.py").read_bytes(), "opt/answer/.wh.calc.py": b"",
                     "opt/other/.wh.calc.py": b""}}
    shutil.copytree(gitfix.L / "r", tmp_path / "l0/testbed", symlinks=True)
    for layer, files in layers.items():
        for rel, data in files.items():
            (tmp_path / layer / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / layer / rel).write_bytes(data)
    out = tmp_path / "img.tar"
    subprocess.run([sys.executable, str(MKIMAGE), str(out), "docker", "t:1", "[]", str(tmp_path / "l0"), "clone",
                    str(tmp_path / "l1"), "COPY answer", str(tmp_path / "l2"), "RUN git checkout ."], check=True)
    report = audit(str(out), **gitfix.R)
    assert_valid_report(report)
    t = report.targets[0]
    l11 = {f.key: f for f in t.findings if f.check == "L11"}
    assert set(l11) == {"L11:/testbed/src/calc.py", "L11:/opt/answer/calc.py"}
    assert all(f.severity == "info" and f.evidence["equals_fixed"] == "src/calc.py" for f in l11.values())
    assert (l11["L11:/testbed/src/calc.py"].evidence["how"], l11["L11:/opt/answer/calc.py"].evidence["how"]) == \
        ("overwritten", "whiteout")
    assert l11["L11:/opt/answer/calc.py"].evidence["layer"] == 1


def test_a_file_overwritten_in_its_own_layer_is_shadowed_content(gitfix, tmp_path):
    """A layer tar holding a path twice shows the later member, but the earlier one's bytes are still in the
    layer: the reference patch written and then overwritten in one RUN is builder-only content (L11)."""
    shutil.copytree(gitfix.L / "r", tmp_path / "l0/testbed", symlinks=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for data in ((gitfix.L / "fix.patch").read_bytes(), b"nothing here\n"):
            info = tarfile.TarInfo("tmp/fix.patch")
            info.size, info.mtime = len(data), 1_700_000_000
            t.addfile(info, io.BytesIO(data))
    (tmp_path / "l1.tar").write_bytes(buf.getvalue())
    out = tmp_path / "img.tar"
    subprocess.run([sys.executable, str(MKIMAGE), str(out), "docker", "t:1", "[]", str(tmp_path / "l0"), "clone",
                    str(tmp_path / "l1.tar"), "RUN git diff > /tmp/fix.patch; echo nothing here > /tmp/fix.patch"],
                   check=True)
    report = audit(str(out), **gitfix.R)
    assert_valid_report(report)
    l11 = [f for f in report.targets[0].findings if f.check == "L11"]
    assert [(f.key, f.severity) for f in l11] == [("L11:/tmp/fix.patch", "info")]
    ev = l11[0].evidence
    assert (ev["layer"], ev["hidden_by"], ev["how"]) == (1, 1, "overwritten by a later member of the same layer")
    assert ev["hunks"]  # the earlier member, not the visible one, is the reference patch
    assert "written by layer 1, hidden by layer 1" in l11[0].title
