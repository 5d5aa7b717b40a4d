"""Patch parsing and patch relations, on real-format git / hg diffs (tests/evidence/data)."""

import random
import re

import pytest
from evidence_data import read

from overlap.evidence.patches import (
    FIX_RELATIONS,
    RELATIONS,
    ParsedPatch,
    PatchBook,
    hashes_match,
    parse_patch,
    relate_patches,
)


def parsed(name: str) -> ParsedPatch:
    p = parse_patch(read(name))
    assert p.ok, (name, p.status, p.reason)
    return p


# ------------------------------------------------------------------------------------------ parsing
def test_git_show_output_yields_one_entry_per_file_with_blobs_and_changed_lines():
    p = parsed("fix_full.diff")
    assert [f.path for f in p.files] == ["include/xml/parser.h", "src/parser.c"]
    c = p.by_path["src/parser.c"]
    assert (c.pre_blob, c.post_blob, c.change) == ("aa71ab2", "af1d312", "modified")
    assert c.removed == {"for (i = 0; i <= len; i++)": 1}
    assert c.added == {"if (len >= XML_MAX_NAME)": 1, "return -1;": 1, "for (i = 0; i < len; i++)": 1}
    assert p.has_index_lines


def test_every_git_entry_kind():
    p = parsed("entries.diff")
    f = p.by_path
    assert set(f) == {"added.c", "blob.bin", "gone.c", "moved2.c", "my file.c", "renamed.txt", "run.sh"}
    assert f["added.c"].change == "added" and f["added.c"].pre_blob == "0000000"
    assert f["added.c"].old_path is None and f["added.c"].added == {"new": 1}
    assert (
        f["gone.c"].change == "deleted"
        and f["gone.c"].new_path is None
        and f["gone.c"].removed == {"keep": 1}
    )
    assert f["moved2.c"].change == "renamed" and f["moved2.c"].old_path == "moved.c"
    assert f["moved2.c"].hunks == 0 and f["moved2.c"].pre_blob is None  # 100% similarity: no index line
    assert f["renamed.txt"].change == "renamed" and f["renamed.txt"].old_path == "old.txt"
    assert f["renamed.txt"].post_blob == "4e14374"
    assert f["run.sh"].change == "mode_only" and (f["run.sh"].old_mode, f["run.sh"].new_mode) == (
        "100644",
        "100755",
    )
    assert f["blob.bin"].binary and f["blob.bin"].pre_blob == "8352675"
    assert f["my file.c"].removed == {"int b;": 1}  # path with a space, `--- a/my file.c<TAB>`


def test_binary_patch_with_full_index_hashes_matches_abbreviated():
    full = parsed("entries_binary.diff")
    assert len(full.by_path["blob.bin"].pre_blob) == 40
    r = relate_patches(full, parsed("entries.diff"))
    assert (r.relation, r.method) == ("identical", "blobs")


def test_format_patch_and_git_show_of_one_commit_are_identical():
    r = relate_patches(parsed("fix_format_patch.diff"), parsed("fix_full.diff"))
    assert (r.relation, r.method, r.shared_files, r.equal_files) == ("identical", "blobs", 2, 2)


def test_crlf_line_endings_parse_like_lf():
    text = read("fix_full.diff")
    crlf = parse_patch(text.replace("\n", "\r\n"))
    assert crlf.ok
    assert relate_patches(crlf, parsed("fix_full.diff")).relation == "identical"
    assert crlf.by_path["src/parser.c"].added == parsed("fix_full.diff").by_path["src/parser.c"].added


def test_bytes_input_is_decoded():
    assert parse_patch(read("fix_full.diff").encode()).ok


def test_mercurial_changeset_diff_has_no_index_lines():
    p = parsed("hg_changeset.diff")
    assert [f.path for f in p.files] == ["src/parser.c"] and not p.has_index_lines


@pytest.mark.parametrize(
    ("header_paths", "minus_plus_path", "expected"),
    [
        # git C-quotes names with non-ASCII bytes (octal escapes) and keeps spaces
        ('"a/docs/caf\\303\\251 notes.txt" "b/docs/caf\\303\\251 notes.txt"',
         '"{side}/docs/caf\\303\\251 notes.txt"', "docs/café notes.txt"),
        # an unquoted name containing " b/": the ---/+++ lines decide
        ("a/x b/y.c b/x b/y.c", "{side}/x b/y.c", "x b/y.c"),
    ],
)  # fmt: skip
def test_awkward_paths(header_paths, minus_plus_path, expected):
    text = (
        f"diff --git {header_paths}\nindex 3b18e51..5a1d2f0 100644\n"
        f"--- {minus_plus_path.format(side='a')}\n+++ {minus_plus_path.format(side='b')}\n"
        "@@ -1 +1 @@\n-old\n+new\n"
    )
    p = parse_patch(text)
    assert p.ok and p.paths == {expected}


def test_plain_unified_diff_with_differing_top_directories():
    text = (
        "diff -ruN libfoo-1.0.orig/src/a.c libfoo-1.0/src/a.c\n"
        "--- libfoo-1.0.orig/src/a.c\t2018-08-25 13:48:22.000000000 +0000\n"
        "+++ libfoo-1.0/src/a.c\t2018-08-25 14:06:59.000000000 +0000\n"
        "@@ -1,2 +1,2 @@\n int x;\n-int y;\n+long y;\n"
    )
    p = parse_patch(text)
    assert p.ok and p.paths == {"src/a.c"}


def test_concatenated_commits_touching_one_file_chain_blobs():
    first = (
        "commit 1111111111111111111111111111111111111111\n\n    part 1\n\n"
        "diff --git a/src/a.c b/src/a.c\nindex 1111111..2222222 100644\n--- a/src/a.c\n+++ b/src/a.c\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    second = (
        "commit 2222222222222222222222222222222222222222\n\n    part 2\n\n"
        "diff --git a/src/a.c b/src/a.c\nindex 2222222..3333333 100644\n--- a/src/a.c\n+++ b/src/a.c\n"
        "@@ -1 +1 @@\n-b\n+c\n"
    )
    squashed = (
        "diff --git a/src/a.c b/src/a.c\nindex 1111111..3333333 100644\n--- a/src/a.c\n+++ b/src/a.c\n"
        "@@ -1 +1 @@\n-a\n+c\n"
    )
    both = parse_patch(first + second)
    assert both.ok and len(both.files) == 1
    f = both.files[0]
    assert (f.pre_blob, f.post_blob) == ("1111111", "3333333")
    assert relate_patches(both, squashed).relation == "identical"


def test_hashes_compare_on_common_prefix_of_at_least_7():
    assert hashes_match("aa71ab2", "aa71ab2c0ffee00000000000000000000000000")
    assert not hashes_match("aa71ab2", "aa71ab3")
    assert not hashes_match("aa71ab", "aa71ab")  # 6 hex: too short to trust


# ----------------------------------------------------------------------------------------- relations
@pytest.mark.parametrize(
    ("a", "b", "expected", "method"),
    [
        ("fix_full.diff", "fix_full.diff", "identical", "blobs"),
        ("fix_with_news.diff", "fix_full.diff", "contains", "blobs"),
        ("fix_full.diff", "fix_with_news.diff", "contained", "blobs"),
        ("fix_code_only.diff", "fix_full.diff", "contained", "blobs"),
        ("partly.diff", "fix_full.diff", "partly_identical", "blobs"),
        ("partly.diff", "fix_with_news.diff", "partly_identical", "blobs"),
        ("other_fix.diff", "fix_full.diff", "different", "blobs"),
        ("backport.diff", "fix_code_only.diff", "different", "blobs"),
        ("fix_no_index.diff", "fix_full.diff", "identical", "changed_lines"),
        ("hg_changeset.diff", "fix_code_only.diff", "identical", "changed_lines"),
        ("hg_changeset.diff", "fix_full.diff", "contained", "changed_lines"),
        ("hg_changeset.diff", "other_fix.diff", "different", "changed_lines"),
        ("fix_full.diff", "entries.diff", "not_comparable", "none"),
    ],
)
def test_relations(a, b, expected, method):
    r = relate_patches(parsed(a), parsed(b))
    assert (r.relation, r.method) == (expected, method), r.reason
    assert r.relation in RELATIONS
    assert r.shares_fix == (expected in FIX_RELATIONS)


def test_relation_is_symmetric_up_to_direction():
    flip = {"contains": "contained", "contained": "contains"}
    names = ["fix_full.diff", "fix_with_news.diff", "fix_code_only.diff", "partly.diff", "other_fix.diff",
             "fix_no_index.diff", "hg_changeset.diff", "backport.diff", "entries.diff"]  # fmt: skip
    for a in names:
        for b in names:
            ab, ba = (
                relate_patches(parsed(a), parsed(b)).relation,
                relate_patches(parsed(b), parsed(a)).relation,
            )
            assert ba == flip.get(ab, ab), (a, b, ab, ba)


def test_both_sides_with_extra_files_is_partly_identical_never_contains():
    news_only = read("fix_with_news.diff").split("diff --git a/NEWS")[1].split("diff --git")[0]
    code_plus_news = read("fix_code_only.diff") + "diff --git a/NEWS" + news_only
    r = relate_patches(
        code_plus_news, parsed("fix_full.diff")
    )  # shares parser.c; each side has an extra file
    assert (r.relation, r.method) == ("partly_identical", "blobs")
    assert r.equal_files == r.shared_files == 1 and (r.a_files, r.b_files) == (2, 2)


def test_a_subset_is_never_identical():
    r = relate_patches(parsed("fix_code_only.diff"), parsed("fix_full.diff"))
    assert r.relation == "contained" and r.relation != "identical"
    no_index_subset = "diff --git" + read("fix_no_index.diff").split("diff --git")[2]
    r = relate_patches(no_index_subset, parsed("fix_full.diff"))
    assert (r.relation, r.method) == ("contained", "changed_lines")


def test_backport_note_says_changed_lines_agree():
    r = relate_patches(parsed("backport.diff"), parsed("fix_code_only.diff"))
    assert "same changed lines" in r.reason


def test_changed_lines_fallback_can_be_switched_off():
    r = relate_patches(parsed("fix_no_index.diff"), parsed("fix_full.diff"), use_lines=False)
    assert (r.relation, r.reason_code) == ("not_comparable", "no_index_lines")


def test_binary_entries_without_index_lines_are_not_comparable():
    text = "diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n"
    r = relate_patches(text, text)
    assert (r.relation, r.reason_code) == ("not_comparable", "no_comparable_content")


def test_whitespace_only_hunks_without_index_lines_are_undecided():
    text = "--- a/src/a.c\n+++ b/src/a.c\n@@ -1,2 +1,2 @@\n int x;\n-\t\n+  \n"
    r = relate_patches(text, text)
    assert r.relation == "not_comparable"


def test_pure_renames_and_mode_changes_compare_on_headers():
    rename = "diff --git a/old.c b/new.c\nsimilarity index 100%\nrename from old.c\nrename to new.c\n"
    other = "diff --git a/older.c b/new.c\nsimilarity index 100%\nrename from older.c\nrename to new.c\n"
    assert relate_patches(rename, rename).relation == "identical"
    assert relate_patches(rename, other).relation == "different"
    mode = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    assert relate_patches(mode, mode).relation == "identical"


# -------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("value", "status"),
    [
        (None, "missing"),
        (float("nan"), "missing"),
        ("", "empty"),
        ("   \n\n", "empty"),
        ("This commit fixes the overflow.\n\nNo diff here.\n", "no_diff"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary"),
        ("diff --git a/x b/x\nindex 0\x00\x00..1", "binary"),
        (bytes(random.Random(7).randrange(256) for _ in range(4000)), "binary"),
        ("--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,2 @@\n-x\n+y\ngarbage line\n", "unparseable"),
        ("diff --git a/x.c b/x.c\n", "unparseable"),
        ("diff --cc src/a.c\nindex 1111111,2222222..3333333\n", "unparseable"),
        (12345, "unparseable"),
    ],
)
def test_bad_input_is_a_status_never_an_exception(value, status):
    p = parse_patch(value)
    assert p.status == status, p.reason
    r = relate_patches(p, parsed("fix_full.diff"))
    assert r.relation == "not_comparable" and r.reason_code == status
    assert relate_patches(p, p).relation == "not_comparable"


def test_size_cap_is_reported():
    p = parse_patch(read("fix_full.diff"), max_chars=100)
    assert p.status == "too_large" and "cap 100" in p.reason


def _last_change_end(text: str) -> int:
    return max(m.end() for m in re.finditer(r"^[-+](?!- \n)(?![-+]{2} ).*\n", text, re.MULTILINE))


@pytest.mark.parametrize(
    "name", ["fix_full.diff", "fix_format_patch.diff", "entries.diff", "fix_with_news.diff"]
)
def test_every_truncation_is_never_a_false_identical(name):
    text = read(name)
    whole = parsed(name)
    end = _last_change_end(text)
    for k in range(len(text)):
        r = relate_patches(parse_patch(text[:k]), whole)
        if k < end:
            assert r.relation != "identical", (k, text[max(0, k - 30) : k])


def test_random_corruption_never_raises():
    rng = random.Random(1234)
    base = read("entries.diff") + read("fix_full.diff")
    whole = parse_patch(base)
    for _ in range(300):
        chars = list(base)
        for _ in range(rng.randint(1, 12)):
            i = rng.randrange(len(chars))
            chars[i] = rng.choice(["\n", " ", "-", "+", "@", "\\", '"', "\t", "x", "\r", "\x0b"])
        p = parse_patch("".join(chars))
        relate_patches(p, whole)
        relate_patches(whole, p)


def test_pure_junk_never_relates():
    rng = random.Random(99)
    whole = parsed("fix_full.diff")
    for _ in range(200):
        junk = "".join(rng.choice("-+@ \nabc/.index..0123") for _ in range(rng.randint(1, 400)))
        assert relate_patches(parse_patch(junk), whole).relation == "not_comparable"


# ------------------------------------------------------------------------------------------ PatchBook
def test_patch_book_parses_each_item_once_and_turns_fetch_errors_into_missing():
    calls = []

    def fetch(item_id):
        calls.append(item_id)
        if item_id == "arvo:404":
            raise FileNotFoundError("data/arvo/404/patch.diff")
        return read("fix_full.diff")

    book = PatchBook(fetch)
    for _ in range(3):
        assert book.get("arvo:1065").ok
        assert book.get("arvo:404").status == "missing"
    assert calls == ["arvo:1065", "arvo:404"] and book.parses == 1
    assert "FileNotFoundError" in book.get("arvo:404").reason
    assert book.statuses() == {"ok": 1, "missing": 1}


@pytest.mark.parametrize(
    "text",
    [
        "Binary files " + "a and b " * 50_000 + "\n",
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nBinary files " + "a and " * 20_000 + "\n",
        "diff --git " + "a/x b/" * 20_000 + "\n",
        "diff --git a/x b/x\nindex 1234567..89abcde" + " " * 500_000 + "x\n",
    ],
)
def test_hostile_lines_parse_in_linear_time(text):
    import time

    start = time.perf_counter()
    parse_patch(text)
    assert time.perf_counter() - start < 2.0


def test_plain_diff_binary_lines_are_entries():
    text = "Binary files a/logo.png and b/logo.png differ\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"
    p = parse_patch(text)
    assert p.ok and p.by_path["logo.png"].binary and p.by_path["x.c"].added == {"b": 1}
    assert relate_patches(p, "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n").relation == "contains"
