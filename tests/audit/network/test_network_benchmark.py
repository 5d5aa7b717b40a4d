"""`overlap audit --benchmark NAME --sample 10 --seed 0 --check-index` on a fixture benchmark of ten tasks spread
over PyPI (pypiserver), npm (verdaccio) and Go (the module proxy's static layout), all on loopback: the per-set
table's "fix one install away" column, and each task's first release, days and pin as the fixture was built
(backport and reformat cases included). The package names come from each repository's own packaging metadata at
the base commit (the rows, laid out like SWE-bench's, name no package). The same run offline, after the servers
are gone, gives the same JSON from the cache."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from netkit import go_zip, npm_publish, npm_tarball, pypiserver, sdist, static_server, verdaccio, wheel
from scenarios import CREATED, TEXTS, Rel, expected_first, fix_patch, series, stamp

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ROOT = Path(__file__).resolve().parents[3]
# name -> (the task's version, its releases, the packaging file naming it at the base)
PYPI = {
    "benchpatch": ("1.1", [Rel("1.0.0", -400, None), Rel("1.1.0", -30, None), Rel("1.1.1", 5, "partial"),
                           Rel("1.1.2", 12, "full"), Rel("1.2.0", 40, "full")], "pyproject.toml"),
    "benchminor": ("2.0", [Rel("2.0.0", -20, None), Rel("2.0.1", 3, None), Rel("2.1.0", 61, "full")], "setup.py"),
    # the fix is backported to the older 1.4 line after the task was opened: 1.4.1 is the first release
    "benchback": ("2.0", [Rel("1.4.0", -200, None), Rel("2.0.0", -10, None), Rel("1.4.1", 7, "full"),
                          Rel("2.0.1", 9, "full")], "setup.cfg"),
    # a formatter rewrapped the fix in 3.0.1: it carries every token, not every line
    "benchfmt": ("3.0", [Rel("3.0.0", -5, None), Rel("3.0.1", 20, "tokens"), Rel("3.1.0", 50, "full")],
                 "pyproject.toml"),
    "benchnone": ("5.0", [Rel("5.0.0", -5, None), Rel("5.0.1", 4, "partial")], "pyproject.toml"),
}
GO = {
    "example.com/Calc/v1": ("1.2", [Rel("1.2.0", -30, None), Rel("1.2.1", 4, None), Rel("1.2.2", 33, "full"),
                                    Rel("1.3.0", 90, "full")]),
    "example.com/backport/v2": ("2.0", [Rel("1.9.0", -90, None), Rel("2.0.0", -3, None), Rel("1.9.1", 15, "full"),
                                        Rel("2.0.1", 16, "full")]),
    "example.com/reformat/v3": ("3.0", [Rel("3.0.0", -8, None), Rel("3.0.1", 2, "tokens")]),
}
# npm: verdaccio stamps each version with its publish time; the task opens after the first publish
NPM = {"benchleft": ("4.0", [("4.0.0", None), ("4.0.1", "partial"), ("4.0.2", "full"), ("4.1.0", "full")]),
       "benchright": ("1.0", [("1.0.0", None), ("1.0.1", "tokens"), ("1.1.0", "full")])}
DECLARATION = """name = "netbench"
path = "rows.jsonl"

[columns]
id = "instance_id"
repo = "repo"
base = "base_commit"
patch = "patch"

[audit]
image = "path:repos/{instance}"
base_commit = "base_commit"
patch = "patch"
test_patch = "test_patch"
repo = "repo"
version = "version"
created_at = "created_at"
"""
JS = {k: v.replace('"""', "//") for k, v in TEXTS.items()}


def _go(fix) -> str:
    return "package calc\n\n" + TEXTS[fix].replace('"""', "//")


def _diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def _git(*args, cwd):
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _repo(folder: Path, files: dict[str, str]) -> str:
    """A task's repository at its base: the unfixed file and the packaging metadata; returns the base commit."""
    folder.mkdir(parents=True)
    for i in range(10):
        files[f"docs/page{i}.txt"] = f"page {i}\n"
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    _git("init", "-q", "-b", "main", ".", cwd=folder)
    _git("add", "-A", cwd=folder)
    _git("commit", "-qm", "base", cwd=folder)
    return _git("rev-parse", "HEAD", cwd=folder).strip()


def _metadata(kind: str, name: str) -> dict[str, str]:
    return {"pyproject.toml": {"pyproject.toml": f'[project]\nname = "{name}"\nversion = "0"\n'},
            "setup.py": {"setup.py": f'from setuptools import setup\n\nNAME = "{name}"\nsetup(name=NAME)\n'},
            "setup.cfg": {"setup.cfg": f"[metadata]\nname = {name}\n", "setup.py": "import setuptools\n"}}[kind]


def _build(root: Path, registry: str, proxy: Path) -> dict[str, dict]:
    """The index contents and the rows; returns, per instance id, what the check must find (from the build)."""
    packages, rows, want = root / "packages", [], {}
    packages.mkdir()
    for name, (version, releases, kind) in PYPI.items():
        path = f"src/{name}/calc.py"
        for r in releases:
            for build in (sdist, wheel):
                fname, data = build(name, r.version, {path: TEXTS[r.fix], f"src/{name}/__init__.py": ""})
                (packages / fname).write_bytes(data)
                stamp(packages / fname, r.when)
        iid = f"example__{name}-1"
        base = _repo(root / "repos" / iid, {path: TEXTS[None], **_metadata(kind, name)})
        rows.append({"instance_id": iid, "repo": f"example/{name}-repo", "base_commit": base,
                     "patch": fix_patch(path), "test_patch": None, "created_at": CREATED.isoformat(),
                     "version": version})
        first = expected_first(releases, version)
        want[iid] = {"package": name, "source": f"metadata:{kind}", "version": first and first.version,
                     "days": first and first.day, "match": first and ("tokens" if first.fix == "tokens" else "lines")}
    for module, (version, releases) in GO.items():
        escaped = "".join(f"!{c.lower()}" if c.isupper() else c for c in module)
        folder = proxy / escaped / "@v"
        folder.mkdir(parents=True)
        (folder / "list").write_text("".join(f"v{r.version}\n" for r in releases))
        for r in releases:
            (folder / f"v{r.version}.info").write_text(json.dumps(
                {"Version": f"v{r.version}", "Time": r.when.strftime("%Y-%m-%dT%H:%M:%SZ")}))
            (folder / f"v{r.version}.zip").write_bytes(go_zip(module, f"v{r.version}", {"calc/calc.go": _go(r.fix)}))
        iid = f"example__{module.split('/')[1].lower()}-2"
        base = _repo(root / "repos" / iid, {"calc/calc.go": _go(None), "go.mod": f"module {module}\n\ngo 1.21\n"})
        rows.append({"instance_id": iid, "repo": f"example/{module.split('/')[1]}", "base_commit": base,
                     "patch": _diff("calc/calc.go", _go(None), _go("full")), "test_patch": None,
                     "created_at": CREATED.isoformat(), "version": version})
        first = expected_first(releases, version)
        want[iid] = {"package": module, "source": "metadata:go.mod", "version": first and f"v{first.version}",
                     "days": first and first.day, "match": first and ("tokens" if first.fix == "tokens" else "lines")}
    published: dict[str, list[tuple[str, str | None, dt.datetime, dt.datetime]]] = {n: [] for n in NPM}

    def publish(name: str, version: str, fix) -> None:
        before = dt.datetime.now(dt.UTC)
        npm_publish(registry, name, version, npm_tarball(name, version, {"lib/calc.js": JS[fix]}))
        published[name].append((version, fix, before, dt.datetime.now(dt.UTC)))

    for name, (_, releases) in NPM.items():
        publish(name, *releases[0])
    time.sleep(1.1)
    created = dt.datetime.now(dt.UTC)
    time.sleep(1.1)
    for name, (_, releases) in NPM.items():
        for version, fix in releases[1:]:
            publish(name, version, fix)
    for name, (version, _) in NPM.items():
        iid = f"example__{name}-3"
        base = _repo(root / "repos" / iid, {"lib/calc.js": JS[None],
                                            "package.json": json.dumps({"name": name, "version": "0.0.0"})})
        rows.append({"instance_id": iid, "repo": f"example/{name}", "base_commit": base,
                     "patch": _diff("lib/calc.js", JS[None], JS["full"]), "test_patch": None,
                     "created_at": created.isoformat(), "version": version})
        carrying = [(v, fix, a, b) for v, fix, a, b in published[name] if fix in ("full", "tokens")]
        v, fix, a, b = min(carrying, key=lambda x: series(x[0]))
        # the registry's own stamp lies between the moments before and after the publish
        low, high = ((t - created).total_seconds() / 86400 for t in (a, b))
        want[iid] = {"package": name, "source": "metadata:package.json", "version": v, "days": (low, high),
                     "match": "tokens" if fix == "tokens" else "lines"}
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "netbench.toml").write_text(DECLARATION)
    return want


def _run(root: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    # this checkout's code (an installed overlap may be another checkout's); spawned workers inherit the path
    return subprocess.run([sys.executable, "-m", "overlap", "audit", "--registry", str(root / "netbench.toml"),
                           "--benchmark", "netbench", "--sample", "10", "--seed", "0", "--check-index", "--jobs", "2",
                           *args], capture_output=True, text=True, timeout=600, cwd=root,
                          env={**env, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})


def test_ten_tasks_over_three_indexes_online_then_offline(tmp_path, cache):
    env = {k: v for k, v in os.environ.items() if k != "OVERLAP_OFFLINE"}
    with verdaccio(tmp_path / "verdaccio") as registry, static_server(tmp_path / "proxy") as proxy_url:
        (tmp_path / "proxy").mkdir(exist_ok=True)
        want = _build(tmp_path, registry, tmp_path / "proxy")
        with pypiserver(tmp_path / "packages") as simple:
            env |= {"PIP_INDEX_URL": simple, "NPM_CONFIG_REGISTRY": registry, "GOPROXY": f"{proxy_url},direct"}
            online = _run(tmp_path, "--format", "json", env=env)
            table = _run(tmp_path, env=env)
    assert len(want) == 10
    assert online.returncode == 0, online.stderr[-3000:]
    doc = json.loads(online.stdout)
    got = {e["instance_id"]: e["network"] for e in doc["targets"]}
    assert sorted(got) == sorted(want)
    for iid, w in want.items():
        n = got[iid]
        assert (n["package"], n["package_source"]) == (w["package"], w["source"]), iid
        if w["version"] is None:
            assert n["route"] == "checked" and n["first_release"] is None and n["pin"] is None, iid
            continue
        f = n["first_release"]
        assert n["route"] == "open", (iid, n["reason"])
        assert f["version"] == w["version"] and n["pin"] == f"{w['package']}<{w['version']}", iid
        assert f["match"] == w["match"], iid
        if isinstance(w["days"], tuple):
            low, high = w["days"]
            assert round(low, 1) <= f["days_after_created"] <= round(high, 1), iid
        else:
            assert f["days_after_created"] == round(w["days"], 1), iid
    # the set's cell, from the build: tasks whose fix is one install away and their median days
    opened = sorted(got[i]["first_release"]["days_after_created"] for i, w in want.items() if w["version"])
    mid = len(opened) // 2
    median = opened[mid] if len(opened) % 2 else round((opened[mid - 1] + opened[mid]) / 2, 1)
    (summary,) = doc["sets"]
    assert summary["network"]["open"]["ids"] == sorted(i for i, w in want.items() if w["version"])
    assert summary["network"]["median_days"] == median
    cell = f"{len(opened)} (median {median:g} d)"
    assert table.returncode == 0, table.stderr[-3000:]
    row = next(line for line in table.stdout.splitlines() if line.strip().startswith("fix one install away"))
    assert row.split()[4:4 + len(cell.split())] == cell.split(), table.stdout
    assert row.split()[-1] == "exact"  # all ten tasks audited: the share is the set's, no interval
    assert "archives read" in online.stderr  # what each task's check cost, on stderr
    # offline, the servers gone: the same JSON from the cache
    offline = _run(tmp_path, "--format", "json", env={**env, "OVERLAP_OFFLINE": "1"})
    assert offline.returncode == 0, offline.stderr[-3000:]
    assert offline.stdout == online.stdout
