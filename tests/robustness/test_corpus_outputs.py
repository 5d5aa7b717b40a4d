"""Robustness corpus, output paths: every command that writes, pointed at places it must not touch (a folder
with user files, a file, `.`, an input folder, a path under a file, a link to an input, another command's
output, a name too long) and at places it may (an empty folder, a new nested unicode path, its own previous
output). Refusals are exit 2 with one line and the place unchanged; nothing appears outside --out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from corpus_contract import FAST, cyber_data, data_args, run_checked, swe_data

from overlap.api.demo import DEMO_ROOT

COMMANDS = ["compare", "filter", "ngram", "matrix", "card", "report", "demo"]


@pytest.fixture(scope="module")
def result_folder(tmp_path_factory):
    """A compare result folder to copy for card/report."""
    from corpus_contract import invoke

    root = tmp_path_factory.mktemp("res")
    paths = cyber_data(root / "data")
    run = invoke("setup", ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", root / "res", *FAST],
                 root=root)
    assert run.code == 0, run.stderr
    return root / "res"


def _setup(command, tmp_path, result_folder):
    """(args without --out, the input folder it reads, extra snapshot roots)."""
    if command == "demo":
        return ["demo"], DEMO_ROOT / "cybergym", (DEMO_ROOT,)
    if command in ("card", "report"):
        shutil.copytree(result_folder, tmp_path / "res")
        if command == "card":
            (tmp_path / "cardsrc").mkdir()
            (tmp_path / "cardsrc" / "README.md").write_text("# my dataset\n")
            return ["card", "res", "--card", "cardsrc/README.md"], tmp_path / "cardsrc", ()
        return ["report", "res"], tmp_path / "res", ()
    if command == "matrix":
        paths = swe_data(tmp_path / "data")
        return ["matrix", "swe-polybench", "swe-bench-multilingual", *data_args(paths), "--format", "json"], \
            paths["swe-polybench"], ()
    paths = cyber_data(tmp_path / "data")
    if command == "compare":
        return ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--format", "json", *FAST], \
            paths["cybergym"], ()
    if command == "filter":
        return ["filter", "mimo-cyber", "cybergym", *data_args(paths)], paths["mimo-cyber"], ()
    return ["ngram", "mimo-cyber", "cybergym", *data_args(paths), "--field", "prompt:description", "-n", "8"], \
        paths["cybergym"], ()


def _target(kind, tmp_path, input_folder):
    if kind == "nonempty":
        (tmp_path / "mydata").mkdir()
        (tmp_path / "mydata" / "only-copy.parquet").write_bytes(b"precious")
        return tmp_path / "mydata"
    if kind == "file":
        (tmp_path / "afile").write_text("precious")
        return tmp_path / "afile"
    if kind == "dot":
        return "."
    if kind == "parent-of-inputs":
        return tmp_path
    if kind == "input-folder":
        return input_folder
    if kind == "under-file":
        (tmp_path / "afile").write_text("precious")
        return tmp_path / "afile" / "sub"
    if kind == "link-to-input":
        os.symlink(input_folder, tmp_path / "link")
        return tmp_path / "link"
    if kind == "dangling-link":
        os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
        return tmp_path / "dangling"
    if kind == "other-command-output":
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / ".overlap-output").write_text(json.dumps(
            {"command": "audit-nonexistent", "files": ["x.txt"], "tool": "overlap", "version": "0"}))
        (tmp_path / "other" / "x.txt").write_text("x")
        return tmp_path / "other"
    if kind == "forged-marker":  # a marker claiming user files as its own
        (tmp_path / "forged").mkdir()
        (tmp_path / "forged" / ".overlap-output").write_text("{not json")
        (tmp_path / "forged" / "thesis.tex").write_text("precious")
        return tmp_path / "forged"
    if kind == "name-too-long":
        return tmp_path / ("x" * 300)
    if kind == "empty":
        (tmp_path / "empty").mkdir()
        return tmp_path / "empty"
    if kind == "new-nested-unicode":
        return tmp_path / "a" / "b" / "ünï cödé ✓"
    raise AssertionError(kind)


REFUSED = ["nonempty", "file", "dot", "parent-of-inputs", "input-folder", "under-file", "link-to-input",
           "other-command-output", "forged-marker", "name-too-long"]
ALLOWED = ["empty", "new-nested-unicode"]


@pytest.mark.parametrize("kind", REFUSED)
@pytest.mark.parametrize("command", COMMANDS)
def test_out_refused(command, kind, tmp_path, result_folder):
    if command == "demo" and kind in ("input-folder", "link-to-input"):
        pytest.skip("the demo's input is the package's own data")  # checked by the watch below anyway
    if command == "report" and kind == "input-folder":
        pytest.skip("report writes beside the result it renders by design (its default --out)")
    args, input_folder, watch = _setup(command, tmp_path, result_folder)
    out = _target(kind, tmp_path, input_folder)
    run_checked(f"out:{command}:{kind}", [*args, "--out", out], root=tmp_path, watch=watch, expect=2)


@pytest.mark.parametrize("kind", ALLOWED)
@pytest.mark.parametrize("command", COMMANDS)
def test_out_allowed(command, kind, tmp_path, result_folder):
    if command == "demo" and kind == "empty":
        pytest.skip("one demo run is enough (slow)")
    args, input_folder, watch = _setup(command, tmp_path, result_folder)
    out = _target(kind, tmp_path, input_folder)
    run_checked(f"out:{command}:{kind}", [*args, "--out", out], root=tmp_path, watch=watch, expect=0)


@pytest.mark.parametrize("command", ["compare", "filter", "card"])
def test_rerun_into_own_output_and_then_other_command(command, tmp_path, result_folder):
    args, _, watch = _setup(command, tmp_path, result_folder)
    out = tmp_path / "out"
    run_checked(f"out:{command}:first", [*args, "--out", out], root=tmp_path, expect=0)
    run_checked(f"out:{command}:rerun", [*args, "--out", out], root=tmp_path, expect=0)
    (out / "user-notes.txt").write_text("mine")
    run_checked(f"out:{command}:rerun-with-user-file", [*args, "--out", out], root=tmp_path, expect=2)


def test_out_inside_an_input_folder_of_shards(tmp_path):
    """--out inside the SWE-rebench-V2-PRs folder (read as **/*.parquet): a written train.parquet would become
    a shard of the next run's input."""
    paths = swe_data(tmp_path / "data")
    out = paths["swe-rebench-v2-prs"] / "filtered"
    args = ["filter", "swe-rebench-v2-prs", "swe-bench-multilingual", *data_args(paths), "--out", out]
    run_checked("out:filter:inside-input-shards", args, root=tmp_path, expect=2)


def test_card_out_is_the_input_card_folder(tmp_path, result_folder):
    """`overlap card RES --card ds/README.md --out ds` overwrote the input card."""
    shutil.copytree(result_folder, tmp_path / "res")
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "README.md").write_text("# card\n")
    args = ["card", "res", "--card", "ds/README.md", "--out", "ds"]
    run_checked("out:card:input-card-folder", args, root=tmp_path, expect=2)


def test_report_in_place_keeps_the_result(tmp_path, result_folder):
    shutil.copytree(result_folder, tmp_path / "res")
    run_checked("out:report:default-in-place", ["report", "res"], root=tmp_path, out=tmp_path / "res", expect=0)


def _git_repo(path):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *cmd], cwd=path, env=env, check=True, capture_output=True)


FIX = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
       "-    return a - b\n+    return a + b\n")


@pytest.mark.parametrize("kind", ["folder", "dot", "under-file", "input-fix", "inside-repo", "name-too-long", "new",
                                  "existing-file"])
def test_audit_output(kind, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    _git_repo(tmp_path / "repo")
    (tmp_path / "fix.diff").write_text(FIX)
    output, expect = {
        "folder": (tmp_path / "repo", 2), "dot": (".", 2), "under-file": (tmp_path / "fix.diff" / "x.json", 2),
        "input-fix": (tmp_path / "fix.diff", 2), "inside-repo": (tmp_path / "repo" / "audit.json", 2),
        "name-too-long": (tmp_path / ("x" * 300), 2), "new": (tmp_path / "audit.json", {0, 1}),
        "existing-file": (tmp_path / "old.json", {0, 1}),
    }[kind]
    if kind == "existing-file":
        (tmp_path / "old.json").write_text("{}")
    args = ["audit", "repo", "--fix", "fix.diff", "--format", "json", "--output", output]
    run_checked(f"out:audit:{kind}", args, root=tmp_path, expect=expect)
