"""Matches outside the repository are graded against the files around it (no Debian packages needed).

A root filesystem holds a task repository at /testbed whose fix adds a common word (``DeprecationWarning``)
and a message of its own. Decoy binaries and wheel members outside the repository hold the common word;
hypothesis draws how many decoys there are and which of them also hold the message (a leak). The oracle is
the documented rule in plain Python: a string outside the repository is evidence when fewer than 3 files there
(copies of the fix aside) hold it."""

from __future__ import annotations

import shutil
import zipfile

import pytest
from audit_helpers import git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.audit import audit

MESSAGE = "total() of an empty list is 0 since 2.1"
BASE_TEXT = "def total(values):\n    return sum(values)\n"
FIXED_TEXT = ("import warnings\n\n\ndef total(values):\n    if not values:\n"
              f"        warnings.warn(\"{MESSAGE}\", DeprecationWarning)\n    return sum(values)\n")
COMMON = 3


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    L = tmp_path_factory.mktemp("bg")
    repo = L / "testbed"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "calc.py").write_text(BASE_TEXT)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo, env={"GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
                                               "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"})
    base = git("rev-parse", "HEAD", cwd=repo).strip()
    (repo / "calc.py").write_text(FIXED_TEXT)
    patch = git("diff", cwd=repo)
    git("checkout", "-q", "--", "calc.py", cwd=repo)
    (L / "fix.patch").write_text(patch)
    return L, base


def elf(*words: str) -> bytes:
    return b"\x7fELF\x02\x01\x01\0" + b"".join(w.encode() + b"\0" for w in words) + b"\0" * 32


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(decoys=st.integers(0, 5), leaks=st.sets(st.integers(0, 5), max_size=2), member_decoys=st.integers(0, 3))
def test_a_string_outside_the_repository_counts_only_when_rare(task, tmp_path_factory, decoys, leaks, member_decoys):
    L, base = task
    root = tmp_path_factory.mktemp("root")
    shutil.copytree(L / "testbed", root / "testbed", symlinks=True)
    lib = root / "usr/lib/runtime"
    lib.mkdir(parents=True)
    files: dict[str, bytes] = {}
    for i in range(decoys):
        files[f"/usr/lib/runtime/m{i}.so"] = elf("PyExc_DeprecationWarning", f"decoy module {i:04d}")
    for i in sorted(leaks):
        files[f"/usr/lib/runtime/leak{i}.so"] = elf("speedups for calc", MESSAGE)
    for shown, data in files.items():
        (root / shown.lstrip("/")).write_bytes(data)
    members = {f"pkg/w{i}.py": f"raise DeprecationWarning('old api {i:04d}')\n" for i in range(member_decoys)}
    if members:
        with zipfile.ZipFile(lib / "tool-1.0-py3-none-any.whl", "w") as z:
            for name, text in members.items():
                z.writestr(name, text)
    report = audit(str(root), rootfs=True, repo_path="/testbed", base=base, fix=[str(L / "fix.patch")])
    l5 = {f.key: f for f in report.targets[0].findings if f.check == "L5"}

    # the oracle: per fix-only string, the background files outside the repository holding it
    words = ("DeprecationWarning", MESSAGE)
    holders = {w: sum(w.encode() in d for d in files.values()) + sum(w in t for t in members.values()) for w in words}
    rare = {w for w in words if holders[w] < COMMON}
    want = {f"L5:{shown}" for shown, data in files.items() if any(w.encode() in data for w in rare)}
    if members and "DeprecationWarning" in rare:
        want.add("L5:/usr/lib/runtime/tool-1.0-py3-none-any.whl")
    assert set(l5) == want, (holders, sorted(l5))
    for f in l5.values():
        assert set(f.evidence.get("tokens") or [t for i in f.evidence["items"] for t in i["tokens"]]) <= rare
