"""The ARVO-Meta pool: local folder in the real layout, pool files, GitHub (faked, never the network)."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from overlap.errors import HubUnavailableError, InputError
from overlap.ids.ossfuzz import OssFuzzMapping
from overlap.sources.load import load_identity, load_pool, parse_data_options
from overlap.sources.places.github import GithubRepo
from overlap.sources.pools.arvo_meta import (
    META_DIR,
    crash_fields,
    fix_commits,
    git_tree_sha1,
    load_arvo_meta,
)
from overlap.sources.registry.registry import get_spec

MAPPING = OssFuzzMapping({10288: 40643631, 10400: 42470443, 11500: 42470500})


def test_local_folder_in_the_repo_layout(meta_clone, no_network, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pool = load_pool("arvo-meta", data=parse_data_options([f"arvo-meta={meta_clone}"]))
    table = pool.table.set_index("raw_id")
    assert sorted(table.index.tolist()) == [10055, 10288, 10400, 11500, 12001]
    row = table.loc[10055]
    assert row["project"] == "graphicsmagick" and row["fuzzer"] == "libfuzzer" and row["sanitizer"] == "asan"
    assert row["crash_type"] == "Stack-buffer-overflow WRITE 1" and row["severity"] == "High"
    assert row["crash_state"] == "TranslateTextEx\nAnnotateImage\nDrawPrimitive"
    assert row["fix_commit"] == ["bc328f2fcf47f91b1b14d04665cb209e30e0716d"]
    assert table.loc[10288, "fix_commit"] == ["1" * 40, "2" * 40]
    assert table.loc[12001, "fix_commit"] == []
    assert table.loc[12001, "project"] is None or str(table.loc[12001, "project"]) == "<NA>"
    assert table.loc[11500, "crash_state"] == "xmlXPathNextAncestor"
    assert (table["old_id"] == table.index).all()
    assert pool.provenance.origin == "local-folder" and pool.provenance.location == str(meta_clone)
    [record] = pool.provenance.files
    assert record.path == f"{META_DIR}/*.json" and record.rows == 5
    summary = pool.summary()
    assert summary["items"] == 5 and summary["items_without_project"] == 1 and summary["projects"] == 3
    assert summary["matches_pinned_tree"] is False  # hand-made files, not the pinned tree
    json.dumps(summary, allow_nan=False)


def test_canonical_ids_through_the_mapping(meta_clone):
    pool = load_pool("arvo-meta", data={"arvo-meta": meta_clone}, mapping=MAPPING)
    ids = dict(zip(pool.table["raw_id"].tolist(), pool.table["canonical_id"].tolist(), strict=True))
    assert ids == {10055: 10055, 10288: 40643631, 10400: 42470443, 11500: 42470500, 12001: 12001}
    assert pool.mapped


def test_tree_id_is_gits(meta_clone):
    from dulwich.objects import Blob, Tree

    folder = meta_clone / META_DIR
    tree = Tree()
    for path in sorted(folder.iterdir()):
        tree.add(path.name.encode(), 0o100644, Blob.from_string(path.read_bytes()).id)
    pool = load_pool(meta_clone)
    assert pool.tree_sha1 == tree.id.decode()


def test_a_clone_of_the_pinned_tree_is_recognised(meta_clone, monkeypatch):
    spec = get_spec("arvo-meta")
    pool = load_pool(meta_clone)
    monkeypatch.setitem(spec.extra, "tree", pool.tree_sha1)
    value, provenance = load_identity("arvo-meta", {"arvo-meta": meta_clone})
    assert value.matches_pinned_tree is True
    assert provenance.revision == spec.revision


def test_folder_holding_the_json_files_directly(meta_clone):
    pool = load_pool(meta_clone / META_DIR)
    assert len(pool) == 5


def test_folder_without_meta_files(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="laid out like n132/ARVO-Meta"):
        load_pool(tmp_path / "empty")


def test_malformed_and_mismatched_files_are_counted(meta_clone):
    folder = meta_clone / META_DIR
    (folder / "77777.json").write_text("{not json")
    record = json.loads((folder / "10400.json").read_text())
    (folder / "88888.json").write_text(json.dumps(record))  # localId 10400 in another file name
    pool = load_pool(meta_clone)
    problems = {p.what: p for p in pool.problems}
    assert problems["malformed_file"].count == 1 and problems["malformed_file"].example == "77777.json"
    assert problems["id_mismatch"].count == 1
    assert problems["duplicate_id"].count == 1  # 10400 twice: first kept
    assert len(pool) == 5


def test_pool_files(tmp_path):
    csv = tmp_path / "pool.csv"
    csv.write_text("id,project,fix_commit\narvo:10288,libxml2,aaa;bbb\n42470443,libxslt,\nnot-an-id,x,\n,y,\n"
                   "oss-fuzz:40643631,libxml2,\n")
    pool = load_pool(csv, mapping=MAPPING)
    assert pool.table["canonical_id"].tolist() == [40643631, 42470443]
    assert pool.table["old_id"].tolist() == [10288, 10400]
    assert pool.table["fix_commit"].tolist() == [["aaa", "bbb"], []]
    problems = {p.what: p.count for p in pool.problems}
    assert problems == {"malformed_id": 1, "missing_id": 1, "duplicate_id": 1}
    jsonl = tmp_path / "pool.jsonl"
    jsonl.write_text('{"localId": 42470443, "project": "libxslt"}\n{"localId": 386128948, "project": null}\n')
    pool = load_pool(jsonl)
    assert pool.table["old_id"].isna().tolist() == [True, True]
    assert pool.summary()["items_without_project"] == 1
    single = load_identity("arvo-meta", {"arvo-meta": csv})[0]
    assert len(single) == 3  # without the mapping, arvo:10288 and its new id 40643631 are two rows


def test_pool_file_needs_id_and_project(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text("id,name\n1,x\n")
    with pytest.raises(InputError, match="'project' is missing"):
        load_pool(path)


def test_not_a_pool_name():
    with pytest.raises(InputError, match="not a pool"):
        load_pool("arvo")


def test_crash_fields_and_fix_commits():
    text = "Crash Type: Heap-use-after-free READ 8\nCrash Address: 0x1\nCrash State:\n  a\n  b\n  \nSanitizer: x"
    assert crash_fields(text) == ("Heap-use-after-free READ 8", "a\nb")
    assert crash_fields("Crash State:\n  only\nSanitizer: x") == (None, "only")
    assert crash_fields(None) == (None, None) and crash_fields("nothing") == (None, None)
    assert fix_commits("abc") == ["abc"] and fix_commits(["a", "", None, "b"]) == ["a", "b"]
    assert fix_commits('["a","b"]') == ["a", "b"] and fix_commits("") == [] and fix_commits(None) == []


def test_pool_crash_fields_are_what_the_related_bug_evidence_reads(meta_clone):
    # Both read the ClusterFuzz text with overlap.evidence's parser, so a pool row and the BugRecord of the
    # same ARVO-Meta file agree on the crash state.
    from overlap.evidence.related import bug_record

    table = load_pool(meta_clone).table.set_index("raw_id")
    for path in sorted((meta_clone / META_DIR).glob("*.json")):
        record = bug_record(json.loads(path.read_text()))
        assert table.loc[int(path.stem), "crash_state"] == "\n".join(record.crash_state)
    osv = "Crash type: Heap-double-free\nCrash state:\nmrb_default_allocf\nmrb_free\n"  # lower case, no indent
    assert crash_fields(osv) == ("Heap-double-free", "mrb_default_allocf\nmrb_free")


# --- GitHub (faked) ---------------------------------------------------------------------------------


def fake_github(monkeypatch, clone: Path, tamper: str | None = None):
    """Serve the clone's meta folder as the GitHub tree API + raw files; return the tree id."""
    import urllib.request

    folder = clone / META_DIR
    entries, blobs = [], {}
    for path in sorted(folder.iterdir()):
        data = path.read_bytes()
        sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        entries.append({"path": path.name, "mode": "100644", "type": "blob", "sha": sha, "size": len(data)})
        blobs[path.name] = data
    tree = git_tree_sha1([(e["mode"], e["path"], e["sha"]) for e in entries])
    listing = json.dumps({"sha": tree, "tree": entries, "truncated": False}).encode()
    calls = []

    def urlopen(request, timeout=None):
        url = getattr(request, "full_url", request)
        calls.append(url)
        if url.endswith(f"/git/trees/{tree}"):
            return io.BytesIO(listing)
        name = url.rsplit("/", 1)[1]
        return io.BytesIO(b"tampered" if name == tamper else blobs[name])

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return tree, calls


def github_source(spec):
    return GithubRepo(origin="github", repo_id=spec.hub_repo, revision=spec.revision)


def test_github_download_then_cache(meta_clone, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("OVERLAP_OFFLINE", "0")
    tree, calls = fake_github(monkeypatch, meta_clone)
    spec = replace(get_spec("arvo-meta"), extra={"tree": tree})
    pool = load_arvo_meta(github_source(spec), spec, (), False)
    assert len(pool) == 5 and pool.matches_pinned_tree is True
    assert len(calls) == 6  # one listing + five files
    assert pool.provenance.origin == "github" and pool.provenance.revision == spec.revision
    # offline now: everything comes from the cache
    monkeypatch.setenv("OVERLAP_OFFLINE", "1")
    calls.clear()
    again = load_arvo_meta(github_source(spec), spec, (), False)
    assert calls == [] and again.table.equals(pool.table)


def test_github_blob_mismatch_is_refused(meta_clone, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("OVERLAP_OFFLINE", "0")
    tree, _ = fake_github(monkeypatch, meta_clone, tamper="10288.json")
    spec = replace(get_spec("arvo-meta"), extra={"tree": tree})
    with pytest.raises(InputError, match="differs from the pinned blob"):
        load_arvo_meta(github_source(spec), spec, (), False)


def test_offline_without_cache_says_what_to_do(no_network):
    with pytest.raises(HubUnavailableError, match="clone"):
        load_pool("arvo-meta")


# --- ARVO new-tracker projects -----------------------------------------------------------------------


def test_arvo_projects_reader(tmp_path, no_network):
    root = tmp_path / "ARVO"
    path = root / "arvo" / "NewTracker" / "metadata.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"localId": 42470443, "project": "libxslt", "fuzzer": "libfuzzer"}\n'
                    '{"localId": 386128948, "project": "mruby"}\n{"localId": "x", "project": "y"}\n')
    pool = load_pool("arvo-projects", data={"arvo-projects": root})
    assert pool.table["canonical_id"].tolist() == [42470443, 386128948]
    assert pool.table["project"].tolist() == ["libxslt", "mruby"]
    assert {p.what: p.count for p in pool.problems} == {"malformed_id": 1}
    single = load_pool("arvo-projects", data={"arvo-projects": path})
    assert len(single) == 2
