"""Identifier evidence: the bench text names the function / file the train item targets."""

from overlap.text.identifiers import extract_targets, identifier_evidence, names_in

SPEC = "AddressSanitizer: SEGV in function `xsltFuzzXPath` in file `libxslt/tests/fuzz/fuzz.c`"
HARNESS = "MemorySanitizer: use-of-uninitialized-value in function `LLVMFuzzerTestOneInput` in file `fuzz/x.cc`"
REPORT = """==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602
READ of size 4 at 0x602 thread T0
    #0 0x4f1 in __asan_memcpy /src/llvm-project/compiler-rt/lib/asan/asan_interceptors.cpp:22:3
    #1 0x55a in png_read_row /src/libpng/pngread.c:123:5
    #2 0x55b in png_read_image /src/libpng/pngread.c:700:9
    #3 0x56 in LLVMFuzzerTestOneInput /src/libpng/contrib/oss-fuzz/libpng_read_fuzzer.cc:10:1
"""
PATCH = """diff --git a/src/parse.c b/src/parse.c
index 1111111..2222222 100644
--- a/src/parse.c
+++ b/src/parse.c
@@ -10,7 +10,7 @@ static int parse_header(struct ctx *c, int n)
-  if (n > c->len)
+  if (n >= c->len)
@@ -40,3 +40,4 @@ class Reader(object):
+    pass
"""


def test_targets_from_spec_report_and_patch():
    t = extract_targets(SPEC)
    assert t.functions == ["xsltFuzzXPath"] and t.files == ["libxslt/tests/fuzz/fuzz.c"]
    r = extract_targets(REPORT)
    assert r.functions == ["png_read_row", "png_read_image"]
    assert r.files == ["/src/libpng/pngread.c"]
    assert "LLVMFuzzerTestOneInput" in r.ignored
    p = extract_targets(PATCH)
    assert p.functions == ["parse_header", "Reader"] and p.files == ["src/parse.c"]
    h = extract_targets(HARNESS)
    assert h.functions == [] and h.ignored == ["LLVMFuzzerTestOneInput"]
    assert not extract_targets(None) and not extract_targets("no identifiers here")


def test_case_sensitive_word_boundary_match_on_raw_text():
    t = extract_targets(SPEC)
    assert names_in(t, "The crash is in xsltFuzzXPath (see fuzz.c).") == {
        "functions": ["xsltFuzzXPath"], "files": ["libxslt/tests/fuzz/fuzz.c"]}
    assert names_in(t, "xsltfuzzxpath and FUZZ.C") == {"functions": [], "files": []}  # case matters
    assert names_in(t, "xsltFuzzXPathImpl in fuzz.cc or myfuzz.c") == {"functions": [], "files": []}
    assert names_in(t, "path libxslt/tests/fuzz/fuzz.c:12")["files"] == ["libxslt/tests/fuzz/fuzz.c"]
    q = extract_targets("SEGV in function `Magick::Image::read` in file `Magick++/lib/Image.cpp`")
    assert names_in(q, "a bug in read() of Image.cpp")["functions"] == ["Magick::Image::read"]


def test_per_pair_evidence():
    rows = identifier_evidence(
        [("t1", "b1"), ("t1", "b2"), ("t2", "b1"), ("t3", "b9")],
        {"t1": SPEC, "t2": "plain words only", "t3": PATCH},
        {"b1": "Fix a SEGV in xsltFuzzXPath", "b2": "unrelated text"},
    )
    assert [(r["train_id"], r["bench_id"], r["function_named"], r["file_named"]) for r in rows] == [
        ("t1", "b1", True, False),
        ("t1", "b2", False, False),
        ("t2", "b1", None, None),  # no targets: the check does not apply
        ("t3", "b9", None, None),  # no bench text
    ]
    assert rows[0]["named_functions"] == "xsltFuzzXPath"
