"""Crash signatures and grades on real-format sanitizer reports, MiMo specs and ClusterFuzz text."""

import random

import pytest
from evidence_data import DATA

from overlap.evidence.crash import (
    GRADES,
    CrashGrade,
    bare_function,
    best_grade,
    canonical_crash_type,
    classify_frame,
    control_rate,
    grade_crash,
    parse_clusterfuzz,
    parse_crash,
    parse_crash_spec,
    parse_sanitizer_report,
    summarize_grades,
    types_match,
)


def report(name: str):
    sig = parse_sanitizer_report((DATA / name).read_text(encoding="utf-8"))
    assert sig.usable, (name, sig.reason)
    return sig


def spec(kind: str, function: str, file: str = "libxslt/tests/fuzz/fuzz.c", tool="AddressSanitizer"):
    return parse_crash_spec(f"{tool}: {kind} in function `{function}` in file `{file}`")


# A ClusterFuzz issue body as in ARVO-Meta `report.comments[0].content` (hand-made values).
CLUSTERFUZZ_EXR = (
    "Detailed report: https://oss-fuzz.com/testcase?key=5158172004712448\n\n"
    "Project: openexr\nFuzzer: libFuzzer_openexr_exrcheck_fuzzer\n"
    "Fuzz target binary: openexr_exrcheck_fuzzer\n"
    "Job Type: libfuzzer_asan_openexr\nPlatform Id: linux\n\n"
    "Crash Type: Heap-buffer-overflow READ 2\nCrash Address: 0x6020000000f1\nCrash State:\n"
    "  Imf_3_2::Xdr::read<Imf_3_2::CharPtrIO, char const*>\n  Imf_3_2::readHeader\n"
    "  Imf_3_2::InputFile::InputFile\n"
    "  \nSanitizer: address (ASAN)\n\nRecommended Security Severity: Medium\n\nIssue filed automatically.\n"
)
CLUSTERFUZZ_TIFF = (
    "Crash Type: Integer-overflow\nCrash Address: \nCrash State:\n  TIFFFetchNormalTag\n  TIFFReadDirectory\n"
    "  TIFFClientOpenExt\n  \nSanitizer: undefined (UBSAN)\n"
)


# ------------------------------------------------------------------------------------- bare names
@pytest.mark.parametrize(
    ("symbol", "bare"),
    [
        ("foo::Bar<int>::baz(char const*) const", "baz"),
        ("void Imf_3_2::Xdr::read<Imf_3_2::CharPtrIO, char const*>(char const*&, unsigned short&)", "read"),
        (
            "void ns::Foo<std::vector<int, std::allocator<int> > >::process<char>"
            "(char const*, unsigned long)",
            "process",
        ),
        (
            "Imf_3_2::(anonymous namespace)::readHeader(Imf_3_2::IStream&, Imf_3_2::Header&) const",
            "readHeader",
        ),
        ("ns::Parser::parse()::$_0::operator()(int) const", "parse"),
        ("auto ns::Parser::parse(int)::'lambda'(int)::operator()<int>(int) const", "parse"),
        ("ns::Parser::parse(int)::{lambda(int)#1}::operator()(int) const", "parse"),
        ("ns::Buffer::operator[](unsigned long)", "operator[]"),
        ("bool ns::operator<(ns::A const&, ns::B const&)", "operator<"),
        ("std::ostream& ns::operator<<(std::ostream&, ns::A const&)", "operator<<"),
        ("Foo::operator()(int) const", "operator()"),
        ("Foo::operator bool() const", "operator bool"),
        ("operator new[](unsigned long)", "operator new[]"),
        ("Foo::~Foo()", "~Foo"),
        ("imgdec::image::decoder::Decoder<R>::read_palette::h1f2e3d4c5b6a7980", "read_palette"),
        ("imgdec::parse::{{closure}}::h0123456789abcdef", "parse"),
        ("<imgdec::Header as core::fmt::Display>::fmt::h0123456789abcdef", "fmt"),
        ("imgdec::decode::<u8>", "decode"),
        ("decode_fuzzer::_::__libfuzzer_sys_run::h3c4d5e6f708192a3", "__libfuzzer_sys_run"),
        ("xmlParseCharData.part.0", "xmlParseCharData"),
        ("__interceptor_memcpy", "memcpy"),
        ("xsltFuzzXPath", "xsltFuzzXPath"),
        ("", ""),
    ],
)
def test_bare_function(symbol, bare):
    assert bare_function(symbol) == bare


@pytest.mark.parametrize(
    ("function", "file", "module", "kind"),
    [
        (
            "__asan_memcpy",
            "/src/llvm-project/compiler-rt/lib/asan/asan_interceptors_memintrinsics.cpp",
            None,
            "sanitizer",
        ),
        (
            "fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long)",
            "/src/llvm-project/compiler-rt/lib/fuzzer/FuzzerLoop.cpp",
            None,
            "sanitizer",
        ),
        (
            "fuzzer::PrintStackTrace()",
            "/root/.cargo/registry/src/x/libfuzzer-sys-0.4.7/libfuzzer/FuzzerUtil.cpp",
            None,
            "fuzzer",
        ),
        ("__libc_start_main", None, "/lib/x86_64-linux-gnu/libc.so.6", "libc"),
        ("gsignal", "signal/../sysdeps/posix/raise.c", None, "libc"),
        (
            "std::__1::vector<int, std::__1::allocator<int> >::operator[](unsigned long)",
            "/usr/local/bin/../include/c++/v1/vector:1573:12",
            None,
            "stdlib",
        ),
        (
            "core::panicking::panic_bounds_check::h8f7e6d5c4b3a2918",
            "/rustc/abc/library/core/src/panicking.rs",
            None,
            "stdlib",
        ),
        ("<usize as core::slice::index::SliceIndex<[T]>>::index::h1", None, None, "stdlib"),
        ("LLVMFuzzerTestOneInput", "/src/libxslt/tests/fuzz/xpath.c", None, "harness"),
        ("xsltFuzzXPath", "/src/libxslt/tests/fuzz/fuzz.c", None, "project"),
        ("", None, "/out/fuzzer", "unsymbolised"),
    ],
)
def test_classify_frame(function, file, module, kind):
    assert classify_frame(function, file, module) == kind


# --------------------------------------------------------------------------------------- crash types
@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Heap-buffer-overflow READ 4", "heap-buffer-overflow"),
        ("heap-buffer-overflow on address 0x602000000011 at pc 0x4f8c2b", "heap-buffer-overflow"),
        ("SEGV on unknown address 0x000000000000 (pc 0x59a1c3 bp 0x7ffe sp 0x7ffe T0)", "segv"),
        ("Segv on unknown address", "segv"),
        ("Null-dereference READ", "null-dereference"),
        ("Stack-buffer-overflow WRITE 1", "stack-buffer-overflow"),
        ("Dynamic-stack-buffer-overflow WRITE {*}", "dynamic-stack-buffer-overflow"),
        ("Out-of-memory (exceeds 2560 MB)", "out-of-memory"),
        ("Timeout (exceeds 60 secs)", "timeout"),
        ("Direct-leak", "memory-leak"),
        ("Heap-double-free", "double-free"),
        ("attempting double-free on 0x602000000010 in thread T0:", "double-free"),
        ("Security DCHECK failure", "check-failure"),
        ("AddressSanitizer: SEGV", "segv"),
        ("", None),
    ],
)
def test_canonical_crash_type(raw, canonical):
    assert canonical_crash_type(raw) == canonical


def test_types_match_by_family():
    assert types_match("segv", "null-dereference")
    assert types_match("panic", "deadly-signal")
    assert types_match("undefined-behavior", "integer-overflow")
    assert not types_match("heap-buffer-overflow", "heap-use-after-free")
    assert not types_match(None, "segv")


# --------------------------------------------------------------------------------- report parsing
def test_asan_heap_buffer_overflow_with_cpp_templates():
    s = report("asan_heap_overflow_cpp.txt")
    assert (s.sanitizer, s.crash_type, s.access) == ("AddressSanitizer", "heap-buffer-overflow", "READ")
    assert len(s.frames) == 11  # the first stack only, not the "allocated by" one
    assert s.first_frame.bare == "memcpy" and s.first_frame.kind == "sanitizer"
    assert s.top_frame.index == 1 and s.function == "read"
    assert s.file == "/src/openexr/src/lib/OpenEXR/ImfXdr.h" and s.top_frame.line == 612


def test_asan_segv_on_unknown_address():
    s = report("asan_segv.txt")
    assert (s.crash_type, s.access, s.function) == ("segv", "READ", "xsltFuzzXPath")


def test_ubsan_runtime_error_gives_specific_type():
    s = report("ubsan_integer_overflow.txt")
    assert (s.sanitizer, s.crash_type, s.function) == (
        "UndefinedBehaviorSanitizer",
        "integer-overflow",
        "TIFFFetchNormalTag",
    )
    assert "signed integer overflow" in s.raw_type


def test_ubsan_without_stack_keeps_type_and_location():
    s = report("ubsan_no_stack.txt")
    assert s.crash_type == "integer-overflow" and s.top_frame is None and not s.frames
    assert s.file == "/src/libtiff/libtiff/tif_dirread.c" and "no stack" in s.reason


def test_rust_panic_frames():
    s = report("rust_panic.txt")
    assert s.crash_type == "panic" and s.function == "read_palette"
    assert s.file == "/src/imgdec/src/image/decoder.rs"
    kinds = {f.bare: f.kind for f in s.frames}
    assert kinds["rust_begin_unwind"] == "stdlib" and kinds["panic_bounds_check"] == "stdlib"
    assert kinds["abort"] == "libc" and kinds["__libfuzzer_sys_run"] == "harness"


def test_rust_std_backtrace_format():
    text = (
        "thread 'main' panicked at src/lib.rs:10:5:\nattempt to add with overflow\nstack backtrace:\n"
        "   0: rust_begin_unwind\n             at /rustc/abc/library/std/src/panicking.rs:645:5\n"
        "   1: core::panicking::panic_fmt\n             at /rustc/abc/library/core/src/panicking.rs:72:14\n"
        "   2: mycrate::checked_sum\n             at ./src/lib.rs:10:5\n"
        "   3: fuzz_target_1::_::__libfuzzer_sys_run\n             at ./fuzz/fuzz_targets/t.rs:4:5\n"
    )
    s = parse_sanitizer_report(text)
    assert (s.crash_type, s.function, s.top_frame.file) == ("panic", "checked_sum", "./src/lib.rs")


def test_only_unsymbolised_frames():
    s = report("asan_unsymbolised.txt")
    assert s.crash_type == "segv" and len(s.frames) == 5
    assert s.top_frame is None and s.first_frame is None and "unsymbolised" in s.reason


def test_msan_and_lsan():
    m = report("msan_uninit.txt")
    assert (m.sanitizer, m.crash_type, m.function) == (
        "MemorySanitizer",
        "use-of-uninitialized-value",
        "png_read_row",
    )
    assert len(m.frames) == 4  # not the "created by a heap allocation" stack
    leak = report("lsan_leak.txt")
    assert (leak.sanitizer, leak.crash_type, leak.function) == (
        "LeakSanitizer",
        "memory-leak",
        "jv_mem_alloc",
    )


def test_report_without_stack_uses_summary_frame():
    text = "==3==ERROR: AddressSanitizer: heap-use-after-free on address 0x6030\n" \
           "SUMMARY: AddressSanitizer: heap-use-after-free /src/jq/src/jv.c:733:3 in jv_free\n"  # fmt: skip
    s = parse_sanitizer_report(text)
    assert (s.crash_type, s.function, s.file) == ("heap-use-after-free", "jv_free", "/src/jq/src/jv.c")


def test_mimo_spec():
    s = parse_crash_spec(
        "AddressSanitizer: SEGV in function `xsltFuzzXPath` in file `libxslt/tests/fuzz/fuzz.c`"
    )
    assert (s.source, s.sanitizer, s.raw_type, s.crash_type) == ("spec", "AddressSanitizer", "SEGV", "segv")
    assert (s.function, s.file) == ("xsltFuzzXPath", "libxslt/tests/fuzz/fuzz.c")
    harness = parse_crash_spec("AddressSanitizer: heap-buffer-overflow in function `LLVMFuzzerInitialize` "
                               "in file `fuzz/init.c`")  # fmt: skip
    assert harness.harness


def test_clusterfuzz_text():
    s = parse_clusterfuzz(CLUSTERFUZZ_EXR)
    assert (s.crash_type, s.access, s.sanitizer) == ("heap-buffer-overflow", "READ", "address (ASAN)")
    assert s.state == (
        "Imf_3_2::Xdr::read<Imf_3_2::CharPtrIO, char const*>",
        "Imf_3_2::readHeader",
        "Imf_3_2::InputFile::InputFile",
    )
    assert s.function == "read"
    osv = parse_clusterfuzz("```\nCrash type: Heap-double-free\nCrash state:\nmrb_default_allocf\nmrb_free\n"
                            "obj_free\n```\n")  # fmt: skip
    assert osv.crash_type == "double-free" and osv.state == ("mrb_default_allocf", "mrb_free", "obj_free")


def test_parse_crash_detects_the_format():
    assert parse_crash(CLUSTERFUZZ_EXR).source == "clusterfuzz"
    assert parse_crash("AddressSanitizer: SEGV in function `f` in file `a.c`").source == "spec"
    assert parse_crash((DATA / "asan_segv.txt").read_text()).source == "sanitizer_report"


@pytest.mark.parametrize(
    ("value", "status"),
    [
        (None, "missing"),
        ("", "empty"),
        ("no crash here, just a log line\n", "unparseable"),
        (bytes(random.Random(3).randrange(256) for _ in range(3000)), "unparseable"),
    ],
)
def test_bad_reports_are_a_status(value, status):
    s = parse_sanitizer_report(value)
    assert s.status == status and not s.usable
    assert grade_crash(s, report("asan_segv.txt")).grade == "not_run"


def test_huge_report_keeps_head_and_tail():
    text = "INFO: fuzzing log line\n" * 100_000 + (DATA / "asan_segv.txt").read_text()
    s = parse_sanitizer_report(text, max_chars=10_000)
    assert s.truncated and s.crash_type == "segv" and s.function == "xsltFuzzXPath"
    assert "truncated" in s.reason


def test_random_junk_reports_never_raise():
    rng = random.Random(5)
    base = (DATA / "rust_panic.txt").read_text() + (DATA / "asan_heap_overflow_cpp.txt").read_text()
    for _ in range(200):
        chars = list(base)
        for _ in range(rng.randint(1, 40)):
            chars[rng.randrange(len(chars))] = rng.choice(["\n", "#", "0", " ", "(", "<", ":", "`", "\x00"])
        s = parse_crash("".join(chars))
        grade_crash(s, report("asan_segv.txt"))


# ------------------------------------------------------------------------------------------ grades
SEGV = "asan_segv.txt"


@pytest.mark.parametrize(
    ("train", "bench", "grade"),
    [
        (spec("SEGV", "xsltFuzzXPath"), SEGV, "type_and_frame"),
        (spec("heap-buffer-overflow", "xsltFuzzXPath"), SEGV, "frame_only"),
        (spec("SEGV", "LLVMFuzzerTestOneInput", "libxslt/tests/fuzz/xpath.c"), SEGV, "harness_entry_point"),
        (spec("SEGV", "xmlXPathNextPrecedingSibling", "libxml2/xpath.c"), SEGV, "type_only"),
        (spec("SEGV", "decodeRow", "src/decode.c"), "asan_unsymbolised.txt", "type_only_no_frame"),
        (spec("heap-use-after-free", "xsltFreeLocale"), SEGV, "file_only"),
        (spec("heap-use-after-free", "xmlFreeDoc", "libxml2/tree.c"), SEGV, "no_match"),
        (
            spec("heap-use-after-free", "decodeRow", "src/decode.c"),
            "asan_unsymbolised.txt",
            "no_match_no_frame",
        ),
        (parse_sanitizer_report("no report"), SEGV, "not_run"),
        (parse_clusterfuzz(CLUSTERFUZZ_EXR), "asan_heap_overflow_cpp.txt", "type_and_frame"),
        (parse_clusterfuzz(CLUSTERFUZZ_TIFF), "ubsan_integer_overflow.txt", "type_and_frame"),
        (parse_clusterfuzz(CLUSTERFUZZ_TIFF), "ubsan_no_stack.txt", "type_only_no_frame"),
        (
            spec(
                "deadly signal",
                "imgdec::image::decoder::Decoder<R>::read_palette",
                "src/image/decoder.rs",
                tool="libFuzzer",
            ),
            "rust_panic.txt",
            "type_and_frame",
        ),
        (spec("heap-buffer-overflow", "memcpy", "string.h"), "asan_heap_overflow_cpp.txt", "type_and_frame"),
    ],
)
def test_grades(train, bench, grade):
    g = grade_crash(train, report(bench))
    assert g.grade == grade, g.reason
    assert g.grade in GRADES


def test_grade_accepts_text_and_reports_parts():
    g = grade_crash("AddressSanitizer: SEGV in function `xsltFuzzXPath` in file `libxslt/tests/fuzz/fuzz.c`",
                    (DATA / SEGV).read_text())  # fmt: skip
    assert (g.grade, g.type_match, g.frame_match, g.file_match) == ("type_and_frame", True, True, True)
    h = grade_crash(spec("heap-use-after-free", "LLVMFuzzerTestOneInput"), report(SEGV))
    assert h.grade == "harness_entry_point" and h.type_match is False


def test_best_grade():
    assert best_grade(["no_match", "type_only", "harness_entry_point"]) == "harness_entry_point"
    assert best_grade([CrashGrade("type_only"), CrashGrade("type_and_frame")]) == "type_and_frame"
    assert best_grade([]) == "not_run"
    with pytest.raises(ValueError):
        best_grade(["excellent"])


# ----------------------------------------------------------------------------------------- control
def _bug(project, kind, function, file, bug=None):
    return (project, spec(kind, function, file), spec(kind, function, "/src/" + file), bug)


def test_control_rate_grades_different_bugs_of_the_same_project():
    matched = [
        _bug("libxslt", "SEGV", "xsltFuzzXPath", "libxslt/tests/fuzz/fuzz.c", "b1"),
        _bug("libxslt", "heap-use-after-free", "xsltFreeLocale", "libxslt/libxslt/xsltlocale.c", "b2"),
        _bug("libxslt", "SEGV", "xsltApplyTemplates", "libxslt/libxslt/transform.c", "b3"),
        _bug("libxslt", "SEGV", "xsltApplyTemplates", "libxslt/libxslt/transform.c", "b3"),  # b3 again
        _bug("jq", "heap-buffer-overflow", "jv_dump_term", "jq/src/jv_print.c", "b4"),  # alone: no control
    ]
    matched_grades = summarize_grades(grade_crash(t, b) for _, t, b, _ in matched)
    assert matched_grades.rate("type_and_frame") == 1.0
    ctl = control_rate(matched)
    # libxslt: 4 rows -> 12 ordered pairs, minus the 2 pairs of b3 with itself
    assert (ctl.n_pairs, ctl.n_projects, ctl.sampled) == (10, 1, False)
    assert ctl.counts["type_and_frame"] == 0
    assert ctl.counts["type_only"] == 4  # SEGV vs SEGV in a different function: b1<->b3 (x2 rows of b3)
    assert ctl.rate("type_only") == pytest.approx(0.4)
    assert sum(ctl.counts.values()) == ctl.n_pairs


def test_control_rate_same_signature_object_is_the_same_item():
    t, b = spec("SEGV", "f", "a.c"), spec("SEGV", "f", "a.c")
    ctl = control_rate([("p", t, b), ("p", t, spec("SEGV", "g", "b.c"))])
    assert ctl.n_pairs == 0


def test_control_rate_caps_pairs_deterministically():
    matched = [
        ("p", spec("SEGV", f"f{i}", f"f{i}.c"), spec("SEGV", f"f{i}", f"f{i}.c"), i) for i in range(40)
    ]
    a, b = control_rate(matched, max_pairs=100, seed=1), control_rate(matched, max_pairs=100, seed=1)
    assert a.sampled and a.n_pairs == 100 and a == b
    assert control_rate(matched).n_pairs == 40 * 39


@pytest.mark.parametrize(
    "text",
    [
        "AddressSanitizer: " + "x " * 50_000 + " in function `",
        "    #0 0x1 in f" + " " * 500_000 + "x\n",
        "SUMMARY: AddressSanitizer: x" + " " * 300_000 + "y\n",
        "\n" * 500_000 + "Crash Typ",
        "a" * 300_000 + ": runtime error: x",
        "Assertion `" * 100_000,
    ],
)
def test_hostile_reports_parse_in_linear_time(text):
    import time

    start = time.perf_counter()
    grade_crash(parse_crash(text), report("asan_segv.txt"))
    assert time.perf_counter() - start < 2.0
