"""``overlap audit --benchmark``: a declared benchmark's instances mapped to images by its ``[audit]`` table,
sampled reproducibly, one image set per tag; tested offline with ``path:`` targets. Also the naming rules of
the registered SWE-bench family."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from audit_helpers import run_cli
from batch_helpers import repo, write_jsonl

from overlap.api.audit_benchmark import draw
from overlap.audit.study.naming import ImageNaming
from overlap.errors import InputError
from overlap.sources.registry.registry import get_spec

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

IDS = ["Org__Leaky-1", "org__clean-2", "org__clean-3", "org__clean-4"]
DECLARATION = """name = "toy-bench"
path = "records.jsonl"

[columns]
id = "instance_id"
base = "base_commit"
patch = "patch"

[audit]
image = "path:images/{tag}/{instance}"
lower = true
replace = [["__", "_1776_"]]
tags = ["v1", "v2"]
base_commit = "base_commit"
patch = "patch"
test_patch = "test_patch"
"""


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    records = []
    for tag in ("v1", "v2"):
        for iid in IDS:
            name = iid.lower().replace("__", "_1776_")
            # v1 keeps the fix of the first task as an unreachable commit; v2 is a clean rebuild
            base, patch = repo(root / "images" / tag / name, leak=tag == "v1" and iid == IDS[0])
            if tag == "v1":
                records.append({"instance_id": iid, "base_commit": base, "patch": patch, "test_patch": None})
    write_jsonl(root / "records.jsonl", records)
    (root / "toy.toml").write_text(DECLARATION)
    return root


def test_benchmark_sets_per_tag_and_the_rebuild_is_clean(bench, tmp_path):
    out = tmp_path / "out"
    res = run_cli("--registry", str(bench / "toy.toml"), "--benchmark", "toy-bench", "--tag", "v1", "--tag", "v2",
                  "--format", "json", "--out", str(out), cwd=tmp_path, timeout=180)
    assert res.code == 0, res.stderr
    doc = json.loads(res.stdout)
    sets = {s["set"]: s for s in doc["sets"]}
    assert sorted(sets) == ["toy-bench:v1", "toy-bench:v2"]
    assert sets["toy-bench:v1"]["tasks"] == 4
    assert sets["toy-bench:v1"]["verdicts"]["leak"]["ids"] == ["Org__Leaky-1"]
    assert sets["toy-bench:v1"]["columns"]["reference_stored"]["ids"] == ["Org__Leaky-1"]
    v2 = sets["toy-bench:v2"]
    assert v2["verdicts"]["leak"]["count"] == 0 and v2["failed"]["count"] == 0
    assert all(c.get("count", 0) == 0 for k, c in v2["columns"].items() if k != "newest_files")
    assert all(c["count"] == 0 for c in v2["columns"]["newest_files"].values())
    leaky = next(e for e in doc["targets"] if e["set"] == "toy-bench:v1" and e["instance_id"] == IDS[0])
    assert leaky["path"] == str(bench / "images" / "v1" / "org_1776_leaky-1")
    assert leaky["reference"]["base_commit"] and leaky["reference"]["patch_sha256"]


def test_sample_is_reproducible_and_documented(bench, tmp_path):
    import random

    copy = tmp_path / "elsewhere.jsonl"  # -d NAME=PATH: the records from a local copy
    shutil.copy(bench / "records.jsonl", copy)
    res = run_cli("--registry", str(bench / "toy.toml"), "--benchmark", "toy-bench", "--sample", "2", "--seed", "7",
                  "-d", f"toy-bench={copy}", "--format", "json", cwd=tmp_path, timeout=180)
    assert res.code in (0, 1), res.stderr
    got = sorted(e["instance_id"] for e in json.loads(res.stdout)["targets"])
    assert got == sorted(random.Random(7).sample(sorted(IDS), 2)) == draw(IDS, 2, 7)
    assert {e["set"] for e in json.loads(res.stdout)["targets"]} == {"toy-bench:v1"}  # the first declared tag
    assert draw(IDS, 10, 0) == sorted(IDS)


def test_a_missing_image_fails_its_target_only(bench, tmp_path):
    res = run_cli("--registry", str(bench / "toy.toml"), "--benchmark", "toy-bench", "--tag", "v3",
                  "--format", "json", cwd=tmp_path, timeout=180)
    assert res.code == 2
    doc = json.loads(res.stdout)
    assert doc["counts"] == {"targets": 4, "ok": 0, "error": 4, "repeated_rows": 0}
    assert all("no such file or folder" in e["error"] for e in doc["targets"])


def test_swe_bench_names_follow_the_harness():
    for name in ("swe-bench-verified", "swe-bench"):
        spec = get_spec(name)
        naming = ImageNaming.from_table(spec.audit, spec.origin)
        assert naming.target({}, "astropy__astropy-12907", "latest", Path(".")) == (
            "image", "docker://docker.io/swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest")
        assert naming.target({}, "Django__Django-11099", "v1", Path("."))[1].endswith("django_1776_django-11099:v1")
        assert naming.columns["test_patch"] == "test_patch" and naming.tags[0] == "latest"
    pro = get_spec("swe-bench-pro")
    naming = ImageNaming.from_table(pro.audit, pro.origin)
    assert not naming.uses_tag and "dockerhub_tag" in naming.record_columns()
    tag = "nodebb.nodebb-NodeBB__NodeBB-7b8bffd763e2155cf88f3ebc258fa68ebe18188d-vf2cf3"
    assert naming.target({"dockerhub_tag": tag}, "instance_x", None, Path("."))[1] == (
        f"docker://docker.io/jefzda/sweap-images:{tag}")
    with pytest.raises(InputError, match="dockerhub_tag"):
        naming.target({}, "instance_x", None, Path("."))


def test_a_dotted_name_reaches_into_a_struct_or_a_json_string():
    naming = ImageNaming.from_table({"image": "{extra.task.image}", "id": "extra.task.id",
                                     "test_patch": "extra.task.tests"}, "t.toml")
    assert naming.read_columns() == ["extra", "extra.task.id", "extra.task.image", "extra.task.tests"]
    as_json = {"extra": {"task": json.dumps({"id": "t-1", "image": "reg.example/t-1:v3", "tests": "diff"})}}
    as_struct = {"extra": {"task": {"id": "t-1", "image": "reg.example/t-1:v3"}}}
    for record in (as_json, as_struct):
        assert naming.target(record, "t-1", None, Path(".")) == ("image", "docker://reg.example/t-1:v3")
    for broken in ({"extra": {"task": "{not json"}}, {"extra": None}, {}):
        with pytest.raises(InputError, match="no extra.task.image"):
            naming.target(broken, "t-1", None, Path("."))
    literal = ImageNaming.from_table({"image": "x/{{literal}}:{a.b}"}, "t.toml")
    assert literal.target({"a.b": "column with a dot"}, "i", None, Path("."))[1] == (
        "docker://x/{literal}:column with a dot")


@pytest.mark.parametrize("table, needle", [
    ({"image": "x/{instance!r}"}, "plain names"),
    ({"image": "x/{a..b}"}, "plain names"),
    ({"image": "x/{a[0]}"}, "plain names"),
    ({"image": "x/{instance"}, "image"),
    ({"image": "x/{instance}", "replace": [["__"]]}, "replace"),
    ({"image": "x/{instance}", "tags": "v1"}, "tags"),
    ({"image": "x/{instance}", "colour": 1}, "unknown field"),
    ({}, "image"),
])
def test_bad_audit_tables_are_refused(table, needle):
    with pytest.raises(InputError, match=needle):
        ImageNaming.from_table(table, "t.toml")


def test_declaration_audit_table_is_checked_when_read(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(DECLARATION.replace("lower = true", "lowercase = true").replace("toy-bench", "bad-bench"))
    res = run_cli("--registry", str(bad), "--benchmark", "bad-bench", cwd=tmp_path, timeout=60)
    assert res.code == 2 and "unknown field 'lowercase'" in res.stderr and len(res.stderr.splitlines()) == 1


def test_tag_on_a_record_named_benchmark_is_refused(tmp_path):
    res = run_cli("--benchmark", "swe-bench-pro", "--tag", "v1", cwd=tmp_path, timeout=60)
    assert res.code == 2 and "drop --tag" in res.stderr and res.stdout == ""
