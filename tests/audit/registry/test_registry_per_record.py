"""A per-record named set against a real registry: rows laid out like MiMo's ``cyber.parquet`` name each task's
image (``docker_image`` inside the JSON string ``extra_info.instance_json``); the declaration's rule turns that into
``docker.io/xiaomimimo/mimo-v2.6-rl-oss:arvo-v1-N``, read here from a loopback mirror (``--mirror``). Every image
holds the task's source as a repository; some keep a second commit (the fix) reachable only from nothing. The
expected counts, digests and intervals are computed here from how each image was built."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from regkit import Builder, Registry, git, need_tools

import overlap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_audit_per_record_names import write_cyber  # noqa: E402

ARVO = [10055, 10102, 42471002, 5080, 61234]
LEAKY = {10102, 5080}
SAMPLE, SEED = 4, 3
REPO = "xiaomimimo/mimo-v2.6-rl-oss"
Z = 1.959963984540054


def source_tree(root: Path, n: int, *, leak: bool) -> None:
    """/src/project: the vulnerable source as a repository; with ``leak`` the fix committed, then reset away."""
    repo = root / "src" / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "parse.c").write_text(f"int parse(char *s) {{ return s[{n % 7 + 8}]; }}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "vulnerable")
    if leak:
        (repo / "parse.c").write_text("int parse(char *s) { return s ? s[0] : 0; }\n")
        git(repo, "commit", "-q", "-am", "fix the overflow")
        git(repo, "reset", "-q", "--hard", "HEAD~1")
        git(repo, "reflog", "expire", "--expire=now", "--all")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    need_tools()
    root = tmp_path_factory.mktemp("per-record")
    reg = Registry(root / "registry")
    try:
        b = Builder(root / "build")
        for n in ARVO:
            b.derive("empty", f"arvo-{n}", lambda rootfs, n=n: source_tree(rootfs, n, leak=n in LEAKY),
                     workdir="/src/project")
            b.push(f"arvo-{n}", reg.host, f"{REPO}:arvo-v1-{n}")
        yield reg, write_cyber(root / "data", ARVO)
    finally:
        reg.stop()


def wilson(k: int, n: int, population: int) -> tuple[float, float]:
    """The bounds p of (k/n - p)^2 = z^2 p (1 - p) / m, m = n (N - 1) / (N - n)."""
    p, m = k / n, n * (population - 1) / (population - n)
    a, b, c = 1 + Z * Z / m, -(2 * p + Z * Z / m), p * p
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def test_a_per_record_named_set_from_a_mirror(mirror, tmp_path, cache):
    reg, data = mirror
    code = "import sys\nfrom overlap.cli import main\nsys.argv = ['overlap', 'audit', *sys.argv[1:]]\nmain()"
    root = str(Path(overlap.__file__).resolve().parents[1])  # this checkout's overlap, whatever else is installed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    r = subprocess.run([sys.executable, "-c", code, "--benchmark", "mimo-cyber", "-d", f"mimo-cyber={data}",
                        "--sample", str(SAMPLE), "--seed", str(SEED), "--mirror", f"docker.io={reg.host}",
                        "--jobs", "2", "--format", "json"], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=600)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    drawn = sorted(random.Random(SEED).sample(sorted(f"arvo_{n}" for n in ARVO), SAMPLE))
    targets = {e["instance_id"]: e for e in doc["targets"]}
    assert sorted(targets) == drawn
    for iid, e in targets.items():
        n = int(iid.removeprefix("arvo_"))
        assert e["status"] == "ok", e["error"]
        assert e["image"] == f"docker://{reg.host}/{REPO}:arvo-v1-{n}"
        _, manifest = reg.manifest(REPO, f"arvo-v1-{n}")
        assert e["digest"] == manifest["config"]["digest"]
    (s,) = doc["sets"]
    assert s["set"] == "mimo-cyber" and s["population"] == len(ARVO) and s["sampling"]["drawn"] == SAMPLE
    assert s["sampling"]["seed"] == SEED
    leaky = sorted(i for i in drawn if int(i.removeprefix("arvo_")) in LEAKY)
    hidden = s["columns"]["hidden_history"]
    assert hidden["ids"] == leaky
    low, high = wilson(len(leaky), SAMPLE, len(ARVO))
    assert abs(hidden["estimate"]["low"] - low) < 1e-4 and abs(hidden["estimate"]["high"] - high) < 1e-4
