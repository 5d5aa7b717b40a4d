"""`overlap audit --benchmark NAME --tag v1 --tag v2 --sample 3 --seed 0` end to end against a real registry.

A declared benchmark of six tasks (ids with ``__`` and capitals, so the naming rule decides every image name)
whose ``[audit] image`` template points at a loopback registry. Tag ``v1`` is a leaky build: three tasks keep
the fix as an unreachable commit, the others are single-commit repositories; ``v2`` is a clean rebuild of
every task. All twelve images share one base layer. The study runs through a counting proxy, two targets at
once, with the base layer answered slowly so two workers ask for it at the same time.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from regkit import Builder, Proxy, git, need_tools

import overlap
from overlap.audit.study.summary import COLUMN_IDS

IDS = ["Astro__Calc-101", "astro__calc-102", "Beta__Calc-201", "beta__calc-202", "Gamma__Calc-301",
       "gamma__calc-302"]
LEAKY_V1 = {"Astro__Calc-101", "Beta__Calc-201", "gamma__calc-302"}
TAGS = ("v1", "v2")
NAME = "reg-bench"
SAMPLE = sorted(random.Random(0).sample(sorted(IDS), 3))  # the documented draw
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    # the sum, as the tests ask for it\n    return a + b\n"
TEST_PATCH = """diff --git a/tests/test_calc.py b/tests/test_calc.py
new file mode 100644
--- /dev/null
+++ b/tests/test_calc.py
@@ -0,0 +1,5 @@
+from src.calc import add
+
+
+def test_add_returns_the_sum_of_both_numbers():
+    assert add(2, 3) == 5
"""
DECLARATION = """name = "{name}"
path = "records.jsonl"

[columns]
id = "instance_id"
base = "base_commit"
patch = "patch"

[audit]
image = "docker://{host}/bench/sweb.eval.x86_64.{{instance}}:{{tag}}"
lower = true
replace = [["__", "_1776_"]]
tags = ["v1", "v2"]
base_commit = "base_commit"
patch = "patch"
test_patch = "test_patch"
"""


def image_name(iid: str) -> str:
    return iid.lower().replace("__", "_1776_")


def fix_patch(scratch: Path) -> str:
    """The fix as a diff, made in a scratch repository: a clean build never has the fix written into it."""
    scratch.mkdir(parents=True)
    git(scratch, "init", "-q", "-b", "main")
    (scratch / "src").mkdir()
    (scratch / "src" / "calc.py").write_text(BUGGY)
    git(scratch, "add", "-A")
    (scratch / "src" / "calc.py").write_text(FIXED)
    return git(scratch, "diff") + "\n"


def task_repo(repo: Path, iid: str, *, leak: bool) -> str:
    """One task's repository, its base commit returned: a single commit (a clean build, as a modern harness
    clones and checks out), or with ``leak`` the fix committed, then reset away with its reflog expired, so it
    survives only as an unreachable commit. Fixed dates: every build of a task has the same base commit."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "calc.py").write_text(BUGGY)
    (repo / "README.md").write_text(f"calc, task {iid}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    if leak:
        (repo / "src" / "calc.py").write_text(FIXED)
        git(repo, "commit", "-q", "-am", "fix add")
        git(repo, "reset", "-q", "--hard", base)
        git(repo, "reflog", "expire", "--expire=now", "--all")
        (repo / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    return base


@dataclass
class Run:
    code: int
    doc: dict
    stderr: str
    seconds: float
    requests: list[tuple[str, str]]  # (method, path) the proxy saw during the run


@dataclass
class Study:
    root: Path
    proxy: Proxy
    base_layer: str
    blob_sizes: dict[str, int]  # digest -> size of every blob of the sampled images
    first: Run
    again: Run
    out: Path
    cache: Path
    files_before: dict[str, int]  # result file -> mtime_ns after the first run
    written: dict  # DIR/audit.json after the first run

    def ref(self, iid: str, tag: str) -> str:
        return f"docker://{self.proxy.addr}/bench/sweb.eval.x86_64.{image_name(iid)}:{tag}"


def _cli(args: list[str], env: dict, cwd: Path, proxy: Proxy) -> Run:
    n = len(proxy.log)
    code = "import sys\nfrom overlap.cli import main\nsys.argv = ['overlap', 'audit', *sys.argv[1:]]\nmain()"
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=300)
    seconds = time.monotonic() - start
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"no JSON document (exit {r.returncode}): {r.stderr[-2000:]}")
    return Run(r.returncode, doc, r.stderr, seconds, [(m, p) for m, p, _ in proxy.log[n:]])


@pytest.fixture(scope="module")
def study(images, tmp_path_factory):
    need_tools()
    root = tmp_path_factory.mktemp("bench")
    reg = images.registry
    b = Builder(root / "build")

    def base(rootfs: Path) -> None:
        (rootfs / "etc").mkdir(exist_ok=True)
        (rootfs / "etc" / "os-release").write_text('ID=test\nNAME="bench base"\n')
        (rootfs / "usr" / "share").mkdir(parents=True, exist_ok=True)
        # incompressible: the shared layer is most of every image's bytes, so a second download would show
        (rootfs / "usr" / "share" / "base.bin").write_bytes(os.urandom(1 << 20))

    b.derive("empty", "base", base, workdir=None)
    patch = fix_patch(root / "patch")
    records = {}
    for tag in TAGS:
        for iid in IDS:
            leak = tag == "v1" and iid in LEAKY_V1
            made = {}
            b.derive("base", f"{tag}-{image_name(iid)}",
                     lambda rootfs, iid=iid, leak=leak, made=made: made.update(
                         base=task_repo(rootfs / "testbed", iid, leak=leak)))
            b.push(f"{tag}-{image_name(iid)}", reg.host, f"bench/sweb.eval.x86_64.{image_name(iid)}:{tag}")
            if tag == "v1":
                records[iid] = {"instance_id": iid, "base_commit": made["base"], "patch": patch,
                                "test_patch": TEST_PATCH}
            else:
                assert records[iid]["base_commit"] == made["base"]  # a rebuild of the same task
    (root / "records.jsonl").write_text("".join(json.dumps(records[i]) + "\n" for i in IDS))

    blob_sizes, layers = {}, set()
    for tag in TAGS:
        for iid in SAMPLE:
            _, m = reg.manifest(f"bench/sweb.eval.x86_64.{image_name(iid)}", tag)
            for d in [m["config"], *m["layers"]]:
                blob_sizes[d["digest"]] = d["size"]
            layers.add(m["layers"][0]["digest"])
    assert len(layers) == 1  # every image is built on the one base
    base_layer = layers.pop()

    proxy = Proxy(reg.port)
    # the shared layer is answered after a pause, so the two first workers both need it while it streams
    proxy.rules.append(lambda h: h.command == "GET" and base_layer in h.path and time.sleep(1.0) and False)
    try:
        decl = root / "bench.toml"
        decl.write_text(DECLARATION.format(name=NAME, host=proxy.addr))
        cache, out = root / "cache", root / "out"
        env = {k: v for k, v in os.environ.items() if k not in ("OVERLAP_OFFLINE", "HF_HUB_OFFLINE")}
        env.update(OVERLAP_CACHE=str(cache), XDG_CACHE_HOME=str(root / "xdg"), OVERLAP_REGISTRY_TIMEOUT="10",
                   REGISTRY_AUTH_FILE=str(root / "no-auth.json"), COLUMNS="200",
                   # this checkout's overlap, not another one installed (a worktree's editable install is main's)
                   PYTHONPATH=os.pathsep.join(p for p in (str(Path(overlap.__file__).resolve().parents[1]),
                                                          os.environ.get("PYTHONPATH")) if p))
        args = ["--registry", str(decl), "--benchmark", NAME, "--tag", "v1", "--tag", "v2", "--sample", "3",
                "--seed", "0", "--jobs", "2", "--out", str(out), "--format", "json"]
        first = _cli(args, env, root, proxy)
        files_before = {p.name: p.stat().st_mtime_ns for p in (out / "targets").iterdir()}
        written = json.loads((out / "audit.json").read_text())
        again = _cli([*args, "--fail-on", "leak"], env, root, proxy)
        yield Study(root, proxy, base_layer, blob_sizes, first, again, out, cache, files_before, written)
    finally:
        proxy.close()


def by_set(doc: dict) -> dict:
    return {s["set"]: s for s in doc["sets"]}


def test_every_target_ran_and_the_exit_code_is_documented(study):
    run = study.first
    assert run.code == 0, run.stderr  # every target ran; without --fail-on a leak does not change the code
    assert run.doc["schema"] == "overlap.audit.batch/1"
    assert run.doc["counts"] == {"targets": 6, "ok": 6, "error": 0, "repeated_rows": 0}
    assert run.doc["verdict"] == "leak" and run.doc["exit_code"] == 0
    assert sorted(s["set"] for s in run.doc["sets"]) == [f"{NAME}:v1", f"{NAME}:v2"]
    assert study.written == run.doc
    assert {p.name for p in study.out.iterdir()} == {"targets", "audit.json", *(f"{t}.{x}" for t in ("sets", "routes")
                                                   for x in ("csv", "md", "html")), "routes.json"}
    assert len(list((study.out / "targets").iterdir())) == 6


def test_the_sample_is_the_documented_draw_for_every_tag(study):
    assert SAMPLE == sorted(["astro__calc-102", "gamma__calc-302", "Astro__Calc-101"])  # both cases of one name
    for tag in TAGS:
        got = [e["instance_id"] for e in study.first.doc["targets"] if e["set"] == f"{NAME}:{tag}"]
        assert sorted(got) == SAMPLE
    for name in {image_name(i) for i in IDS} - {image_name(i) for i in SAMPLE}:
        assert not [p for _, p in study.first.requests if name in p]  # an image outside the sample is never asked


def test_every_target_is_pulled_by_its_docker_reference(study):
    asked = {p for m, p in study.first.requests if m == "GET" and "/manifests/" in p}
    for e in study.first.doc["targets"]:
        tag = e["set"].rpartition(":")[2]
        want = study.ref(e["instance_id"], tag)
        assert e["kind"] == "image" and e["image"] == want and "path" not in e
        assert {f["target"] for f in e["findings"]} <= {want}
        assert f"/v2/bench/sweb.eval.x86_64.{image_name(e['instance_id'])}/manifests/{tag}" in asked
        report = json.loads(next((study.out / "targets").glob(f"{e['instance_id']}-{e['key'][:16]}.json"))
                            .read_text())["report"]
        assert report["targets"][0]["kind"] == "registry" and report["targets"][0]["path"] == want
        assert report["targets"][0]["repo_path"] == "/testbed"


def test_the_leaky_build_shows_the_leak_in_its_columns(study):
    v1 = by_set(study.first.doc)[f"{NAME}:v1"]
    leaky = sorted(LEAKY_V1 & set(SAMPLE))
    assert leaky and len(leaky) < len(SAMPLE)  # the sample holds leaky and clean tasks
    assert v1["tasks"] == 3 and v1["failed"]["count"] == 0
    assert v1["verdicts"]["leak"]["ids"] == leaky
    # an unreachable fix commit: missed by a reference walk, its fixed file in the store, invisible to git log
    assert v1["columns"]["hidden_history"]["ids"] == leaky
    assert v1["columns"]["reference_stored"]["ids"] == leaky
    assert v1["columns"]["git_log_all"]["count"] == 0
    assert v1["columns"]["newest_files"]["any"]["count"] == 0
    clean = [e for e in study.first.doc["targets"] if e["set"] == f"{NAME}:v1" and e["instance_id"] not in leaky]
    assert clean and all(e["verdict"] == "clean" for e in clean)
    md = (study.out / "sets.md").read_text()
    rows = {r["set"]: r for r in csv.DictReader(io.StringIO((study.out / "sets.csv").read_text()))}
    counts = {k: int(rows[f"{NAME}:v1"][k]) for k in ("tasks", "git_log_all", "hidden_history", "reference_stored",
                                                       "newest_tests", "newest_fix", "leak", "failed")}
    n = len(leaky)
    assert counts == {"tasks": 3, "git_log_all": 0, "hidden_history": n, "reference_stored": n, "newest_tests": 0,
                      "newest_fix": 0, "leak": n, "failed": 0}
    assert f"- **{NAME}:v1 / leak**: " + ", ".join(f"`{i}`" for i in leaky) in md


def test_the_clean_rebuild_shows_nothing(study):
    """What the public study says of a clean modern build: nothing, in every column."""
    v2 = by_set(study.first.doc)[f"{NAME}:v2"]
    assert v2["tasks"] == 3 and v2["audited"] == 3 and v2["failed"]["count"] == 0
    for cid in COLUMN_IDS[:-1]:
        assert (v2["columns"][cid]["count"], v2["columns"][cid]["ids"]) == (0, []), cid
        assert v2["columns"][cid]["estimate"]["share"] == 0  # 3 of 6 drawn: an estimate for all six
    assert all((c["count"], c["ids"]) == (0, []) for c in v2["columns"]["newest_files"].values())
    assert v2["verdicts"]["leak"]["count"] == 0 and v2["verdicts"]["suspect"]["count"] == 0
    assert v2["verdicts"]["clean"]["ids"] == SAMPLE
    for e in study.first.doc["targets"]:
        if e["set"] == f"{NAME}:v2":
            assert not [f for f in e["findings"] if f["severity"] in ("critical", "high", "medium")], e["findings"]
    rows = {r["set"]: r for r in csv.DictReader(io.StringIO((study.out / "sets.csv").read_text()))}
    assert {k: rows[f"{NAME}:v2"][k] for k in ("git_log_all", "hidden_history", "reference_stored", "suspect",
                                               "leak", "failed")} == dict.fromkeys(
        ("git_log_all", "hidden_history", "reference_stored", "suspect", "leak", "failed"), "0")
    md_lines = (study.out / "sets.md").read_text().splitlines()
    assert not [line for line in md_lines if f"{NAME}:v2 /" in line and "image digests" not in line]


def test_shared_base_layer_is_downloaded_once_into_the_given_cache(study):
    blobs = [p.rpartition("/blobs/")[2] for m, p in study.first.requests if m == "GET" and "/blobs/" in p]
    assert len(blobs) == len(set(blobs)), "a blob was downloaded twice"
    assert blobs.count(study.base_layer) == 1  # six pulls, two at a time, one download of the base
    assert set(blobs) == set(study.blob_sizes)
    # OVERLAP_CACHE reached every worker: the blobs are there and the user cache folder was never made
    for digest in study.blob_sizes:
        assert (study.cache / "blobs" / "sha256" / digest.partition(":")[2]).is_file()
    assert not (study.root / "xdg").exists()
    assert not list((study.cache / "tmp").iterdir())
    total = sum(study.blob_sizes.values())
    base = study.blob_sizes[study.base_layer]
    assert base > total / 2  # the base is most of the bytes: downloaded twice, the total would show it
    print(f"\n{len(blobs)} blobs, {total:,} bytes downloaded (base layer {base:,}) in {study.first.seconds:.1f} s")


def test_a_rerun_skips_every_done_target(study):
    again = study.again
    assert again.code == 1, again.stderr  # --fail-on leak reached; the results are the first run's
    # no target was pulled or audited again: the re-run asks only what each tag names now (its manifest, the
    # resume key: a tag pushed again with other content is another target), never a blob
    assert again.requests and all("/manifests/" in path for _, path in again.requests), again.requests
    assert not any("/blobs/" in path for _, path in again.requests)
    assert again.doc["targets"] == study.first.doc["targets"]
    assert again.doc["sets"] == study.first.doc["sets"]
    assert json.loads((study.out / "audit.json").read_text()) == again.doc
    now = {p.name: p.stat().st_mtime_ns for p in (study.out / "targets").iterdir()}
    assert now == study.files_before
