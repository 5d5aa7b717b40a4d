"""L4: every cache family docs/audit.md names, built by hand on a copy of the clean root filesystem
(`ctl-root`). The leak variant holds the fix, the hidden tests or their IDs; the control holds
the same caches filled from base B only and must stay clean."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tarfile
import zipfile
from pathlib import Path

import pytest
from audit_helpers import assert_valid_report
from test_audit_fixtures import assert_findings

from overlap.audit import audit
from overlap.audit.checks.caches import cache_kind

BASE_CALC = "def add(a, b):\n    return a - b\n"
GO_ID = "calc_test.go::TestAdd"  # a Go hidden test, named in `go test` output by its bare name


def _zip(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)
    return buf.getvalue()


def _tgz(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _coverage_db(path: Path, contexts: list[str]) -> None:
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE file (id INTEGER PRIMARY KEY, path TEXT);"
                      "CREATE TABLE context (id INTEGER PRIMARY KEY, context TEXT);")
    con.execute("INSERT INTO file (path) VALUES ('/testbed/src/calc.py')")
    con.executemany("INSERT INTO context (context) VALUES (?)", [(c,) for c in contexts])
    con.commit()
    con.close()


def _mypy(names: list[str]) -> str:
    table = {".class": "SymbolTable", "__name__": {".class": "SymbolTableNode", "kind": "Gdef"},
             "add": {".class": "SymbolTableNode", "cross_ref": "src.calc.add", "kind": "Gdef"}}
    table.update({n: {".class": "SymbolTableNode", "kind": "Gdef", "node": {".class": "FuncDef"}} for n in names})
    return json.dumps({".class": "MypyFile", "_fullname": "tests.test_calc", "names": table})


def add_caches(root: Path, calc: str, test: str, go_test: str) -> dict[str, str]:
    """Write one cache of each L4 family into ``root``; returns path → bytes written (for keys)."""
    files: dict[str, bytes] = {
        "testbed/.pytest_cache/v/cache/lastfailed": json.dumps({f"tests/test_calc.py::{test}": True}).encode(),
        "tmp/jest_rs/jest-transform-cache-3f2a/1a/calc_1a2b3c": f'"use strict";\n{calc}\n//# map'.encode(),
        "root/.cache/go-build/3f/3fa4c1-d": f"=== RUN   {go_test}\n--- FAIL: {go_test} (0.00s)\nFAIL\n".encode(),
        "root/.m2/repository/org/calc/2.0-SNAPSHOT/calc-2.0-SNAPSHOT.jar": _zip({"calc/calc.py": calc}),
        "root/.gradle/caches/build-cache-1/0a1b2c3d4e": _tgz({
            "tree-testResults/TEST-tests.test_calc.xml":
                f'<testsuite><testcase classname="tests.test_calc" name="{test}" time="0.1"/></testsuite>'}),
        "root/.cache/bazel/_bazel_root/ab12/execroot/_main/bazel-out/k8-fastbuild/testlogs/calc/test.log":
            f"tests/test_calc.py::{test} PASSED\n".encode(),
        "root/.julia/compiled/v1.10/Calc/abcd.ji": b"\0JLCACHE\0" + calc.encode() + b"\0",
        "testbed/.mypy_cache/3.11/tests/test_calc.data.json": _mypy([test, "test_old"]).encode(),
        "testbed/.ruff_cache/0.4.1/1234567890": b"\x02\0\0src/calc.py\0" + calc.encode() + b"\0",
        "root/.cache/pip/wheels/ab/cd/calc-2.0-py3-none-any.whl":
            _zip({"calc/calc.py": calc + "\n\ndef mul(a, b):\n    return a * b\n"}),
        # pip's old HTTP cache: a serialised response header, then the wheel's bytes
        "root/.cache/pip/http/a/b/c/d/e/abcdef0123": b"cc=4,\x83\xa8response\x00" + _zip({"calc/calc.py": calc}),
    }
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    _coverage_db(root / "testbed/.coverage", ["", f"tests/test_calc.py::{test}|run"])
    return {"/" + rel: "" for rel in [*files, "testbed/.coverage"]}


@pytest.fixture(scope="module")
def cache_roots(gitfix, tmp_path_factory):
    out = {}
    fixed = (gitfix.L / "calc_fixed.py").read_text()
    for name, calc, test, go_test in (("leak", fixed, "test_add", "TestAdd"), ("ctl", BASE_CALC, "test_old",
                                                                                "TestOld")):
        root = tmp_path_factory.mktemp("caches") / name
        shutil.copytree(gitfix.L / "ctl-root", root, symlinks=True)
        out[name] = (root, add_caches(root, calc, test, go_test))
    return out


EXPECTED_LEAK = {
    "/testbed/.pytest_cache/v/cache/lastfailed": "high",
    "/tmp/jest_rs/jest-transform-cache-3f2a/1a/calc_1a2b3c": "critical",
    "/root/.cache/go-build/3f/3fa4c1-d": "high",
    "/root/.m2/repository/org/calc/2.0-SNAPSHOT/calc-2.0-SNAPSHOT.jar": "critical",
    "/root/.gradle/caches/build-cache-1/0a1b2c3d4e": "high",
    "/root/.cache/bazel/_bazel_root/ab12/execroot/_main/bazel-out/k8-fastbuild/testlogs/calc/test.log": "high",
    "/root/.julia/compiled/v1.10/Calc/abcd.ji": "critical",
    "/testbed/.mypy_cache/3.11/tests/test_calc.data.json": "high",
    "/testbed/.ruff_cache/0.4.1/1234567890": "critical",
    "/root/.cache/pip/wheels/ab/cd/calc-2.0-py3-none-any.whl": "critical",
    "/root/.cache/pip/http/a/b/c/d/e/abcdef0123": "critical",
    "/testbed/.coverage": "high",
}


def test_every_cache_family_is_recognised(cache_roots):
    _, written = cache_roots["leak"]
    assert sorted(written) == sorted(EXPECTED_LEAK)
    kinds = {cache_kind(p) for p in written}
    assert kinds == {"pytest", "jest", "go", "maven", "gradle", "bazel", "julia", "coverage", "mypy", "ruff", "pip"}
    assert cache_kind("/testbed/.coveragerc") is None and cache_kind("/testbed/src/calc.py") is None


def test_caches_naming_hidden_tests_or_holding_the_fix(gitfix, cache_roots):
    root, _ = cache_roots["leak"]
    report = audit(str(root), rootfs=True, repo_path="/testbed", test_ids=[GO_ID], **gitfix.R)
    assert_valid_report(report)
    by = {f.key: f for f in report.targets[0].findings if f.check == "L4"}
    assert {k[3:]: f.severity for k, f in by.items()} == EXPECTED_LEAK
    ev = {k[3:]: f.evidence for k, f in by.items()}
    assert ev["/root/.m2/repository/org/calc/2.0-SNAPSHOT/calc-2.0-SNAPSHOT.jar"]["equals_fixed"]["items"] == \
        ["src/calc.py"]
    assert ev["/root/.gradle/caches/build-cache-1/0a1b2c3d4e"]["members"]["items"] == \
        ["tree-testResults/TEST-tests.test_calc.xml"]
    assert ev["/root/.cache/go-build/3f/3fa4c1-d"]["test_ids"]["items"] == [GO_ID]
    assert ev["/root/.cache/pip/http/a/b/c/d/e/abcdef0123"]["equals_fixed"]["items"] == ["src/calc.py"]  # read as zip
    assert ev["/testbed/.coverage"]["test_ids"]["items"] == ["tests/test_calc.py::test_add"]
    jest = ev["/tmp/jest_rs/jest-transform-cache-3f2a/1a/calc_1a2b3c"]
    assert jest["hunks"]["items"][0].startswith("fix src/calc.py")
    assert "Return the sum of a and b (issue #42)." in ev["/root/.julia/compiled/v1.10/Calc/abcd.ji"]["tokens"]["items"]
    assert by["L4:/testbed/.coverage"].title == "coverage cache names tests/test_calc.py::test_add"
    assert by["L4:/root/.gradle/caches/build-cache-1/0a1b2c3d4e"].reproduce["command"].startswith("tar -tzf ")
    assert by["L4:/testbed/.coverage"].cls == "location" and by["L4:/root/.cache/pip/wheels/ab/cd/" +
                                                                "calc-2.0-py3-none-any.whl"].cls == "content"


def test_caches_without_reference_grade_ids_absent_from_base_medium(gitfix, cache_roots):
    root, _ = cache_roots["leak"]
    t = audit(str(root), rootfs=True, repo_path="/testbed", base=gitfix.base).targets[0]
    by = {f.key[3:]: f.severity for f in t.findings if f.check == "L4"}
    assert by["/testbed/.pytest_cache/v/cache/lastfailed"] == "medium"
    assert by["/testbed/.mypy_cache/3.11/tests/test_calc.data.json"] == "medium"
    assert by["/testbed/.coverage"] == "medium"


def test_base_only_caches_stay_clean(gitfix, cache_roots):
    root, _ = cache_roots["ctl"]
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    report = audit(str(root), rootfs=True, repo_path="/testbed", test_ids=[GO_ID], **gitfix.R)
    assert_findings(report, {}, "clean")
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()} == before
    assert not (root / "testbed/.coverage-journal").exists()
