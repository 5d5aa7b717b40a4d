"""Cyber task images without `.git`, pushed to the real loopback registry and audited by reference.

Each image holds a tiny C program's source and its vulnerable build (compiled here with gcc). Some also hold a
build of the fixed code, in a root-only folder or a readable one, under a telling name or a neutral one (a
second build found by its symbols); some a PoC input; some a `User` in the image config. Every expectation is
computed below from how the image was built (who can read what), never taken from the tool's output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from regkit import Builder, umoci

VULN = r"""#include <stdio.h>
#include <string.h>
int parse_record(const char *s) { char buf[8]; strcpy(buf, s); return buf[0]; }
int main(int argc, char **argv) { return argc > 1 ? parse_record(argv[1]) : 0; }
"""
FIXED = VULN.replace("strcpy(buf, s);", "strncpy(buf, s, sizeof buf - 1); buf[7] = 0;")
FIX_PATCH = """--- a/prog.c
+++ b/prog.c
@@ -1,4 +1,4 @@
 #include <stdio.h>
 #include <string.h>
-int parse_record(const char *s) { char buf[8]; strcpy(buf, s); return buf[0]; }
+int parse_record(const char *s) { char buf[8]; strncpy(buf, s, sizeof buf - 1); buf[7] = 0; return buf[0]; }
 int main(int argc, char **argv) { return argc > 1 ? parse_record(argv[1]) : 0; }
"""
GRADER = "#!/bin/sh\n# runs the vulnerable build on the PoC\n/out/prog \"$(cat \"$1\")\"\n"
AGENT_UID = 1000

# id, where the fixed build goes (None: none), its folder root-only, a PoC path, the config's User, tarballs
PLAN = [
    {"id": "c0", "fixed": "/root/fixed/fix_binary", "root_only": True, "poc": None, "user": None},
    {"id": "c1", "fixed": "/root/fixed/fix_binary", "root_only": True, "poc": "/tmp/poc", "user": "1000"},
    {"id": "c2", "fixed": "/opt/fixed/prog", "root_only": False, "poc": None, "user": "agent"},
    {"id": "c3", "fixed": "/opt/build2/prog", "root_only": False, "poc": "/out/crash-0123456789abcdef0123",
     "user": None},
    {"id": "c4", "fixed": None, "root_only": False, "poc": "/root/poc", "user": "1000"},
    {"id": "c5", "fixed": None, "root_only": False, "poc": None, "user": None, "tarballs": True},
]


def need_gcc() -> None:
    if shutil.which("gcc"):
        return
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail("the cyber image tests need gcc; CI must install it (.ci/run)", pytrace=False)
    pytest.skip("the cyber image tests need gcc")


def _gcc(source: str, out: Path, tmp: Path) -> None:
    src = tmp / (out.name + ".c")
    src.write_text(source)
    subprocess.run(["gcc", "-O0", "-o", str(out), str(src)], check=True, capture_output=True)


# ----------------------------------------------------------------------------------------------- oracle
def _readable_by_agent(item: dict, root_only: bool) -> bool:
    """The kernel's rule for this plan: root reads all; uid 1000 cannot pass a 0700 root folder."""
    return item["user"] is None or not root_only


def _grade(item: dict, root_only: bool, readable_grade: str) -> str:
    if item["user"] is None:  # unknown agent: assumed root, said so; root-only files are medium
        return "medium" if root_only else readable_grade
    return readable_grade if not root_only else "info"


def _poc_root_only(item: dict) -> bool:
    return item["poc"] is not None and item["poc"].startswith("/root/")


def expected(item: dict) -> dict:
    sev = []
    if item["fixed"]:
        sev.append(_grade(item, item["root_only"], "high"))
    if item["poc"]:
        sev.append(_grade(item, _poc_root_only(item), "critical"))
    verdict = "leak" if {"critical", "high"} & set(sev) else "suspect" if "medium" in sev else "clean"
    return {"verdict": verdict, "fixed": bool(item["fixed"]),
            "fixed_readable": bool(item["fixed"]) and _readable_by_agent(item, item["root_only"]),
            "poc": bool(item["poc"]),
            "poc_readable": bool(item["poc"]) and _readable_by_agent(item, _poc_root_only(item))}


# ----------------------------------------------------------------------------------------------- images
@pytest.fixture(scope="module")
def cyber(images, tmp_path_factory):
    need_gcc()
    root = tmp_path_factory.mktemp("cyber")
    cc = root / "cc"
    cc.mkdir()
    _gcc(VULN, cc / "vuln", cc)
    _gcc(FIXED, cc / "fixed", cc)
    b = Builder(root / "build")

    def base(rootfs: Path) -> None:
        (rootfs / "etc").mkdir(exist_ok=True)
        (rootfs / "etc/passwd").write_text(f"root:x:0:0:root:/root:/bin/sh\nagent:x:{AGENT_UID}:{AGENT_UID}::"
                                           "/home/agent:/bin/sh\n")
        (rootfs / "etc/group").write_text(f"root:x:0:\nagent:x:{AGENT_UID}:\n")
        for d in ("root", "tmp", "out", "src/prog"):
            (rootfs / d).mkdir(parents=True, exist_ok=True)
        os.chmod(rootfs / "root", 0o700)
        os.chmod(rootfs / "tmp", 0o1777)
        (rootfs / "src/prog/prog.c").write_text(VULN)
        shutil.copy(cc / "vuln", rootfs / "out/prog")
        (rootfs / "out/check.sh").write_text(GRADER)
        os.chmod(rootfs / "out/check.sh", 0o755)

    b.derive("empty", "cyberbase", base, workdir=None)
    for item in PLAN:
        bundle = root / f"bundle-{item['id']}"
        umoci("unpack", "--image", f"{b.layout}:cyberbase", str(bundle))
        fs = bundle / "rootfs"
        history = "RUN true"
        if item["fixed"]:
            dest = fs / item["fixed"].lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(cc / "fixed", dest)
            os.chmod(dest.parent, 0o700 if item["root_only"] else 0o755)
            os.chmod(dest, 0o755)
            history = f"COPY {cc.name}/fixed {item['fixed']}"
        if item["poc"]:
            (fs / item["poc"].lstrip("/")).write_bytes(b"A" * 64)
        if item.get("tarballs"):
            with tarfile.open(fs / "src/prog-1.0.tar.gz", "w:gz") as t:
                t.add(cc / "vuln.c", arcname="prog-1.0/prog.c")
        umoci("repack", "--image", f"{b.layout}:{item['id']}", "--history.created_by", history, str(bundle))
        shutil.rmtree(bundle)
        umoci("config", "--image", f"{b.layout}:{item['id']}", "--config.workingdir", "/src/prog",
              *(["--config.user", item["user"]] if item["user"] else []))
        b.push(item["id"], images.host, f"cyber/{item['id']}:1")
    targets = root / "targets.jsonl"
    targets.write_text("".join(json.dumps({"image": f"docker://{images.host}/cyber/{i['id']}:1", "set": "cyber",
                                           "instance_id": i["id"]}) + "\n" for i in PLAN))
    return {"root": root, "targets": targets, "host": images.host}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from overlap.cli import app; sys.argv = ['overlap', *sys.argv[1:]]; app()"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300)


def test_each_cyber_image_gets_the_verdict_its_build_implies(cyber, cache):
    from overlap.audit import audit

    for item in PLAN:
        report = audit(f"docker://{cyber['host']}/cyber/{item['id']}:1")
        t, = report.targets
        want = expected(item)
        assert t.verdict == want["verdict"], (item, [(f.key, f.severity) for f in t.findings])
        assert {c.reason for c in t.checks if c.id.startswith("G")} == {"no repository"}
        b1 = [f for f in t.findings if f.check == "B1"]
        assert [f.where for f in b1] == ([item["fixed"]] if item["fixed"] else [])
        if item["fixed"]:
            assert b1[0].evidence["layer"]["created_by"].startswith("COPY ") and item["fixed"] in \
                b1[0].evidence["layer"]["created_by"]
            assert b1[0].evidence["readable_by_agent"] is want["fixed_readable"]
            if item["user"] is None and item["root_only"]:
                assert "run the agent as a non-root user" in b1[0].false_positive_hint
        p1 = [f for f in t.findings if f.check == "P1"]
        assert [f.where for f in p1] == ([item["poc"]] if item["poc"] else [])
        graders = [f for f in t.findings if f.check == "P2"]
        assert [g.where for g in graders] == ["/out/check.sh"] and graders[0].evidence["runs"] == ["/out/prog"]


def test_the_per_set_table_counts_fixed_builds_pocs_and_graders_as_built(cyber, cache, tmp_path):
    res = _cli("audit", "--targets", str(cyber["targets"]), "--format", "json", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    s, = doc["sets"]
    wants = {i["id"]: expected(i) for i in PLAN}
    cells = s["cyber"]
    for column, key in (("fixed_builds", "fixed"), ("fixed_builds_readable", "fixed_readable"), ("pocs", "poc"),
                        ("pocs_readable", "poc_readable")):
        ids = sorted(i for i, w in wants.items() if w[key])
        assert cells[column] == {"count": len(ids), "ids": ids}, column
    assert cells["graders"]["distinct"] == 1  # every image runs the same check.sh
    assert s["verdicts"]["leak"]["ids"] == sorted(i for i, w in wants.items() if w["verdict"] == "leak")
    console = _cli("audit", "--targets", str(cyber["targets"]), cwd=tmp_path).stdout
    # the console table: one row a column, the label then the count
    rows = {m[1]: m[2] for m in re.finditer(r"^  (\S.*?) +(\d+)$", console, re.MULTILINE)}
    for label, key in (("fixed builds", "fixed"), ("fixed builds: agent", "fixed_readable"), ("PoC inputs", "poc"),
                       ("PoC inputs: agent", "poc_readable")):
        assert rows.get(label) == str(sum(w[key] for w in wants.values())), (label, console)
    assert "graders: 1 distinct" in console


def test_a_fixed_tarball_is_found_by_the_fix_applied_to_the_shipped_source(images, cache, tmp_path):
    """No tree file, only a source tarball: --fix is applied to its member, and a repo-fix.tar.gz holding the
    fixed file is a leak."""
    b = Builder(tmp_path / "build")

    def add(rootfs: Path) -> None:
        (rootfs / "src/prog").mkdir(parents=True)
        for name, text in (("prog-1.0.tar.gz", VULN), ("repo-fix.tar.gz", FIXED)):
            src = tmp_path / "prog.c"
            src.write_text(text)
            with tarfile.open(rootfs / "src/prog" / name, "w:gz") as t:
                t.add(src, arcname="prog-1.0/prog.c")
        (rootfs / "etc").mkdir()

    b.derive("empty", "tarballs", add, workdir="/src/prog")
    b.push("tarballs", images.host, "cyber/tarballs:1")
    fix = tmp_path / "fix.patch"
    fix.write_text(FIX_PATCH)
    from overlap.audit import audit

    t, = audit(f"docker://{images.host}/cyber/tarballs:1", fix=str(fix)).targets
    assert t.verdict == "leak"
    assert any("repo-fix.tar.gz" in f.where and f.severity in ("critical", "high") for f in t.findings), \
        [(f.key, f.severity) for f in t.findings]
    assert not [c for c in t.checks if c.status == "incomplete"]


def test_a_no_history_swe_image_whose_fixed_file_is_newest(images, cache, tmp_path):
    """A SWE-style image without `.git`: the file the fix changes was written after the rest; T1 names it."""
    old, new = 1_600_000_000, 1_600_000_000 + 86_400
    b = Builder(tmp_path / "build")
    patch = ("--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
             "+    return a + b\n")

    def add(rootfs: Path) -> None:
        pkg = rootfs / "testbed/pkg"
        pkg.mkdir(parents=True)
        for i in range(30):
            (pkg / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
            os.utime(pkg / f"m{i}.py", (old, old))
        (pkg / "calc.py").write_text("def add(a, b):\n    return a + b\n")  # the builder left the fix in
        os.utime(pkg / "calc.py", (new, new))

    b.derive("empty", "swe", add, workdir="/testbed")
    b.push("swe", images.host, "swe/nohistory:1")
    fix = tmp_path / "fix.patch"
    fix.write_text(patch)
    from overlap.audit import audit

    t, = audit(f"docker://{images.host}/swe/nohistory:1", fix=str(fix)).targets
    t1 = [f for f in t.findings if f.check == "T1"]
    assert t.verdict == "leak" and t1 and [g["path"] for g in t1[0].evidence["group"]] == ["pkg/calc.py"]
