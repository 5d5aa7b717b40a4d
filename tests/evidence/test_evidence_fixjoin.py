"""Same-fix join over Items tables, fix relations of matched pairs, related-bug groups."""

import pandas as pd
import pytest
from evidence_data import read

from overlap.errors import InputError
from overlap.evidence.fixjoin import (
    FIX_PAIR_COLUMNS,
    BugRecord,
    bug_record,
    commit_key,
    join_fixes,
    relate_pairs,
    related_groups,
    related_pairs,
)
from overlap.evidence.patches import PatchBook, parse_patch


def items(rows):
    return pd.DataFrame(rows, columns=["item_id", "project", "patch"])


# SEC-bench-like train side (instance ids `<project>.cve-...` / `<project>.ossfuzz-<new id>`).
SEC = items(
    [
        ("libxml2.cve-2024-25062", "libxml2", read("fix_code_only.diff")),  # CyberGym has the whole commit
        ("libxml2.ossfuzz-42470443", "libxml2", read("other_fix.diff")),
        ("libxml2.cve-2023-45322", "libxml2", read("partly.diff")),
        ("libxml2.cve-2022-40303", "libxml2", None),  # no diff at all
        ("jq.cve-2023-50246", "jq", read("fix_full.diff")),  # same text, other project: never paired
        ("php.ossfuzz-42491394", "php", read("fix_full.diff")),  # project absent from the bench
    ]
)
# CyberGym-like bench side (`arvo:<old id>`, project_name), patch.diff per task.
CYBERGYM = items(
    [
        ("arvo:1065", "libxml2", read("fix_full.diff")),
        ("arvo:1066", "LibXML2 ", read("fix_with_news.diff")),  # one fix closing two OSS-Fuzz issues
        ("arvo:2001", "libxml2", read("hg_changeset.diff")),
        ("arvo:3000", "libxml2", "not a diff"),
        ("arvo:4000", "jq", read("entries.diff")),
        ("arvo:5000", None, read("fix_full.diff")),
    ]
)


def test_join_finds_fix_pairs_within_projects_only():
    result = join_fixes(SEC, CYBERGYM)
    pairs = result.pairs
    assert list(pairs.columns) == list(FIX_PAIR_COLUMNS)
    got = {(r.train_id, r.bench_id): (r.relation, r.method, r.shares_fix) for r in pairs.itertuples()}
    assert got == {
        ("libxml2.cve-2024-25062", "arvo:1065"): ("contained", "blobs", True),
        ("libxml2.cve-2024-25062", "arvo:1066"): ("contained", "blobs", True),
        ("libxml2.cve-2024-25062", "arvo:2001"): ("identical", "changed_lines", True),
        ("libxml2.cve-2023-45322", "arvo:1065"): ("partly_identical", "blobs", False),
        ("libxml2.cve-2023-45322", "arvo:1066"): ("partly_identical", "blobs", False),
        ("libxml2.cve-2023-45322", "arvo:2001"): ("contains", "changed_lines", True),
    }
    assert not pairs["train_id"].str.startswith(("jq.", "php.")).any()
    s = result.stats
    assert s.projects == 2 and s.same_project_pairs == 4 * 4 + 1 * 1
    assert s.fix_pairs == 4 and s.partial_pairs == 2 and s.no_project == 1
    assert s.train_status == {"missing": 1, "ok": 4} and s.bench_status == {"no_diff": 1, "ok": 4}


def test_join_keep_can_include_different():
    pairs = join_fixes(SEC, CYBERGYM, keep=("different",)).pairs
    assert set(pairs["train_id"]) == {"libxml2.ossfuzz-42470443"}
    assert set(pairs["relation"]) == {"different"}


def test_join_parses_each_patch_once_and_fetches_only_candidate_projects():
    fetched = []

    def fetch(item_id):
        fetched.append(item_id)
        return CYBERGYM.set_index("item_id").loc[item_id, "patch"]

    book = PatchBook(fetch)
    train_book = PatchBook.from_items(SEC)
    result = join_fixes(SEC, CYBERGYM.drop(columns="patch"), train_patches=train_book, bench_patches=book)
    assert sorted(fetched) == [
        "arvo:1065",
        "arvo:1066",
        "arvo:2001",
        "arvo:3000",
        "arvo:4000",
    ]  # no arvo:5000
    assert book.parses == 5 and train_book.parses == 5  # php is never read; libxml2 x4 + jq
    assert result.stats.bench_parses == 5 and len(result.pairs) == 6


def test_join_is_linear_in_items_not_in_pairs():
    n = 60
    train = items(
        [(f"t{i}", "proj", read("fix_full.diff") if i % 2 else read("other_fix.diff")) for i in range(n)]
    )
    bench = items([(f"b{i}", "proj", read("fix_code_only.diff")) for i in range(n)])
    result = join_fixes(train, bench)
    assert result.stats.train_parses == n and result.stats.bench_parses == n
    assert result.stats.same_project_pairs == n * n
    assert (result.pairs["relation"] == "contains").sum() == (n // 2) * n


def test_join_accepts_parsed_patches_and_rejects_tables_without_project():
    train = SEC.assign(patch=[parse_patch(p) for p in SEC["patch"]])
    assert len(join_fixes(train, CYBERGYM).pairs) == 6
    with pytest.raises(InputError, match="project"):
        join_fixes(SEC.drop(columns="project"), CYBERGYM)


def test_join_with_no_shared_project_is_empty_and_typed():
    result = join_fixes(SEC[SEC["project"] == "php"], CYBERGYM)
    assert result.pairs.empty and list(result.pairs.columns) == list(FIX_PAIR_COLUMNS)


def test_relate_pairs_adds_fix_columns_with_one_parse_per_item():
    pairs = pd.DataFrame(
        {
            "train_id": ["libxml2.cve-2024-25062", "libxml2.cve-2024-25062", "libxml2.cve-2022-40303"],
            "bench_id": ["arvo:1065", "arvo:1066", "arvo:1065"],
            "kinds": ["cve", "cve", "ossfuzz"],
        }
    )
    tbook, bbook = PatchBook.from_items(SEC), PatchBook.from_items(CYBERGYM)
    out = relate_pairs(pairs, train_patches=tbook, bench_patches=bbook)
    assert list(out["fix_relation"]) == ["contained", "contained", "not_comparable"]
    assert out["fix_reason"].iloc[2].startswith("missing: train patch")
    assert tbook.parses == 2 and bbook.parses == 2
    assert list(pairs.columns) == ["train_id", "bench_id", "kinds"]  # input untouched


# ------------------------------------------------------------------------------------- related bugs
def arvo_meta(local_id, project, fix_commit, crash_type, state):
    content = (
        f"Detailed report: https://oss-fuzz.com/testcase?key=51581720047{local_id}\n\nProject: {project}\n"
        f"Fuzzer: libFuzzer_{project}_fuzzer\nJob Type: libfuzzer_asan_{project}\nPlatform Id: linux\n\n"
        f"Crash Type: {crash_type}\nCrash Address: 0x7f5f47afb915\nCrash State:\n"
        + "".join(f"  {s}\n" for s in state)
        + "  \nSanitizer: address (ASAN)\n\nRecommended Security Severity: High\n"
    )
    return {
        "localId": local_id,
        "project": project,
        "fuzzer": "libfuzzer",
        "sanitizer": "asan",
        "crash_type": crash_type,
        "severity": "High",
        "report": {"comments": [{"localId": local_id, "content": content, "descriptionNum": 1}]},
        "fix_commit": fix_commit,
        "repo_addr": f"https://github.com/example/{project}",
    }


FIX_A = "bc328f2fcf47f91b1b14d04665cb209e30e0716d"
RECORDS = [
    arvo_meta(10055, "graphicsmagick", FIX_A, "Stack-buffer-overflow WRITE 1",
              ["TranslateTextEx", "AnnotateImage", "DrawPrimitive"]),
    arvo_meta(10056, "graphicsmagick", [FIX_A[:12], "0123456789abcdef0123456789abcdef01234567"],
              "Heap-buffer-overflow READ 4", ["ReadMVGImage", "ReadImage", "BlobToImage"]),
    arvo_meta(20001, "libxml2", "1111111111111111111111111111111111111111", "Heap-use-after-free READ 8",
              ["xmlFreeNode", "xmlFreeDoc", "xmlParseDocument"]),
    arvo_meta(20002, "libxml2", "2222222222222222222222222222222222222222", "Heap-use-after-free READ 1",
              ["xmlFreeNode", "xmlFreeDoc", "xmlParseDocument"]),
    arvo_meta(20003, "libxml2", "3333333333333333333333333333333333333333", "Heap-use-after-free WRITE 8",
              ["xmlFreeNode", "xmlFreeDoc", "xmlParseDocument"]),
    arvo_meta(20004, "libxslt", "4444444444444444444444444444444444444444", "Heap-use-after-free READ 8",
              ["xmlFreeNode", "xmlFreeDoc", "xmlParseDocument"]),  # same state, other project
    arvo_meta(20005, "libxml2", "5555555555555555555555555555555555555555", "Null-dereference READ",
              ["xmlFreeNode", "xmlFreeDoc", "xmlParseDocument"]),  # same state, other type
]  # fmt: skip


def test_bug_record_from_arvo_meta():
    r = bug_record(RECORDS[1])
    assert r == BugRecord(
        item_id="10056",
        project="graphicsmagick",
        fix_commits=(FIX_A[:12], "0123456789ab"),
        crash_type="heap-buffer-overflow",
        crash_state=("ReadMVGImage", "ReadImage", "BlobToImage"),
    )


def test_commit_key():
    assert commit_key(FIX_A) == commit_key(FIX_A[:12]) == FIX_A[:12]
    assert commit_key(f"https://github.com/GraphicsMagick/gm/commit/{FIX_A}") == FIX_A[:12]
    assert commit_key("") is None and commit_key(None) is None and commit_key("see the NEWS file") is None


def test_related_groups_by_fix_commit_and_crash_state():
    groups = related_groups(RECORDS)
    rows = {(r.kind, r.item_ids): (r.n_records, r.strength) for r in groups.itertuples()}
    assert rows == {
        ("fix_commit", "10055;10056"): (2, "pair"),
        ("crash_state", "20001;20002;20003"): (3, "weak"),
    }
    sig = groups.loc[groups["kind"] == "crash_state", "signature"].item()
    assert sig == "libxml2 | heap-use-after-free | xmlFreeNode / xmlFreeDoc / xmlParseDocument"


def test_related_pairs_for_bench_items():
    pairs = related_pairs(related_groups(RECORDS), focus_ids=["10055", "20002"])
    got = sorted(zip(pairs["item_id"], pairs["related_id"], pairs["strength"], strict=True))
    assert got == [("10055", "10056", "pair"), ("20002", "20001", "weak"), ("20002", "20003", "weak")]


def test_related_groups_of_nothing_is_empty_and_typed():
    assert related_groups([]).empty
    assert related_pairs(related_groups([])).empty
    with pytest.raises(InputError):
        related_groups([{"project": "x"}])


def test_related_groups_from_a_pool_table():
    pool = pd.DataFrame(
        {
            "canonical_id": ["42470443", "42470444", "42470445", "42470446"],
            "raw_id": ["10055", "10056", "10057", "10058"],
            "project": ["graphicsmagick", "graphicsmagick", "graphicsmagick", pd.NA],
            "crash_type": ["Stack-buffer-overflow WRITE 1", "Stack-buffer-overflow WRITE 4", pd.NA, pd.NA],
            "fix_commit": [[FIX_A], [FIX_A], [], pd.NA],
            "crash_state": ["TranslateTextEx\nAnnotateImage\nDrawPrimitive"] * 2 + [pd.NA, pd.NA],
        }
    ).astype({"project": "string", "crash_type": "string", "crash_state": "string"})
    groups = related_groups(pool, id_field="canonical_id")
    assert list(zip(groups["kind"], groups["item_ids"], groups["strength"], strict=True)) == [
        ("crash_state", "42470443;42470444", "pair"),
        ("fix_commit", "42470443;42470444", "pair"),
    ]


def test_fetched_task_files_plug_into_patch_book_and_crash_parsing():
    from overlap.evidence.crash import grade_crash, parse_sanitizer_report
    from overlap.sources.places.taskfiles import TaskFile

    files = {"arvo:1065": TaskFile(read("fix_full.diff")), "arvo:404": TaskFile(None, "patch.diff not found")}
    book = PatchBook(files)
    assert book.get("arvo:1065").ok
    missing = book.get("arvo:404")
    assert (missing.status, missing.reason) == ("missing", "patch.diff not found")
    sig = parse_sanitizer_report(TaskFile(None, "error.txt not cached and the Hub is unreachable"))
    assert sig.status == "missing" and "unreachable" in sig.reason
    assert grade_crash(sig, parse_sanitizer_report(TaskFile(read("asan_segv.txt")))).grade == "not_run"
    assert parse_sanitizer_report(TaskFile(read("asan_segv.txt"))).function == "xsltFuzzXPath"
