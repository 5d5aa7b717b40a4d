"""Calibration of the git route on the layouts benchmarks actually ship (built with the real git CLI).

An upstream with old release branches (tags dated years before the base, on branches that never reach
it), a base, the fix and later work; then the cleaning recipes task builders use. A clean build must come
out clean, the ID an absent ``ORIG_HEAD`` names is graded by what it adds to the network access (never above
a configured remote), old side history is not a leak and is reported once, a ``--base`` the store lacks is
an input notice, and the "see it" commands work when run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from audit_helpers import HERE, clean_env

from overlap.audit import audit, render_table

RECIPES = r"""
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 TZ=UTC
export GIT_AUTHOR_NAME=up GIT_AUTHOR_EMAIL=up@example.org GIT_COMMITTER_NAME=up GIT_COMMITTER_EMAIL=up@example.org
q() { "$@" >/dev/null 2>&1; }
c() { d=$1 m=$2; shift 2; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$m" "$@"; }
t() { GIT_COMMITTER_DATE=$1 git tag -a "$2" -m "$2" $3; }
cd "$L"
git init -q -b main up && cd up
mkdir src tests; for i in $(seq 1 30); do echo "x$i = $i" > src/m$i.py; done
printf 'def add(a, b):\n    return a - b\n' > src/calc.py
printf 'def test_old():\n    pass\n' > tests/test_calc.py
git add -A; c 2010-01-01T10:00:00Z initial; t 2010-01-01T10:00:00Z v0.1
echo 'x1 = 11' > src/m1.py; git add -A; c 2010-02-01T10:00:00Z 'main work'
git checkout -q -b maint-0.1 v0.1                                # an old release branch, never merged
echo 'x5 = 55' > src/m5.py; git add -A; c 2010-03-01T10:00:00Z 'backport'; t 2010-03-01T10:00:00Z v0.1.1
echo 'x6 = 66' > src/m6.py; git add -A; c 2010-04-01T10:00:00Z 'backport 2'; t 2010-04-01T10:00:00Z v0.1.2
git checkout -q main
echo '# doc' > README.md; git add -A; c 2020-02-01T10:00:00Z docs; t 2020-02-01T10:00:00Z v1.0
echo 'x2 = 22' > src/m2.py; git add -A; c 2020-03-01T10:00:00Z 'base: tweak m2'; BASE=$(git rev-parse HEAD)
printf 'def add(a, b):\n    \"\"\"Return the sum of a and b (issue #42).\"\"\"\n    return a + b\n' > src/calc.py
printf 'def test_old():\n    pass\n\ndef test_add():\n    from src.calc import add\n    assert add(2, 2) == 4\n' \
  > tests/test_calc.py
git add -A; c 2020-04-01T10:00:00Z 'Fix add() returning difference (#42)'; FIX=$(git rev-parse HEAD)
echo 'x3 = 33' > src/m3.py; git add -A; c 2020-05-01T10:00:00Z 'later work'; t 2020-05-01T10:00:00Z v2.0
cd ..
git -C up diff $BASE $FIX -- src > fix.patch; git -C up diff $BASE $FIX -- tests > test.patch
git -C up show $FIX:src/calc.py > calc_fixed.py
deltags() {  # the tags whose commit is dated after the base
  T=$(git show -s --format=%ct $BASE)
  for tg in $(git tag -l); do [ $(git show -s --format=%ct "$tg^{commit}") -gt $T ] && q git tag -d $tg; done; true; }
# the standard clean recipe: single branch, reset to the base, remote removed, later tags deleted, pruned
q git clone -q --single-branch file://$L/up std; (cd std; q git reset --hard $BASE; git remote remove origin
  deltags; git reflog expire --expire=now --all; q git gc --prune=now)
# SWE-bench's setup script (git_clone_timesafe): the same with an aggressive gc; ORIG_HEAD names the old tip
q git clone -q -o origin --single-branch file://$L/up swb; (cd swb; q git reset --hard $BASE
  git remote remove origin; deltags; git reflog expire --expire=now --all; q git gc --prune=now --aggressive)
cp -a swb swb-remote; git -C swb-remote remote add origin file://$L/up   # the same, remote kept
# a full clone: every branch and tag, later tags deleted; the 2010 release tags stay
q git clone -q file://$L/up full; (cd full; q git reset --hard $BASE; git remote remove origin; deltags
  git reflog expire --expire=now --all; q git gc --prune=now)
# the same plus a backdated side branch that holds the fix: dates alone must not hide it
cp -a full full-backdated; (cd full-backdated; q git checkout -q -b old-fix v0.1; cp ../calc_fixed.py src/calc.py
  git add -A; c 2010-05-01T10:00:00Z 'old fix'; t 2010-05-01T10:00:00Z a-old-fix; q git checkout -q main
  q git branch -D old-fix)
printf 'BASE=%s\nFIX=%s\n' "$BASE" "$FIX" > ids.env
"""


@pytest.fixture(scope="module")
def calib(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    L = tmp_path_factory.mktemp("calib")
    subprocess.run(["bash", "-e", "-c", RECIPES], env=clean_env(L, L=str(L)), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ids = dict(line.split("=", 1) for line in (L / "ids.env").read_text().split())
    return L, ids["BASE"], ids["FIX"]


def R(calib) -> dict:
    L, base, fix = calib
    return {"base": base, "fix": [str(L / "fix.patch")], "tests": [str(L / "test.patch")], "fix_commit": fix}


def graded(report) -> dict[str, str]:
    return {f.key: f.severity for f in report.targets[0].findings}


def above(got: dict[str, str], floor: str) -> dict[str, str]:
    order = ("critical", "high", "medium", "low", "info")
    return {k: s for k, s in got.items() if order.index(s) < order.index(floor)}


# ------------------------------------------------------------------------------------ clean builds
def test_standard_clean_recipe_is_clean(calib):
    L = calib[0]
    report = audit(str(L / "std"), **R(calib))
    got = graded(report)
    assert report.verdict == "clean", got
    assert above(got, "low") == {}  # nothing above low: the pruned ORIG_HEAD is an ID only
    assert render_table(report).startswith("VERDICT: CLEAN")


def test_swebench_recipe_orig_head_is_not_a_high_leak(calib):
    L = calib[0]
    report = audit(str(L / "swb"), **R(calib))
    got = graded(report)
    assert (L / "swb/.git/ORIG_HEAD").is_file()
    assert got.get("G4:ORIG_HEAD") == "low" and report.verdict == "clean", got
    g4 = next(f for f in report.targets[0].findings if f.key == "G4:ORIG_HEAD")
    assert g4.evidence["items"][0]["object_present"] is False
    offline = audit(str(L / "swb"), network="none", **R(calib))
    assert graded(offline).get("G4:ORIG_HEAD") == "info" and offline.verdict == "clean"


def test_absent_id_never_outranks_the_configured_remote(calib):
    L = calib[0]
    order = ("critical", "high", "medium", "low", "info")
    for network in ("any", "none"):
        got = graded(audit(str(L / "swb-remote"), network=network, **R(calib)))
        remote, sha = got["G10:remote.origin"], got["G4:ORIG_HEAD"]
        assert order.index(sha) >= order.index(remote), (network, got)
    assert graded(audit(str(L / "swb-remote"), **R(calib)))["G4:ORIG_HEAD"] == "medium"


def test_clean_build_in_an_image_says_nothing(calib, tmp_path):
    """The image a builder makes of the clean repository: no finding above low, verdict clean."""
    L = calib[0]
    layer = tmp_path / "l0"
    shutil.copytree(L / "std", layer / "testbed", symlinks=True)
    tar = tmp_path / "img.tar"
    subprocess.run([sys.executable, str(HERE / "fixtures" / "mkimage.py"), str(tar), "docker", "task:1", "[]",
                    str(layer), "COPY testbed /testbed"], check=True, env=clean_env(tmp_path))
    report = audit(str(tar), **R(calib))
    assert report.verdict == "clean" and above(graded(report), "low") == {}, graded(report)


# ---------------------------------------------------------------------------------- side history
def test_full_clone_old_release_tags_are_not_suspect_and_reported_once(calib):
    L = calib[0]
    report = audit(str(L / "full"), **R(calib))
    got = graded(report)
    assert report.verdict == "clean", got
    assert got.get("G1:refs/tags") == "info"
    assert not any(k.startswith("G6:") for k in got), got  # the commits are the tag's, reported by G1 only
    assert "G4:info/refs" not in got, got  # info/refs repeats the refs: no finding of its own
    t = report.targets[0]
    assert sum(1 for f in t.findings if "v0.1.1" in repr(f.evidence)) == 1


def test_full_clone_without_reference_is_not_suspect(calib):
    report = audit(str(calib[0] / "full"), base=calib[1])
    got = graded(report)
    assert report.verdict == "clean" and above(got, "low") == {}, got


def test_backdated_side_branch_holding_the_fix_is_still_critical(calib):
    got = graded(audit(str(calib[0] / "full-backdated"), **R(calib)))
    assert got.get("G1:refs/tags") == "critical", got
    assert got.get("G6:refs") == "critical", got


def test_table_shows_the_worst_item_of_a_row(calib):
    """``a-old-fix`` sorts before ``v0.1.1`` by name; here the row must show the worst of the refs."""
    report = audit(str(calib[0] / "full-backdated"), **R(calib))
    g1 = next(f for f in report.targets[0].findings if f.key == "G1:refs/tags")
    assert g1.evidence["items"][0]["ref"] == "refs/tags/a-old-fix"
    assert g1.evidence["items"][0]["severity"] == "critical"
    assert [i["severity"] for i in g1.evidence["items"]][1:] == ["info", "info"]
    row = next(ln for ln in render_table(report, width=200).splitlines() if re.match(r"critical\s+G1", ln))
    assert "a-old-fix" in row and "(+2 more)" in row


# --------------------------------------------------------------------------------------- inputs
def test_base_not_in_store_is_an_input_notice(calib):
    L = calib[0]
    missing = "1234567890abcdef1234567890abcdef12345678"
    report = audit(str(L / "std"), base=missing, fix=[str(L / "fix.patch")])
    got = graded(report)
    assert got.get("G14:base_missing") == "info" and report.verdict == "clean", got
    t = report.targets[0]
    head = t.base["sha"]
    assert t.base["missing"] == missing and head != missing
    table = render_table(report, width=200).splitlines()
    assert f"base={missing[:7]} (argument, not in store) -> HEAD {head[:7]}" in table[0]
    assert f"base={head[:7]} (argument)" not in table[0]
    assert table[1].startswith("notice: input error: base 1234567890ab")


# ----------------------------------------------------------------------------------------- times
def test_t1_see_it_command_lists_the_set_apart_files(tmp_path):
    repo = tmp_path / "t"
    script = r"""
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 TZ=UTC
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x
git init -q -b main "$R" && cd "$R"; mkdir src; for i in $(seq 1 30); do echo "x$i = $i" > src/m$i.py; done
git add -A; git commit -q -m init; git ls-files -z | xargs -0 touch -d '2024-01-01 10:00:00'
touch -d '2024-01-01 10:07:00' src/m3.py src/m7.py          # whole-second times, 7 minutes after the rest
"""
    subprocess.run(["bash", "-e", "-c", script], env=clean_env(tmp_path, R=str(repo)), check=True)
    report = audit(str(repo))
    t1 = next(f for f in report.targets[0].findings if f.check == "T1")
    cmd = t1.reproduce["command"]
    out = subprocess.run(["sh", "-c", cmd], cwd=repo, capture_output=True, text=True, check=True).stdout
    assert sorted(out.split()) == ["./src/m3.py", "./src/m7.py"], (cmd, out)
    assert "Jaccard" not in render_table(report)  # no reference: nothing to compare with


def test_table_says_what_j_is():
    from overlap.audit.model import Finding
    from overlap.audit.report import evidence_cell

    f = Finding("T1", "worktree", "high", "location", "t", "worktree",
                {"group": [{"path": "src/calc.py"}], "gap": 420.0, "jaccard": 1.0}, {"command": "find"})
    assert evidence_cell(f) == "src/calc.py (gap 420 s; Jaccard 1.00 with the reference's files)"


def test_docs_explain_the_jaccard_of_the_time_checks():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text()
    assert "Jaccard" in doc and "reference's files" in doc
