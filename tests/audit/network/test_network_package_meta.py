"""The package a repository publishes, from its own packaging metadata read as text at the base commit (never
run), ahead of the mapping; a repository with no known package is reported as such."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from overlap.audit.package_meta import names, package_for, pick, read_at_base

# names as the packaging tools accept them: letters, digits, '.', '_', '-' (and '/' for Go modules)
NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9._-]{0,30}[A-Za-z0-9]", fullmatch=True)


@given(NAME)
def test_each_format_gives_its_name(name):
    by_file = {
        "pyproject.toml": f'[build-system]\nrequires = []\n\n[project]\nname = "{name}"\nversion = "1"\n',
        "setup.cfg": f"[options]\nzip_safe = False\n\n[metadata]\nname = {name}\nversion = 1\n",
        "setup.py": f"import setuptools\nsetuptools.setup(\n    version='1',\n    name='{name}',\n)\n",
        "package.json": json.dumps({"version": "1.0.0", "name": name}),
        "go.mod": f"// the module\nmodule example.com/{name}\n\ngo 1.21\n",
    }
    ecosystem = {"pyproject.toml": "pypi", "setup.cfg": "pypi", "setup.py": "pypi", "package.json": "npm",
                 "go.mod": "go"}
    for fname, text in by_file.items():
        want = f"example.com/{name}" if fname == "go.mod" else name
        assert names({fname: text.encode()}) == [(ecosystem[fname], want, fname)]


def test_setup_py_name_bound_to_a_variable_and_never_run(tmp_path):
    marker = tmp_path / "ran"
    text = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nNAME = 'pkg-a'\n" \
           "from setuptools import setup\nsetup(name=NAME, version='1')\n"
    assert names({"setup.py": text.encode()}) == [("pypi", "pkg-a", "setup.py")]
    assert not marker.exists()
    # a computed name is not guessed
    assert names({"setup.py": b"from setuptools import setup\nsetup(name='a' + 'b')\n"}) == []


def test_what_names_nothing():
    assert names({"package.json": json.dumps({"name": "monorepo-root", "private": True}).encode()}) == []
    assert names({"pyproject.toml": b"[tool.black]\nline-length = 100\n"}) == []  # no [project] table
    assert names({"pyproject.toml": b"[project\nname = broken"}) == []
    assert names({"setup.py": b"def broken(:\n"}) == []
    assert names({"setup.cfg": b"no section header\n"}) == []


def test_the_fix_s_own_ecosystem_wins_when_a_tree_has_several():
    found = names({"pyproject.toml": b'[project]\nname = "py-side"\n', "package.json": b'{"name": "js-side"}'})
    assert pick(found, {"npm"}) == ("npm", "js-side", "package.json")
    assert pick(found, set()) == ("pypi", "py-side", "pyproject.toml")


def test_order_option_record_metadata_mapping():
    meta = {"pyproject.toml": b'[project]\nname = "own-name"\n'}
    record = {"repo": "django/django"}
    assert package_for(record, None, ["a.py"], meta) == ("pypi", "own-name", "metadata:pyproject.toml")
    assert package_for(record, None, ["a.py"], {}) == ("pypi", "Django", "mapping")
    assert package_for({**record, "package": "pypi:other"}, None, ["a.py"], meta)[2] == "record"
    assert package_for(record, "npm:x", ["a.py"], meta) == ("npm", "x", "option")
    assert package_for({"repo": "nobody/unknown"}, None, ["a.py"], {}) is None  # reported, not guessed


def _git(*args, cwd):
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_read_at_the_base_commit_not_the_worktree(tmp_path: Path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git("init", "-q", ".", cwd=repo)
    (repo / "pyproject.toml").write_text('[project]\nname = "at-base"\n')
    (repo / "go.mod").mkdir()  # a tree where a file is expected: skipped, the rest still read
    (repo / "go.mod" / "x").write_text("x")
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "base", cwd=repo)
    base = _git("rev-parse", "HEAD", cwd=repo).strip()
    (repo / "pyproject.toml").write_text('[project]\nname = "renamed-later"\n')
    (repo / "package.json").write_text('{"name": "later"}')
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "later", cwd=repo)
    files = read_at_base(repo, base)
    assert names(files) == [("pypi", "at-base", "pyproject.toml")]
    assert read_at_base(repo, None) == {} and read_at_base(tmp_path / "none", base) == {}
    assert read_at_base(repo, "--output=x") == {}  # only a hex id is passed to git


def test_the_mapping_table_is_well_formed_and_covers_swe_bench():
    import csv

    from overlap.audit.index import ECOSYSTEMS
    from overlap.resources import packages_file

    with open(packages_file(), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["repo"].lower() for r in rows] == list(dict.fromkeys(r["repo"].lower() for r in rows))  # unique
    for r in rows:
        assert r["ecosystem"] in ECOSYSTEMS and r["package"].strip() and r["source"].strip(), r
        assert r["repo"].count("/") == 1 and not any(c.isspace() for c in r["package"]), r
    # the twelve repositories of SWE-bench's test split (its paper's table of repositories)
    swe_bench = {"astropy/astropy", "django/django", "matplotlib/matplotlib", "mwaskom/seaborn", "pallets/flask",
                 "psf/requests", "pydata/xarray", "pylint-dev/pylint", "pytest-dev/pytest", "scikit-learn/scikit-learn",
                 "sphinx-doc/sphinx", "sympy/sympy"}
    assert swe_bench <= {r["repo"] for r in rows if r["ecosystem"] == "pypi"}
