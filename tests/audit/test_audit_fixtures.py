"""The git, fixed-content and file-time fixtures against their expected results.

For each fixture the listed findings must appear at the listed severity, no other finding above
``info`` may appear, and the verdict must match. Keys may use ``*`` (storage names hold pack hashes).
"""

from __future__ import annotations

import fnmatch

import pytest

from overlap.audit import audit
from overlap.errors import InputError

FIXC = "F1:fix-commit:*"
EXPECTED: dict[str, tuple[str, dict[str, str], dict]] = {
    "swb4": ("leak", {"G1:refs/tags": "critical", "G2:logs/HEAD": "critical", "G2:logs/refs/heads/main": "critical",
                      "G4:ORIG_HEAD": "critical", "G6:refs": "critical", "F1:src/calc.py": "critical",
                      "F2:tests/test_calc.py": "critical", "G14:setup_commits": "info", FIXC: "critical"}, {}),
    "swb5": ("clean", {"G4:ORIG_HEAD": "low"}, {}),
    "ctl-swb5": ("clean", {}, {}),
    "ctl-fresh": ("clean", {}, {"base": "HEAD"}),
    "reflog": ("leak", {"G2:logs/HEAD": "critical", "G6:reflog": "critical", "G5:pack:*": "critical",
                        "F1:src/calc.py": "critical", "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "unreach-pack": ("leak", {"G5:pack:*": "critical", "G6:unreachable": "critical", "F1:src/calc.py": "critical",
                              "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "unreach-loose": ("leak", {"G5:loose": "critical", "G6:unreachable": "critical", "F1:src/calc.py": "critical",
                               "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "cruft": ("leak", {"G5:cruft:*": "critical", "G6:unreachable": "critical", "F1:src/calc.py": "critical",
                       "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "stash": ("leak", {"G3:refs/stash": "critical", "G6:stash": "critical", "F1:src/calc.py": "critical"}, {}),
    "stash-drop": ("leak", {"G5:loose": "critical", "G6:unreachable": "critical", "F1:src/calc.py": "critical"}, {}),
    "packed-tag": ("leak", {"G1:refs/tags": "critical", "G4:FETCH_HEAD": "critical", "G6:refs": "critical",
                            "F1:src/calc.py": "critical", "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "pseudo": ("clean", {"G4:ORIG_HEAD": "low", "G4:FETCH_HEAD": "low"}, {}),
    "worktree": ("leak", {"G8:worktrees/worktree-wt": "critical", "G1:worktrees/worktree-wt": "critical",
                          "G6:worktree": "critical", "F1:src/calc.py": "critical", "F2:tests/test_calc.py": "critical",
                          FIXC: "critical"}, {}),
    "alt": ("leak", {"G9:*": "critical", "G5:alternate:*": "critical", "G6:unreachable": "critical",
                     "F1:src/calc.py": "critical", "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "namespaces": ("leak", {"G1:refs/pull": "critical", "G1:refs/original": "critical",
                            "G1:refs/prefetch": "critical", "G6:refs": "critical", "F1:src/calc.py": "critical",
                            "F2:tests/test_calc.py": "critical", FIXC: "critical"}, {}),
    "index": ("leak", {"G7:index": "critical", "F1:src/calc.py": "critical"}, {}),
    "index-gc": ("leak", {"G7:index": "critical", "F1:src/calc.py": "critical"}, {}),
    "dangling": ("leak", {"G5:loose": "critical", "F1:src/calc.py": "critical"}, {}),
    "backdated": ("leak", {"G1:refs/heads": "critical", "G2:logs/HEAD": "critical",
                           "G2:logs/refs/heads/pr42": "critical", "G6:refs": "critical",
                           "F1:src/calc.py": "critical"}, {}),
    "graph": ("clean", {"G12:objects/info/commit-graph": "low"}, {}),
    "replace": ("leak", {"G11:refs/replace": "critical", "F1:src/calc.py": "critical"}, {}),
    "remote": ("suspect", {"G10:remote.origin": "medium"}, {}),
    "nested": ("leak", {"G13:vendor/up.git": "critical", "F1:src/calc.py": "critical",
                        "F2:tests/test_calc.py": "critical"}, {}),
    "setup-test": ("leak", {"G14:setup_commits": "high", "F2:tests/test_calc.py": "critical"}, {}),
    "ctl-setup": ("clean", {"G14:setup_commits": "info"}, {}),
    "ctl-shallow": ("clean", {"G11:shallow": "info"}, {}),
    "smith": ("suspect", {"F1:src/calc.py": "medium"}, {"smith": True}),
    "reftable": ("incomplete", {"G15:format": "info"}, {}),
    "hostile": ("suspect", {"G1:refs/heads": "medium", "G10:remote.origin": "medium"}, {}),
    "t-fresh": ("clean", {}, {}),
    "t-validate": ("leak", {"T1:worktree": "high", "T2:stat-dirty": "high"}, {}),
    "t-hostcopy": ("clean", {}, {}),
    "t-normalised": ("clean", {}, {}),
    "t-index": ("leak", {"T2:index-times": "high", "T2:stat-dirty": "high"}, {}),
}

OFFLINE = {  # --network none: an absent object's ID gives nothing (info); a remote drops to low
    "swb5": ("clean", {"G4:ORIG_HEAD": "info"}),
    "pseudo": ("clean", {"G4:ORIG_HEAD": "info", "G4:FETCH_HEAD": "info"}),
    "graph": ("clean", {"G12:objects/info/commit-graph": "info"}),
    "remote": ("clean", {"G10:remote.origin": "low"}),
}


def options(gitfix, name: str, extra: dict) -> dict:
    if extra.get("smith"):
        return {"base": "HEAD", "fix": [gitfix.path("smith-fix.patch")]}
    kw = dict(gitfix.R)
    kw.update({k: v for k, v in extra.items() if k != "smith"})
    return kw


def assert_findings(report, expected: dict[str, str], verdict: str) -> None:
    t = report.targets[0]
    got = {f.key: f.severity for f in t.findings}
    for pattern, sev in expected.items():
        hits = [k for k in got if fnmatch.fnmatchcase(k, pattern)]
        assert hits, f"missing {pattern}; got {got}"
        assert all(got[k] == sev for k in hits), f"{pattern}: expected {sev}, got {[(k, got[k]) for k in hits]}"
    for key, sev in got.items():
        if sev != "info":
            assert any(fnmatch.fnmatchcase(key, p) for p in expected), f"unexpected finding {key}={sev}"
    assert report.verdict == verdict, (report.verdict, got, [(c.id, c.reason) for c in t.incomplete_checks()])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture(gitfix, name):
    verdict, expected, extra = EXPECTED[name]
    report = audit(gitfix.path(name), **options(gitfix, name, extra))
    assert_findings(report, expected, verdict)


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_fixture_offline(gitfix, name):
    verdict, expected = OFFLINE[name]
    report = audit(gitfix.path(name), network="none", **gitfix.R)
    assert_findings(report, expected, verdict)


def test_t_validate_without_reference_is_suspect(gitfix):
    report = audit(gitfix.path("t-validate"))
    assert_findings(report, {"T1:worktree": "medium", "T2:stat-dirty": "medium"}, "suspect")


def test_reftable_blocks_git_and_fixed_routes_but_times_run(gitfix):
    t = audit(gitfix.path("reftable"), **gitfix.R).targets[0]
    status = {c.id: c.status for c in t.checks}
    assert all(status[f"G{i}"] == "incomplete" for i in range(1, 15))
    assert status["F1"] == status["F2"] == "incomplete"
    assert status["T1"] == status["T2"] == "ran"
    assert t.routes["git"] == t.routes["fixed-content"] == "incomplete"
    assert not t.complete


def test_backdated_commit_is_found_whatever_its_date(gitfix):
    t = audit(gitfix.path("backdated"), **gitfix.R).targets[0]
    g6 = next(f for f in t.findings if f.key == "G6:refs")
    rec = g6.evidence["items"][0]
    assert rec["date_vs_base"] == "same-second"
    assert rec["descends_from_base"] is True
    assert rec["holds_fixed_blob"] is True and rec["paths"] == ["src/calc.py"]


def test_pseudo_fetch_head_marks_the_fix_commit(gitfix):
    t = audit(gitfix.path("pseudo"), **gitfix.R).targets[0]
    fh = next(f for f in t.findings if f.key == "G4:FETCH_HEAD")
    items = fh.evidence["items"]
    assert len(items) == 2 and not any(i["object_present"] for i in items)
    assert [i["is_fix_commit"] for i in items].count(True) == 1
    assert any("feature" in i["description"] for i in items if i["is_fix_commit"])


def test_graph_lists_two_absent_commits_one_is_the_fix(gitfix):
    t = audit(gitfix.path("graph"), **gitfix.R).targets[0]
    g12 = next(f for f in t.findings if f.check == "G12")
    assert g12.evidence["total"] == 2
    assert [i["is_fix_commit"] for i in g12.evidence["items"]].count(True) == 1
    assert g12.evidence["items"][0]["commit_time"] == "2020-04-01T10:00:00Z"


def test_packed_tag_is_packed_only(gitfix):
    t = audit(gitfix.path("packed-tag"), **gitfix.R).targets[0]
    g1 = next(f for f in t.findings if f.key == "G1:refs/tags")
    assert [(i["ref"], i["packed_only"]) for i in g1.evidence["items"]] == [("refs/tags/v2.0", True)]


def test_storage_labels(gitfix):
    for name, storage in (("unreach-loose", "loose"), ("cruft", "cruft:"), ("unreach-pack", "pack:"),
                          ("alt", "alternate:")):
        t = audit(gitfix.path(name), **gitfix.R).targets[0]
        g5 = [f for f in t.findings if f.check == "G5"]
        assert g5 and all(f.evidence["storage"].startswith(storage) for f in g5), (name, [f.key for f in g5])


def test_swb4_without_reference_grades_future_history_high(gitfix):
    t = audit(gitfix.path("swb4"), base=gitfix.base).targets[0]
    g6 = next(f for f in t.findings if f.key == "G6:refs")
    assert g6.severity == "high"
    assert {c.id: c.status for c in t.checks}["F1"] == "not_applicable"


def test_base_missing_is_reported_and_audit_continues(gitfix):
    t = audit(gitfix.path("ctl-fresh"), base="1234567890abcdef1234567890abcdef12345678").targets[0]
    keys = {f.key: f.severity for f in t.findings}
    assert keys.get("G14:base_missing") == "info"  # an input mismatch, not a leak
    assert t.base["missing"] == "1234567890abcdef1234567890abcdef12345678"


def test_unreachable_set_matches_git_fsck(gitfix):
    """G5 cross-check: `git fsck --unreachable` (reflogs count as roots) lists the same objects."""
    from audit_helpers import git

    from overlap.audit.context import Ctx  # noqa: F401  (import check only)

    for name in ("unreach-pack", "unreach-loose", "cruft", "stash-drop", "dangling", "reflog"):
        path = gitfix.L / name
        out = git("fsck", "--unreachable", "--no-progress", cwd=path)
        fsck = {line.split()[2] for line in out.splitlines() if line.startswith("unreachable ")}
        report = audit(str(path), **gitfix.R)
        t = report.targets[0]
        ours = set()
        for f in t.findings:
            if f.check == "G5":
                ours |= set(f.evidence["commits"]["items"]) | set(f.evidence["tags"]["items"])
        fsck_commits_tags = {o for o in fsck if git("cat-file", "-t", o, cwd=path).strip() in ("commit", "tag")}
        assert ours == fsck_commits_tags, name
        counts = sum(sum(f.evidence["counts"].values()) for f in t.findings if f.check == "G5")
        assert counts == len(fsck), name


ROOT_EXPECTED = {
    "L1:/home/fix.patch": "critical", "L1:/home/test.patch": "critical",
    "F3:/usr/lib/python3/site-packages/calc/calc.py": "critical",
    "F2:tests/test_calc.py": "critical", "L2:/root/r2e_tests/test_calc.py": "critical",
    "L3:/testbed/src/__pycache__/calc.*.pyc": "critical", "F1:src/calc.py": "critical",
    "L4:/testbed/.pytest_cache/v/cache/nodeids": "high", "L5:/testbed/build/_calc.so": "high",
    "L6:/tmp/test_output.log": "high", "L7:/root/.bash_history": "high", "L9:/etc/hostname": "low",
    "L9:/.build_env/parsed_commit.json": "low", "L10:/.build_env/parsed_commit.json": "high",
}


def test_root_filesystem_leftovers(gitfix):
    """The leftover root: every leftover is found on the right check and severity."""
    report = audit(gitfix.path("root"), rootfs=True, repo_path="/testbed", **gitfix.R)
    assert_findings(report, ROOT_EXPECTED, "leak")
    t = report.targets[0]
    assert t.kind == "rootfs" and t.repo_path == "/testbed"
    by_key = {f.key: f for f in t.findings}
    assert by_key["L2:/root/r2e_tests/test_calc.py"].evidence["visible_through"] == ["/testbed/r2e_tests"]
    places = {p["path"] for p in by_key["F1:src/calc.py"].evidence["items"]}
    assert places == {"/testbed/build/lib/src/calc.py"}
    assert by_key["L3:" + next(k[3:] for k in by_key if k.startswith("L3:"))].evidence["equals_fixed"] is True


def test_root_filesystem_control_is_clean(gitfix):
    report = audit(gitfix.path("ctl-root"), rootfs=True, repo_path="/testbed", **gitfix.R)
    assert_findings(report, {}, "clean")
    report = audit(gitfix.path("ctl-root"), rootfs=True, **gitfix.R)  # /testbed is found without --repo-path
    assert report.targets[0].repo_path == "/testbed" and report.verdict == "clean"


def test_root_filesystem_offline_grades_ids_info(gitfix):
    t = audit(gitfix.path("root"), rootfs=True, network="none", **gitfix.R).targets[0]
    sev = {f.key: f.severity for f in t.findings}
    assert sev["L9:/etc/hostname"] == "info" and sev["L9:/.build_env/parsed_commit.json"] == "info"


def test_gitfile_in_a_root_filesystem_is_resolved_inside_it(gitfix, tmp_path):
    import shutil

    root = tmp_path / "rootfs"
    (root / "repos").mkdir(parents=True)
    shutil.copytree(gitfix.L / "ctl-fresh", root / "testbed", symlinks=True)
    shutil.move(root / "testbed/.git", root / "repos/testbed.git")
    (root / "testbed/.git").write_text("gitdir: /repos/testbed.git\n")
    t = audit(str(root), rootfs=True, base="HEAD").targets[0]
    assert t.repo_path == "/testbed" and t.stats["objects_total"] > 0 and t.verdict == "clean"
    (root / "testbed/.git").write_text(f"gitdir: {gitfix.L / 'swb4/.git'}\n")  # a host path: never followed
    with pytest.raises(InputError, match="no git repository found in"):  # exit 2, never an empty `clean`
        audit(str(root), rootfs=True)


def test_a_folder_of_repositories_gives_one_target_each(gitfix, tmp_path):
    import shutil

    for name in ("swb5", "ctl-swb5", "remote"):
        shutil.copytree(gitfix.L / name, tmp_path / "many" / name, symlinks=True)
    report = audit(str(tmp_path / "many"))
    assert [t.path.rsplit("/", 1)[1] for t in report.targets] == ["ctl-swb5", "remote", "swb5"]
    assert [t.verdict for t in report.targets] == ["clean", "suspect", "clean"]
    assert report.verdict == "suspect"  # the worst target decides


def test_object_sets_match_dulwich_on_every_git_fixture(gitfix):
    dulwich_repo = pytest.importorskip("dulwich.repo")
    from overlap.audit.git.cmd import GitRunner
    from overlap.audit.git.repo import GitRepo

    home = gitfix.L.parent / "dulwich-home"
    home.mkdir(exist_ok=True)
    for name in sorted(EXPECTED):
        if name in ("reftable", "hostile"):
            continue  # git refuses the first; the second is a promisor repo dulwich does not model
        repo = GitRepo(gitfix.L / name / ".git", GitRunner(home))
        repo.load(None)
        theirs = {o.decode() for o in dulwich_repo.Repo(gitfix.path(name)).object_store}
        assert {o.hex() for o in repo.all} == theirs, name


def test_neutral_diffs_in_the_repo(gitfix, tmp_path):
    """Without a reference: a diff touching tracked files is medium, unless it is a setup patch that the
    worktree already carries (it reverse-applies in the scratch folder): then info."""
    import shutil

    from audit_helpers import git

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    (repo / "src/m5.py").write_text("x5 = 55\n")
    (repo / "setup.diff").write_text(git("diff", cwd=repo))  # the worktree already has this change
    git("checkout", "--", "src/m5.py", cwd=repo)
    (repo / "src/m5.py").write_text("x5 = 55\n")
    (repo / "other.diff").write_text(git("diff", cwd=repo).replace("55", "56"))  # does not match the worktree
    t = audit(str(repo), base="HEAD").targets[0]
    sev = {f.key: f.severity for f in t.findings if f.check == "L1"}
    assert sev == {"L1:setup.diff": "info", "L1:other.diff": "medium"}


def test_commit_ids_in_the_target_name(gitfix, tmp_path):
    import shutil

    repo = tmp_path / f"calc-{gitfix.fix[:7]}"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    t = audit(str(repo), base="HEAD", fix_commit=gitfix.fix).targets[0]
    assert {f.key: f.severity for f in t.findings} == {f"L9:target:calc-{gitfix.fix[:7]}": "low"}
    t = audit(str(repo), base="HEAD").targets[0]  # unresolved without --fix-commit: info only
    assert {f.key: f.severity for f in t.findings} == {f"L9:target:calc-{gitfix.fix[:7]}": "info"}


def test_submodule_is_audited_against_its_gitlink(gitfix, tmp_path):
    """A submodule moved past the commit B records: its future commits are found (G13 via its own G6)."""
    from audit_helpers import git

    sup = tmp_path / "super"
    git("init", "-q", "-b", "main", str(sup), cwd=tmp_path)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", f"file://{gitfix.L / 'up'}", "lib", cwd=sup)
    git("-C", "lib", "checkout", "-q", gitfix.base, cwd=sup)
    git("add", "lib", cwd=sup)
    git("commit", "-q", "-m", "B: lib at its base", cwd=sup)
    git("-C", "lib", "checkout", "-q", gitfix.fix, cwd=sup)  # the submodule's HEAD moved to the fix afterwards
    t = audit(str(sup), base="HEAD", fix=[gitfix.path("fix.patch")], tests=[gitfix.path("test.patch")]).targets[0]
    g13 = next(f for f in t.findings if f.check == "G13")
    assert [f.subject for f in t.findings if f.check == "G13"] == ["lib/.git"]  # one store, one finding
    assert g13.severity == "high"
    nested = {x["key"]: x["severity"] for x in g13.evidence["findings"]}
    assert nested.get("G14:setup_commits") == "high"  # B..HEAD of the submodule holds the fix


def test_bytecode_of_another_source_version(gitfix, tmp_path):
    """L3 without a reference: a pyc compiled from a different calc.py is medium; a fresh one is nothing."""
    import py_compile
    import shutil

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    original = (repo / "src/calc.py").read_bytes()
    (repo / "src/calc.py").write_bytes((gitfix.L / "calc_fixed.py").read_bytes())
    py_compile.compile(str(repo / "src/calc.py"), dfile="src/calc.py")
    (repo / "src/calc.py").write_bytes(original)
    py_compile.compile(str(repo / "src/m1.py"), dfile="src/m1.py")
    t = audit(str(repo), base="HEAD").targets[0]
    l3 = {f.evidence["source"]: f.severity for f in t.findings if f.check == "L3"}
    assert l3 == {"src/calc.py": "medium"}
    t = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]).targets[0]
    assert {f.evidence["source"]: f.severity for f in t.findings if f.check == "L3"} == {"src/calc.py": "critical"}


def test_archive_members(gitfix, tmp_path):
    """L5: a wheel holding the fixed file, a zip bomb member skipped within the limits."""
    import shutil
    import zipfile

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    (repo / "dist").mkdir()
    with zipfile.ZipFile(repo / "dist/calc-2.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("calc/calc.py", (gitfix.L / "calc_fixed.py").read_bytes())
        z.writestr("calc/zeros.bin", bytes(64 << 20))  # inflates past the 16 MiB member limit
    t = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]).targets[0]
    l5 = next(f for f in t.findings if f.check == "L5")
    assert l5.severity == "critical" and l5.evidence["items"] == [{"member": "calc/calc.py",
                                                                     "equals_fixed": "src/calc.py"}]
    assert l5.evidence["members_skipped"] == 1


def test_archives_are_known_by_their_bytes_not_their_names(gitfix, tmp_path):
    """L5 for the fixed file in a tar of every compression (named `.tgz`, `.tar`, `.tar.xz`, `.tar.bz2`, and
    by a hash with no suffix at all) and in single compressed files; a file that only looks like one (a text
    file opening `BZh`, a `.gz` that is not gzip) is read as a file, never dropped."""
    import bz2
    import gzip
    import io
    import lzma
    import shutil
    import tarfile

    fixed = (gitfix.L / "calc_fixed.py").read_bytes()
    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    (repo / "dist").mkdir()

    def tar_of(mode: str) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode=mode) as t:
            info = tarfile.TarInfo("pkg/src/calc.py")
            info.size = len(fixed)
            t.addfile(info, io.BytesIO(fixed))
        return buffer.getvalue()

    archives = {"dist/a.tgz": tar_of("w:gz"), "dist/b.tar": tar_of("w"), "dist/c.tar.xz": tar_of("w:xz"),
                "dist/d.tar.bz2": tar_of("w:bz2"), "dist/9f86d081884c7d65": tar_of("w:gz"),
                "dist/calc.py.xz": lzma.compress(fixed), "dist/calc.py.bz2": bz2.compress(fixed),
                "dist/calc.py.gz": gzip.compress(fixed, mtime=0)}
    import zstandard  # a test dependency (the optional `images` extra)

    archives["dist/e.tar.zst"] = zstandard.ZstdCompressor().compress(tar_of("w"))
    archives["dist/calc.py.zst"] = zstandard.ZstdCompressor().compress(fixed)
    for name, data in archives.items():
        (repo / name).write_bytes(data)
    (repo / "dist/notes.txt").write_bytes(b"BZh is how this note starts\n" + fixed)  # text, not bzip2
    (repo / "dist/fake.gz").write_bytes(fixed)  # named like gzip, holding the fixed file as text
    t = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]).targets[0]
    l5 = {f.subject.rsplit("/", 2)[-2] + "/" + f.subject.rsplit("/", 1)[-1]: f for f in t.findings
          if f.check == "L5"}
    assert set(l5) == set(archives), sorted(l5)
    assert {f.severity for f in l5.values()} == {"critical"}
    commands = {name: " ".join(f.reproduce.values()) for name, f in l5.items()}
    assert "tar -tvf" in commands["dist/a.tgz"] and "xz -dc" in commands["dist/calc.py.xz"], commands
    copies = [item["path"] for f in t.findings if f.check == "F1" for item in f.evidence["items"]]
    assert copies == ["dist/fake.gz"]  # the fixed file under an archive's name: a copy (F1), read as a file
    assert any(f.check == "F3" and f.subject == "dist/notes.txt" for f in t.findings)  # text opening `BZh`


def test_a_copy_of_the_fix_inside_the_git_folder_is_found(gitfix, tmp_path):
    """F1 looks at every regular file of the same size, the git folder's too: a fixed file left as
    `.git/calc.py.bak` or deep in `.git/info/` is read by `cat` as easily as one in the worktree."""
    import shutil

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    fixed = (gitfix.L / "calc_fixed.py").read_bytes()
    (repo / ".git" / "calc.py.bak").write_bytes(fixed)
    (repo / ".git" / "info" / "x").mkdir(parents=True)
    (repo / ".git" / "info" / "x" / "keep").write_bytes(fixed)
    t = audit(str(repo), base="HEAD", fix=[gitfix.path("fix.patch")]).targets[0]
    f1 = next(f for f in t.findings if f.check == "F1")
    assert f1.severity == "critical"
    assert sorted(p["path"] for p in f1.evidence["items"]) == [".git/calc.py.bak", ".git/info/x/keep"]
    clean = audit(str(gitfix.L / "ctl-fresh"), base="HEAD", fix=[gitfix.path("fix.patch")]).targets[0]
    assert not [f for f in clean.findings if f.check == "F1"]  # git's own files never equal a fixed file


def test_a_corrupt_loose_object_makes_the_store_checks_incomplete_naming_it(gitfix, tmp_path):
    """git lists the objects it can read and says only on stderr which one it could not: a corrupt object
    (which may be the fix commit) is named and the store's checks are incomplete, never a silent `clean`."""
    import shutil
    import subprocess

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    tree = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    oid = subprocess.run(["git", "commit-tree", tree, "-m", "dangling"], cwd=repo, capture_output=True, text=True,
                         check=True, env=env).stdout.strip()
    loose = repo / ".git" / "objects" / oid[:2] / oid[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"garbage")
    t = audit(str(repo), base="HEAD").targets[0]
    reasons = {c.id: c.reason for c in t.checks if c.status == "incomplete"}
    assert "G6" in reasons and oid[:12] in reasons["G6"] and "corrupt" in reasons["G6"], reasons
    assert t.verdict != "clean"
    assert audit(str(gitfix.L / "ctl-fresh"), base="HEAD").targets[0].verdict == "clean"


def test_a_pack_without_its_index_makes_the_store_checks_incomplete(gitfix, tmp_path):
    """git sees no object of a pack without its .idx (the fix can sit in one): the store's checks say so
    instead of reading as clean."""
    import shutil

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    (repo / ".git" / "objects" / "pack").mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "objects" / "pack" / "pack-0123.pack").write_bytes(b"PACK\x00\x00\x00\x02\x00\x00\x00\x00")
    t = audit(str(repo), base="HEAD").targets[0]
    reasons = {c.id: c.reason for c in t.checks if c.status == "incomplete"}
    assert "pack-0123.pack has no .idx" in reasons.get("G5", ""), reasons
    assert t.verdict != "clean"


def test_a_git_bundle_of_commits_outside_base_history_is_a_leftover(gitfix, tmp_path):
    """A bundle left in the tree (whatever its name) holds commits `git fetch` restores: L5 names its refs
    outside base history; a bundle of base history alone is nothing."""
    import shutil
    import subprocess

    repo = tmp_path / "r"
    shutil.copytree(gitfix.L / "ctl-fresh", repo, symlinks=True)
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, env=env).stdout

    git("bundle", "create", str(tmp_path / "base.bundle"), "HEAD")
    oid = git("commit-tree", git("rev-parse", "HEAD^{tree}").strip(), "-p", "HEAD", "-m", "the fix").strip()
    git("branch", "fixb", oid)
    git("bundle", "create", str(repo / ".cache.bin"), "fixb", "^HEAD")
    git("branch", "-D", "fixb")
    git("reflog", "expire", "--expire=now", "--all")
    git("gc", "--prune=now", "-q")
    shutil.copy(tmp_path / "base.bundle", repo / "base.bundle")
    t = audit(str(repo), base="HEAD").targets[0]
    l5 = [f for f in t.findings if f.check == "L5"]
    assert [(f.subject, f.severity) for f in l5] == [(".cache.bin", "high")], l5
    assert l5[0].evidence["items"] == [{"ref": "refs/heads/fixb", "commit": oid}]
