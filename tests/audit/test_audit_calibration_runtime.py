"""Calibration on real base images: the clean shapes of a study audit CLEAN on a real language runtime,
and every planted leak is still found.

The root filesystem is Debian's python3.11 (with ``ensurepip``'s bundled pip and setuptools wheels),
nodejs, golang and openjdk packages unpacked (``runtime_helpers``); the task repository sits on top at
``/testbed``, built with real git. The task's fix adds words the runtime is full of (``import warnings``,
``from functools import wraps``, ``DeprecationWarning``, ``stacklevel``): its first hunk is held, in order,
by the stdlib's own ``xdrlib.py``, and the runtime's wheels and ``lib-dynload/*.so`` hold the strings. None
of that is evidence; the task's own message and hunks are.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile

import pytest
from audit_helpers import clean_env
from runtime_helpers import rootfs_copy

from overlap.audit import audit
from overlap.audit.study.render import render_console
from overlap.audit.study.summary import columns_of, set_summary

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MESSAGE = "sum_all() is deprecated since calcpkg 2.1; call total()"

TASK = r'''
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 TZ=UTC
export GIT_AUTHOR_NAME=up GIT_AUTHOR_EMAIL=up@example.org GIT_COMMITTER_NAME=up GIT_COMMITTER_EMAIL=up@example.org
q() { "$@" >/dev/null 2>&1; }
c() { d=$1 m=$2; shift 2; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$m" "$@"; }
t() { GIT_COMMITTER_DATE=$1 git tag -a "$2" -m "$2" $3; }
calc() {  # calc.py: $1 = the subtraction bug or the fix
  printf '"""Arithmetic helpers."""\n'
  [ "$1" = fixed ] && printf 'from functools import wraps\nimport warnings\n'
  for i in 1 2 3 4 5 6; do printf '\n\ndef scale_%s(x):\n    return x * %s\n' $i $i; done
  printf '\n\ndef add(a, b):\n'
  [ "$1" = fixed ] && printf '    return a + b\n' || printf '    return a - b\n'
  printf '\n\ndef total(values):\n    out = 0\n    for v in values:\n        out = add(out, v)\n    return out\n'
  [ "$1" = fixed ] && printf '\n\ndef sum_all(values):\n    %s\n    return total(values)\n' \
    "warnings.warn(\"$MESSAGE\", DeprecationWarning, stacklevel=2)"
  true; }
cd "$L"
git init -q -b main up && cd up
mkdir src tests; for i in $(seq 1 20); do echo "x$i = $i" > src/m$i.py; done
calc old > src/calc.py; printf 'def test_old():\n    pass\n' > tests/test_calc.py
git add -A; c 2010-01-01T10:00:00Z initial; t 2010-01-01T10:00:00Z v0.1
git checkout -q -b maint-0.1 v0.1                 # an old release branch that edits the file the fix edits
sed -i 's/^"""Arithmetic helpers."""/"""Arithmetic helpers (0.1 series)."""/' src/calc.py
git add -A; c 2010-03-01T10:00:00Z 'backport: docstring'; t 2010-03-01T10:00:00Z v0.1.1
git checkout -q main
echo 'x1 = 11' > src/m1.py; git add -A; c 2020-02-01T10:00:00Z 'main work'; t 2020-02-01T10:00:00Z v1.0
echo 'x2 = 22' > src/m2.py; git add -A; c 2020-03-01T10:00:00Z 'base: tweak m2'; BASE=$(git rev-parse HEAD)
calc fixed > src/calc.py
printf 'def test_old():\n    pass\n\n\ndef test_sum_all_warns_and_adds():\n' > tests/test_calc.py
printf '    from src.calc import sum_all\n    assert sum_all([2, 2]) == 4\n' >> tests/test_calc.py
git add -A; c 2020-04-01T10:00:00Z 'Deprecate sum_all, fix add (#42)'; FIX=$(git rev-parse HEAD)
echo 'x3 = 33' > src/m3.py; git add -A; c 2020-05-01T10:00:00Z 'later work'; t 2020-05-01T10:00:00Z v2.0
cd ..
git -C up diff $BASE $FIX -- src > fix.patch; git -C up diff $BASE $FIX -- tests > test.patch
git -C up show $FIX:src/calc.py > calc_fixed.py
deltags() { T=$(git show -s --format=%ct $BASE)
  for tg in $(git tag -l); do [ $(git show -s --format=%ct "$tg^{commit}") -gt $T ] && q git tag -d $tg; done; true; }
clean() { q git reset --hard $BASE; git remote remove origin; deltags; git reflog expire --expire=now --all
  q git gc --prune=now; }
# clean recipe: single branch, reset to the base, remote removed, later tags deleted, pruned
q git clone -q --single-branch file://$L/up clean-recipe; (cd clean-recipe; clean)
# single commit: the base tree committed alone
mkdir single-commit; git -C up archive $BASE | tar -x -C single-commit
(cd single-commit; git init -q -b main; git add -A; c 2024-06-01T10:00:00Z 'task base')
# current-like: SWE-bench's git_clone_timesafe (aggressive gc; ORIG_HEAD names the old tip)
q git clone -q -o origin --single-branch file://$L/up current-like
(cd current-like; q git reset --hard $BASE; git remote remove origin; deltags; git reflog expire --expire=now --all
  q git gc --prune=now --aggressive)
# withdrawn-like: a synthetic base commit (the base tree, committed anew) and nothing else
mkdir withdrawn-like; git -C up archive $BASE | tar -x -C withdrawn-like
(cd withdrawn-like; git init -q -b main; git add -A; c 2024-06-01T10:00:00Z 'synthetic base')
# withdrawn-like over the base's own upstream past: the past up to the base's parent fetched, the synthetic
# base committed on the base's tree, the upstream ref written to info/refs (update-server-info) and deleted,
# then gc (not rewriting info/refs): the past stays in the store, named by info/refs only
git init -q -b main withdrawn-past
(cd withdrawn-past; PAST=$(git -C ../up rev-parse $BASE~1)
  git fetch -q --no-tags file://$L/up $PAST:refs/heads/upstream; git checkout -q upstream
  git checkout -q --orphan main; git -C ../up archive $BASE | tar -x; git add -A
  c 2024-06-01T10:00:00Z 'synthetic base'; git update-server-info
  q git branch -D upstream; git reflog expire --expire=now --all; q git -c repack.updateServerInfo=false gc)
# old tag: a full clone keeps the 2010 release tag whose commit edits src/calc.py (no fixed blob)
q git clone -q file://$L/up old-tag
(cd old-tag; clean; for b in $(git branch -r); do q git update-ref -d refs/remotes/$b; done)
# planted leaks, each on the clean recipe
cp -a clean-recipe leak-branch; git -C leak-branch fetch -q file://$L/up $FIX:refs/heads/fix-42
cp -a clean-recipe leak-reflog; (cd leak-reflog; git fetch -q file://$L/up $FIX:refs/heads/tmp; rm .git/FETCH_HEAD
  git checkout -q tmp; git checkout -q main; q git branch -D tmp)      # HEAD's reflog still names the fix
cp -a clean-recipe leak-unreachable; (cd leak-unreachable; git fetch -q file://$L/up $FIX:refs/heads/tmp
  rm .git/FETCH_HEAD; q git branch -D tmp; git reflog expire --expire=now --all)
printf 'BASE=%s\nFIX=%s\n' "$BASE" "$FIX" > ids.env
'''

SHAPES = ("clean-recipe", "single-commit", "current-like", "withdrawn-like", "old-tag")
ORDER = ("critical", "high", "medium", "low", "info")


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    L = tmp_path_factory.mktemp("runtime-task")
    subprocess.run(["bash", "-e", "-c", TASK], env=clean_env(L, L=str(L), MESSAGE=MESSAGE), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ids = dict(line.split("=", 1) for line in (L / "ids.env").read_text().split())
    return L, ids["BASE"], ids["FIX"]


def R(task) -> dict:
    L, base, fix = task
    return {"base": base, "fix": [str(L / "fix.patch")], "tests": [str(L / "test.patch")], "fix_commit": fix}


def on_runtime(task, shape: str, dest) -> tuple:
    """The runtime root filesystem with the task repository of ``shape`` at /testbed."""
    root = rootfs_copy(dest / "root")
    shutil.copytree(task[0] / shape, root / "testbed", symlinks=True)
    return root


def run(task, root, **extra):
    report = audit(str(root), rootfs=True, repo_path="/testbed", **R(task), **extra)
    return report, {f.key: f.severity for f in report.targets[0].findings}


def above(got: dict, floor: str) -> dict:
    return {k: s for k, s in got.items() if ORDER.index(s) < ORDER.index(floor)}


def test_the_runtime_holds_what_fooled_the_audit(task, tmp_path):
    """An independent look at the base: the common words of the fix are in the runtime's wheels and
    extension modules, and the fix's first hunk is in the stdlib's xdrlib.py in order; the task's message is
    nowhere."""
    root = rootfs_copy(tmp_path / "root")
    py = root / "usr/lib/python3.11"
    wheels = sorted((py / "ensurepip/_bundled").glob("*.whl"))
    assert {w.name.split("-")[0] for w in wheels} == {"pip", "setuptools"}
    in_members = sum(b"DeprecationWarning" in zipfile.ZipFile(w).read(n) for w in wheels
                     for n in zipfile.ZipFile(w).namelist())
    assert in_members >= 10
    assert any(b"DeprecationWarning" in p.read_bytes() for p in (py / "lib-dynload").glob("*.so"))
    lines = [ln.strip() for ln in (py / "xdrlib.py").read_text().splitlines()]
    assert lines.index("from functools import wraps") < lines.index("import warnings")
    patch = (task[0] / "fix.patch").read_text()
    assert "+from functools import wraps\n+import warnings\n" in patch and patch.count("@@ -") >= 3
    assert not any(MESSAGE.encode() in p.read_bytes() for p in (py / "lib-dynload").glob("*.so"))


@pytest.mark.parametrize("shape", SHAPES)
def test_clean_shapes_on_the_runtime_audit_clean(task, tmp_path, shape):
    report, got = run(task, on_runtime(task, shape, tmp_path))
    assert report.verdict == "clean" and above(got, "low") == {}, got


def test_old_tag_is_info_with_its_note_and_counted_marked_in_the_table(task, tmp_path):
    report, got = run(task, on_runtime(task, "old-tag", tmp_path))
    assert got.get("G1:refs/tags") == "info", got
    g1 = next(f for f in report.targets[0].findings if f.key == "G1:refs/tags")
    assert g1.evidence["side_history_before_base"] is True and "before the base" in g1.evidence["note"]
    assert [i["ref"] for i in g1.evidence["items"]] == ["refs/tags/v0.1.1"]
    assert not any(k.startswith("G6:") for k in got), got
    doc = json.loads(report.to_json())
    entry = {"instance_id": "calc-42", "status": "ok", "verdict": report.verdict, "columns": columns_of(doc),
             "set": "clean recipe"}
    summary = set_summary("clean recipe", [entry])
    assert summary["columns"]["git_log_all"]["count"] == 1
    table = render_console({"sets": [summary], "targets": [], "verdict": "clean",
                            "counts": {"targets": 1, "ok": 1, "error": 0}})
    assert any(line.strip().startswith("git log --all") and line.endswith("1†") for line in table.splitlines())
    assert "† counted only for side history dated before the base" in table


def test_withdrawn_over_upstream_past_is_suspect_at_most(task, tmp_path):
    root = on_runtime(task, "withdrawn-past", tmp_path)
    assert (root / "testbed/.git/info/refs").read_text().strip()
    report, got = run(task, root)
    assert report.verdict in ("clean", "suspect") and above(got, "medium") == {}, got
    g4 = next(f for f in report.targets[0].findings if f.key == "G4:info/refs")
    assert g4.severity == "info" and "before the base" in g4.evidence["items"][0]["note"], g4.evidence


# ------------------------------------------------------------------------------------- planted leaks
def _plant_copy(root, task):
    site = root / "usr/local/lib/python3.11/dist-packages/calcpkg"
    site.mkdir(parents=True)
    (site / "calc.py").write_bytes((task[0] / "calc_fixed.py").read_bytes() + b"\n# vendored\n")
    return "/usr/local/lib/python3.11/dist-packages/calcpkg/calc.py"


def _plant_so(root, task):
    (root / "opt/calcpkg").mkdir(parents=True)
    (root / "opt/calcpkg/_speed.so").write_bytes(b"\x7fELF\x02\x01\x01\0\0\0" + MESSAGE.encode() + b"\0" * 64)
    return "/opt/calcpkg/_speed.so"


def _plant_wheel(root, task):
    (root / "root/.local").mkdir(parents=True)
    with zipfile.ZipFile(root / "root/.local/calcpkg-2.1-py3-none-any.whl", "w") as z:
        z.writestr("calcpkg/calc.py", (task[0] / "calc_fixed.py").read_text().replace("    ", "\t"))
    return "/root/.local/calcpkg-2.1-py3-none-any.whl"


def _plant_pyc(root, task):
    import py_compile

    src = root / "testbed/src/calc_fixed_src.py"
    src.write_bytes((task[0] / "calc_fixed.py").read_bytes())
    out = root / "testbed/src/__pycache__/calc.cpython-311.pyc"
    py_compile.compile(str(src), cfile=str(out), doraise=True)
    src.unlink()
    return None


LEAKS = {  # shape: (the planting, the findings that must be there, critical or high)
    "leak-branch": (None, {"G1:refs/heads", "G6:refs", "F1"}),
    "leak-reflog": (None, {"G2", "F1"}),
    "leak-unreachable": (None, {"G5", "G6", "F1"}),
    "copy-outside": (_plant_copy, {"F3"}),
    "so-outside": (_plant_so, {"L5"}),
    "wheel-outside": (_plant_wheel, {"L5"}),
    "pyc-in-repo": (_plant_pyc, {"L3"}),
}


@pytest.mark.parametrize("shape", sorted(LEAKS))
def test_every_planted_leak_is_still_found_on_the_runtime(task, tmp_path, shape):
    plant, wanted = LEAKS[shape]
    root = on_runtime(task, shape if plant is None else "clean-recipe", tmp_path)
    where = plant(root, task) if plant else None
    report, got = run(task, root)
    assert report.verdict == "leak", got
    serious = {k for k, s in got.items() if s in ("critical", "high")}
    for want in wanted:
        hits = {k for k in serious if k == want or k.startswith(want + ":")}
        assert hits, (want, got)
        if where is not None:
            assert any(k.endswith(where) for k in hits), (where, got)


# ------------------------------------------------------------------------------------------ as an image
def test_as_an_image_the_clean_build_is_clean_and_a_leak_layer_is_found(task, tmp_path):
    """The python part of the runtime as the base layer, the clean repository as the task's layer; then the
    same with a layer holding a compiled copy of the fix's strings and a fixed copy outside the repository."""
    import sys

    from audit_helpers import HERE

    tree = rootfs_copy(tmp_path / "tree")
    base = tmp_path / "base"
    for part in ("usr/lib/python3.11", "usr/share/python-wheels"):
        shutil.copytree(tree / part, base / part, symlinks=True)
    layer = tmp_path / "task"
    shutil.copytree(task[0] / "clean-recipe", layer / "testbed", symlinks=True)
    leak = tmp_path / "leak"
    _plant_so(leak, task)
    where = _plant_copy(leak, task)

    def image(*layers) -> str:
        tar = tmp_path / f"img{len(layers)}.tar"
        args = [str(x) for pair in layers for x in pair]
        subprocess.run([sys.executable, str(HERE / "fixtures" / "mkimage.py"), str(tar), "docker", "task:1", "[]",
                        *args], check=True, env=clean_env(tmp_path))
        return str(tar)

    py = (base, "ADD python.tar /"), (layer, "COPY testbed /testbed")
    report = audit(image(*py), repo_path="/testbed", **R(task))
    got = {f.key: f.severity for f in report.targets[0].findings}
    assert report.verdict == "clean" and above(got, "low") == {}, got
    report = audit(image(*py, (leak, "RUN make install")), repo_path="/testbed", **R(task))
    got = {f.key: f.severity for f in report.targets[0].findings}
    assert report.verdict == "leak", got
    assert got.get("L5:/opt/calcpkg/_speed.so") == "high" and got.get(f"F3:{where}") == "critical", got
