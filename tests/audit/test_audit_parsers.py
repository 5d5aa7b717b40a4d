"""The tool's own git-file parsers: real files from the fixtures parse correctly, and truncated,
mutated or random bytes raise ParseError and nothing else."""

from __future__ import annotations

import random

import pytest

from overlap.audit.git import binary as gb
from overlap.audit.git import files as gf
from overlap.audit.git.files import ParseError


def test_real_files_parse(gitfix):
    L = gitfix.L
    refs = gf.parse_packed_refs((L / "packed-tag/.git/packed-refs").read_bytes())
    v2 = next(r for r in refs if r.name == "refs/tags/v2.0")
    assert v2.peeled == "fc491f0a3f47d53f2547cc8bcb562929a72fdb8a"  # the ^ line peels the tag above it
    log = gf.parse_reflog((L / "swb4/.git/logs/HEAD").read_bytes(), "logs/HEAD")
    assert [e.message.split(":")[0] for e in log] == ["clone", "reset", "commit"]
    assert log[2].time == 1704067200
    fh = gf.parse_fetch_head((L / "pseudo/.git/FETCH_HEAD").read_bytes())
    assert [x.not_for_merge for x in fh] == [False, True]
    assert gf.parse_loose_ref((L / "swb4/.git/HEAD").read_bytes(), "HEAD").symref == "refs/heads/main"
    index = gb.parse_index((L / "index/.git/index").read_bytes())
    calc = next(e for e in index.entries if e.path == "src/calc.py")
    assert calc.oid.startswith("7c1ac66") and len(index.entries) == 33
    graph = gb.parse_commit_graph((L / "graph/.git/objects/info/commit-graph").read_bytes())
    assert len(graph) == 5 and {g.time for g in graph} >= {1585735200}
    idx = next((L / "graph/.git/objects/pack").glob("*.idx"))
    assert len(gb.parse_pack_idx(idx.read_bytes())) > 0
    assert gf.parse_shallow((L / "ctl-shallow/.git/shallow").read_bytes()) == [gitfix.base]


def test_index_versions_3_and_4_and_reuc(gitfix, tmp_path):
    import shutil

    from audit_helpers import git

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "index", repo, symlinks=True)
    v2 = gb.parse_index((repo / ".git/index").read_bytes())
    git("update-index", "--skip-worktree", "src/m1.py", cwd=repo)  # an extended flag: git keeps v3 then
    for version in ("3", "4"):
        git("update-index", "--index-version", version, cwd=repo)
        parsed = gb.parse_index((repo / ".git/index").read_bytes())
        assert parsed.version == int(version)
        assert [(e.path, e.oid, e.mtime_ns) for e in parsed.entries] == [
            (e.path, e.oid, e.mtime_ns) for e in v2.entries]
        assert [e.path for e in parsed.entries if e.skip_worktree] == ["src/m1.py"]
    # a conflict resolved by `git add` leaves a REUC extension
    conflict = tmp_path / "c"
    git("init", "-q", "-b", "main", str(conflict), cwd=tmp_path)
    (conflict / "f").write_text("a\n")
    git("add", "f", cwd=conflict)
    git("commit", "-q", "-m", "a", cwd=conflict)
    git("checkout", "-q", "-b", "other", cwd=conflict)
    (conflict / "f").write_text("b\n")
    git("commit", "-q", "-am", "b", cwd=conflict)
    git("checkout", "-q", "main", cwd=conflict)
    (conflict / "f").write_text("c\n")
    git("commit", "-q", "-am", "c", cwd=conflict)
    import subprocess

    with pytest.raises(subprocess.CalledProcessError):  # the merge stops on the conflict
        git("merge", "other", cwd=conflict)
    staged = gb.parse_index((conflict / ".git/index").read_bytes())
    assert sorted(e.stage for e in staged.entries) == [1, 2, 3]
    git("add", "f", cwd=conflict)
    resolved = gb.parse_index((conflict / ".git/index").read_bytes())
    assert "REUC" in resolved.extensions and resolved.reuc[0][0] == "f"
    assert [s for s, _ in resolved.reuc[0][1]] == [1, 2, 3]


def _samples(gitfix) -> dict:
    L = gitfix.L
    idx = next((L / "graph/.git/objects/pack").glob("*.idx"))
    return {
        "packed": (gf.parse_packed_refs, (L / "packed-tag/.git/packed-refs").read_bytes()),
        "reflog": (lambda d: gf.parse_reflog(d, "x"), (L / "swb4/.git/logs/HEAD").read_bytes()),
        "fetch": (gf.parse_fetch_head, (L / "pseudo/.git/FETCH_HEAD").read_bytes()),
        "loose": (lambda d: gf.parse_loose_ref(d, "x"), (L / "pseudo/.git/ORIG_HEAD").read_bytes()),
        "shallow": (gf.parse_shallow, (L / "ctl-shallow/.git/shallow").read_bytes()),
        "index": (gb.parse_index, (L / "index/.git/index").read_bytes()),
        "graph": (gb.parse_commit_graph, (L / "graph/.git/objects/info/commit-graph").read_bytes()),
        "idx": (gb.parse_pack_idx, idx.read_bytes()),
        "midx": (gb.parse_midx, b"MIDX\x01\x01\x01\x00\x00\x00\x00\x01" + b"OIDF" + (20).to_bytes(8, "big")),
        "commit": (gf.parse_commit, b"tree " + b"a" * 40 + b"\nparent " + b"b" * 40 + b"\nauthor x <y> 1 +0000\n\nm"),
        "tag": (gf.parse_tag, b"object " + b"a" * 40 + b"\ntype commit\ntag v1\n\nmsg"),
        "tree": (gf.parse_tree, b"100644 a.py\0" + bytes(20) + b"40000 d\0" + bytes(20)),
        "grafts": (gf.parse_grafts, b"a" * 40 + b" " + b"b" * 40 + b"\n"),
        "info_refs": (gf.parse_info_refs, b"a" * 40 + b"\trefs/heads/x\n"),
    }


def _only_parse_errors(fn, data: bytes) -> None:
    try:
        fn(data)
    except ParseError:
        pass


@pytest.mark.parametrize("kind", ["packed", "reflog", "fetch", "loose", "shallow", "index", "graph", "idx", "midx",
                                  "commit", "tag", "tree", "grafts", "info_refs"])
def test_fuzz_truncated_mutated_random(gitfix, kind):
    fn, data = _samples(gitfix)[kind]
    rng = random.Random(f"audit-fuzz-{kind}")
    step = max(1, len(data) // 300)
    for cut in range(0, len(data), step):
        _only_parse_errors(fn, data[:cut])
    for _ in range(300):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if buf:
                buf[rng.randrange(len(buf))] = rng.randrange(256)
        _only_parse_errors(fn, bytes(buf))
    for _ in range(200):
        _only_parse_errors(fn, rng.randbytes(rng.randint(0, 2048)))
    _only_parse_errors(fn, data[:4] + rng.randbytes(4096))


def test_parse_error_names_file_and_offset():
    with pytest.raises(ParseError) as exc:
        gf.parse_packed_refs(b"# pack-refs\nnot-a-sha refs/heads/x\n", "packed-refs")
    assert exc.value.source == "packed-refs" and exc.value.offset == 12
    assert "packed-refs" in str(exc.value)


def test_real_multi_pack_index(gitfix, tmp_path):
    import shutil

    from audit_helpers import git

    repo = tmp_path / "midx"
    shutil.copytree(gitfix.L / "graph", repo, symlinks=True)
    git("multi-pack-index", "write", cwd=repo)
    data = (repo / ".git/objects/pack/multi-pack-index").read_bytes()
    ids = gb.parse_midx(data)
    assert ids == sorted(ids) and len(ids) == sum(len(gb.parse_pack_idx(p.read_bytes()))
                                                   for p in (repo / ".git/objects/pack").glob("*.idx"))
    rng = random.Random("midx")
    for cut in range(0, len(data), max(1, len(data) // 200)):
        _only_parse_errors(gb.parse_midx, data[:cut])
    for _ in range(200):
        buf = bytearray(data)
        buf[rng.randrange(len(buf))] = rng.randrange(256)
        _only_parse_errors(gb.parse_midx, bytes(buf))
