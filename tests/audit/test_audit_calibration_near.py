"""F3's scan of non-base blobs streams them within a byte budget and finds exactly what decoding and
matching every blob at once finds (real git, a future branch of near copies, decoys and filler)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from audit_helpers import clean_env

from overlap.audit import audit
from overlap.audit.checks import near
from overlap.audit.content.matchers import holds, stripped_lines
from overlap.audit.git.cmd import GitRunner

DOC = '    """Return the sum of a and b (issue #42)."""'
RET = "    return a + b"
FIX = f"def add(a, b):\n{DOC}\n{RET}\n"

BLOBS = {
    "copy.py": f"# vendored\n{FIX}\ndef sub(a, b):\n    return a - b\n",  # a near copy: held
    "spread.py": f"def add(a, b):\n{DOC}\n    x = 1\n\n{RET}\n",  # other lines in between: held
    "crlf.py": f"def add(a, b):\r\n\t{DOC.strip()}   \r\n{RET}\r\n",  # other line ends and indentation: held
    "latin.py": "# caf\xe9\n".encode("latin-1").decode("latin-1") + FIX,  # invalid UTF-8 before it: held
    "reversed.py": f"def add(a, b):\n{RET}\n{DOC}\n",  # out of order: not held
    "half.py": f"def add(a, b):\n{DOC}\n    return a - b\n",  # one line only: not held
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    L = tmp_path_factory.mktemp("near")
    repo = L / "repo"
    env = clean_env(L, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="a",
                    GIT_AUTHOR_EMAIL="a@x", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@x")

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True).stdout.decode()

    repo.mkdir()
    git("init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src/calc.py").write_text("def add(a, b):\n    return a - b\n")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    base = git("rev-parse", "HEAD").strip()
    git("checkout", "-q", "-b", "future")
    (repo / "src/calc.py").write_text(FIX)  # the fixed blob itself: F1's, never an F3 store hit
    for name, text in BLOBS.items():
        (repo / "v" / name).parent.mkdir(exist_ok=True)
        data = text.encode("latin-1") if name == "latin.py" else text.encode()
        (repo / "v" / name).write_bytes(data)
    (repo / "v/binary.bin").write_bytes(b"\0\1\2" + FIX.encode())  # binary: skipped
    for i in range(60):  # filler, so a small budget needs many calls
        (repo / "v" / f"fill{i:02d}.py").write_text(f"value_{i} = {i}\n" * (40 + i))
    git("add", "-A")
    git("commit", "-q", "-m", "future")
    git("checkout", "-q", "main")
    (L / "fix.patch").write_text(git("diff", base, "future", "--", "src/calc.py"))
    return L, repo, base, git


def test_store_hits_equal_brute_force_under_a_tiny_budget(store, monkeypatch):
    L, repo, base, git = store
    monkeypatch.setattr(near, "STORE_BUDGET", 2048)
    sizes: list[int] = []
    real = GitRunner.run

    def spy(self, args, **kw):
        res = real(self, args, **kw)
        if list(args) == ["cat-file", "--batch"]:
            sizes.append(len(res.stdout))
        return res

    monkeypatch.setattr(GitRunner, "run", spy)
    report = audit(str(repo), base=base, fix=[str(L / "fix.patch")])
    f3 = next(f for f in report.targets[0].findings if f.key == "F3:store")
    got = {h["blob"] for h in f3.evidence["items"]}
    names = {git("rev-parse", f"future:v/{n}").strip(): n for n in BLOBS}
    assert sorted(names[b] for b in got) == ["copy.py", "crlf.py", "latin.py", "spread.py"]
    assert got == brute_force(repo, git, base)
    assert len(sizes) > 10  # the budget split the scan into many calls
    assert max(sizes) < 2048 + 4096  # one call: the budget plus at most one object and the headers


def brute_force(repo, git, base: str) -> set[str]:
    """The hunk lines as F3 derives them, matched with ``holds`` over every decoded non-base blob."""
    from overlap.audit.content.matchers import HunkLines

    hunk = HunkLines("fix", "src/calc.py", "", (DOC.strip(), RET.strip()))
    out = set()
    rows = git("rev-list", "--objects", "future", "--not", base).splitlines()
    for row in rows:
        oid = row.split()[0]
        if git("cat-file", "-t", oid).strip() != "blob":
            continue
        data = subprocess.run(["git", "cat-file", "blob", oid], cwd=repo, capture_output=True, check=True).stdout
        if b"\0" in data[:8192] or data == FIX.encode():
            continue
        if holds(stripped_lines(data.decode("utf-8", "replace")), hunk):
            out.add(oid)
    return out


def test_needles_fall_back_when_a_line_cannot_be_searched_as_bytes():
    from overlap.audit.content.matchers import HunkLines

    assert near._needles([HunkLines("fix", "p", "", ("x = '\ufffd' + other_name",))]) is None
    assert near._needles([HunkLines("fix", "p", "", ("x = '\ud800' + other_name",))]) is None
    assert near._needles([HunkLines("fix", "p", "", ("return a + b  # sum",))]) == [b"return a + b  # sum"]
