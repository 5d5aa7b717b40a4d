"""Crash signatures: parse sanitizer reports, one-line crash specs and ClusterFuzz text; grade pairs.

Three inputs, one `CrashSignature`:

- `parse_sanitizer_report(text)`: a full report (ASan, MSan, UBSan incl. `runtime error:` lines,
  LSan, libFuzzer deadly signal / OOM / timeout, Rust panics). Crash type from the `SUMMARY:` line,
  else the `ERROR:`/`WARNING:` headline (a generic `undefined-behavior` / `deadly signal` summary is
  refined by the `runtime error:` / `panicked at` line); the first stack; the top *project* frame,
  skipping sanitizer, compiler-rt, libFuzzer, libc, C++/Rust standard library and unsymbolised frames.
- `parse_crash_spec(text)`: MiMo's one-line spec,
  ``AddressSanitizer: SEGV in function `xsltFuzzXPath` in file `libxslt/tests/fuzz/fuzz.c` ``.
- `parse_clusterfuzz(text)`: ClusterFuzz issue text with `Crash Type:` and `Crash State:` lines
  (ARVO-Meta `report.comments[0].content`, OSV details).

Function names are compared as *bare* names (`bare_function`): no template arguments, parameters,
qualifiers, namespaces/classes, lambda/closure wrappers or Rust hashes. Types are canonicalised
(`canonical_crash_type`) and compared by family (`types_match`), so `SEGV`, `Segv on unknown address`
and `Null-dereference READ` agree.

`grade_crash(a, b)` gives one of GRADES; `best_grade` picks the strongest of several; `control_rate`
grades same-project pairs of *different* matched bugs, the rate a match would reach by chance.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Grades, strongest first (best_grade picks the earliest). `not_run`: a side has no usable signature.
GRADES = (
    "type_and_frame",
    "frame_only",
    "harness_entry_point",
    "type_only",
    "type_only_no_frame",
    "file_only",
    "no_match",
    "no_match_no_frame",
    "not_run",
)
_GRADE_RANK = {g: i for i, g in enumerate(GRADES)}

#: Functions that are a fuzz harness entry point, not a crash site.
HARNESS_FUNCTIONS = frozenset(
    {
        "LLVMFuzzerTestOneInput",
        "LLVMFuzzerInitialize",
        "LLVMFuzzerCustomMutator",
        "LLVMFuzzerCustomCrossOver",
        "__libfuzzer_sys_run",  # cargo-fuzz `fuzz_target!` body
        "rust_fuzzer_test_input",
    }
)

DEFAULT_MAX_REPORT_CHARS = 1_000_000
FRAME_KINDS = ("project", "harness", "sanitizer", "fuzzer", "libc", "stdlib", "unsymbolised")


# ============================================================================================ records
@dataclass(frozen=True)
class Frame:
    """One stack frame. `function` is the symbol as printed ('' when unsymbolised); `bare` its bare
    name; `kind` one of FRAME_KINDS."""

    index: int
    function: str
    bare: str
    kind: str
    file: str | None = None
    line: int | None = None
    module: str | None = None

    @property
    def symbolised(self) -> bool:
        return self.kind != "unsymbolised"


@dataclass(frozen=True)
class CrashSignature:
    """What a crash report says, reduced to what grading needs.

    source: `sanitizer_report` | `spec` | `clusterfuzz`. status: `ok` | `missing` | `empty` |
    `unparseable`; `reason` explains a non-ok status (and notes truncation). crash_type is canonical
    (see canonical_crash_type), raw_type as written. frames: the first stack (ClusterFuzz: the Crash
    State lines; spec: the one named function). top_frame: the first project or harness frame.
    first_frame: the first symbolised frame of any kind. file: top frame's file, else the best other
    location the text gives (spec file, UBSan/panic location). state: ClusterFuzz Crash State lines.
    """

    source: str
    status: str = "ok"
    reason: str = ""
    sanitizer: str | None = None
    crash_type: str | None = None
    raw_type: str | None = None
    access: str | None = None
    frames: tuple[Frame, ...] = ()
    top_frame: Frame | None = None
    first_frame: Frame | None = None
    file: str | None = None
    state: tuple[str, ...] = ()
    truncated: bool = False

    @property
    def usable(self) -> bool:
        return self.status == "ok"

    @property
    def function(self) -> str | None:
        """Bare name of the top project (or harness) frame."""
        return self.top_frame.bare if self.top_frame else None

    @property
    def harness(self) -> bool:
        return self.top_frame is not None and self.top_frame.kind == "harness"


@dataclass(frozen=True)
class CrashGrade:
    """Grade of one pair. type/frame/file_match are None when that part could not be compared."""

    grade: str
    type_match: bool | None = None
    frame_match: bool | None = None
    file_match: bool | None = None
    reason: str = ""


@dataclass(frozen=True)
class GradeSummary:
    """Counts and rates per grade. Rates are over graded pairs (`not_run` excluded from the
    denominator and reported as `n_not_run`). For a control: n_projects with at least two matched
    bugs, and `sampled` when the pairs were capped."""

    n_pairs: int
    counts: dict[str, int]
    rates: dict[str, float]
    n_not_run: int = 0
    n_projects: int = 0
    sampled: bool = False

    def rate(self, grade: str) -> float:
        return self.rates.get(grade, 0.0)


# ============================================================================ bare function names
_RUST_HASH_RE = re.compile(r"::h[0-9a-f]{16}(?=$|::|\s)")
_GCC_SUFFIX_RE = re.compile(r"(?:\.(?:part|isra|constprop|cold|lto_priv|localalias|llvm|clone)(?:\.\d+)?)+$")
_OFFSET_RE = re.compile(r"\+0x[0-9a-fA-F]+$")
_INTERCEPTOR_RE = re.compile(r"^_{2,3}(?:interceptor_(?:trampoline_)?|wrap_)|^__(?:asan|msan|hwasan)_(?=mem|str|bcmp)")
_LAMBDA_RE = re.compile(r"^(?:\$_\d+|'lambda\d*'|\{lambda|'unnamed\d*'|\{unnamed|\{\{closure\}\}|\{closure|<lambda)")
_OPERATOR_SYMBOLS = sorted(
    [
        "()", "[]", "->*", "->", "<=>", "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
        "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*", "/", "%",
        "^", "&", "|", "~", "!", "=", ",",
    ],
    key=len,
    reverse=True,
)  # fmt: skip
_OPERATOR_WORDS = ("new[]", "delete[]", "new", "delete", "co_await")
_QUALIFIERS = frozenset(
    {"const", "volatile", "noexcept", "override", "final", "&", "&&", "static", "virtual", "inline", "mut"}
)


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def _scan(s: str) -> tuple[list[str], list[str]]:
    """Split on top-level `::`, keeping operator tokens atomic (stored in `ops`, placeholders in text)."""
    comps: list[str] = []
    ops: list[str] = []
    buf: list[str] = []
    depth, i, n = 0, 0, len(s)
    while i < n:
        if s.startswith("operator", i) and (i == 0 or not _ident(s[i - 1])) and (i + 8 >= n or not _ident(s[i + 8])):
            j = i + 8
            while j < n and s[j] == " ":
                j += 1
            token = end = None
            for sym in _OPERATOR_SYMBOLS:
                if s.startswith(sym, j):
                    token, end = sym, j + len(sym)
                    break
            if token is None:
                for word in _OPERATOR_WORDS:
                    if s.startswith(word, j) and not (j + len(word) < n and _ident(s[j + len(word)])):
                        token, end = " " + word, j + len(word)
                        break
            if token is None:  # conversion operator (`operator bool`) or literal (`operator"" _x`)
                k = s.find("(", j)
                k = n if k < 0 else k
                token, end = " " + " ".join(s[j:k].split()), k
            buf.append(f"\x01{len(ops)}\x02")
            ops.append("operator" + token)
            i = end
            continue
        c = s[i]
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth = max(depth - 1, 0)
        elif c == ":" and depth == 0 and s.startswith("::", i):
            comps.append("".join(buf))
            buf = []
            i += 2
            continue
        buf.append(c)
        i += 1
    comps.append("".join(buf))
    return comps, ops


def _strip_groups(comp: str) -> str:
    out: list[str] = []
    depth = 0
    for c in comp:
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def bare_function(name: str | None) -> str:
    """The bare function name: `ns::Foo<int>::bar(char const*) const` -> `bar`.

    Strips template arguments, parameters, cv/ref qualifiers, return types, namespaces and classes;
    a lambda or closure (`$_0`, `'lambda'(int)`, `{lambda(int)#1}`, `{{closure}}`) becomes its enclosing
    function; operators keep their symbol (`operator[]`, `operator<<`, `operator bool`); Rust hashes
    (`::h0123456789abcdef`), GCC clone suffixes (`.part.0`, `.isra.0`), `+0x1c` offsets and
    `__interceptor_` prefixes are dropped.
    """
    if not name:
        return ""
    s = " ".join(str(name).split())
    s = _RUST_HASH_RE.sub("", s)
    s = _OFFSET_RE.sub("", s)
    comps, ops = _scan(s)
    for k, comp in enumerate(comps):
        if _LAMBDA_RE.match(comp.strip()) and k > 0:
            comps = comps[:k]
            break
    bare = ""
    for comp in reversed(comps):
        tokens = _strip_groups(comp).split()
        while tokens and tokens[-1] in _QUALIFIERS:
            tokens.pop()
        if tokens:
            bare = tokens[-1]
            break
    bare = re.sub(r"\x01(\d+)\x02", lambda m: ops[int(m.group(1))], bare)
    bare = bare.lstrip("*&")
    bare = _GCC_SUFFIX_RE.sub("", bare)
    return _INTERCEPTOR_RE.sub("", bare)


# ================================================================================ frame classification
_SANITIZER_FUNC_PREFIXES = (
    "__asan", "__msan", "__ubsan", "__lsan", "__tsan", "__hwasan", "__dfsan", "__sanitizer", "__sancov",
    "__interceptor_", "___interceptor_", "__interception::",
)  # fmt: skip
_SANITIZER_PATH_PARTS = (
    "compiler-rt/lib/", "/sanitizer_common/", "/asan/", "/msan/", "/ubsan/", "/lsan/", "/tsan/", "/hwasan/",
)  # fmt: skip
_FUZZER_FUNC_PREFIXES = ("fuzzer::", "libfuzzer_sys::", "__afl_", "LLVMFuzzerRunDriver", "HonggfuzzMain")
_FUZZER_PATH_PARTS = (
    "/libfuzzer/", "compiler-rt/lib/fuzzer", "/FuzzerLoop.cpp", "/FuzzerDriver.cpp", "/FuzzerMain.cpp",
    "/libfuzzer-sys-", "/libfuzzer-sys/", "afl_driver.cpp", "/aflplusplus/", "/honggfuzz/",
)  # fmt: skip
_LIBC_FUNCTIONS = frozenset(
    """memcpy memmove memset memcmp memchr memrchr memmem bcmp bcopy bzero strlen strnlen strcmp strncmp
    strcasecmp strncasecmp strcpy strncpy stpcpy strcat strncat strchr strrchr strstr strdup strndup strtol
    strtoul strtoll strtoull strtod atoi atol sprintf snprintf vsprintf vsnprintf printf fprintf vfprintf
    sscanf fwrite fread fopen fclose malloc calloc realloc free posix_memalign aligned_alloc valloc
    abort raise exit _exit __assert_fail __assert_fail_base __assert_perror_fail qsort bsearch
    __libc_start_main __libc_start_call_main _start gsignal pthread_kill __pthread_kill_implementation
    __pthread_kill_internal start_thread clone clone3 wcslen wcscpy mbrtowc longjmp siglongjmp
    __cxa_throw __cxa_rethrow __cxa_begin_catch __cxa_pure_virtual _Unwind_RaiseException""".split()
)
_LIBC_FUNC_PREFIXES = (
    "__GI_",
    "__libc_",
    "__memcpy_",
    "__memmove_",
    "__memset_",
    "__mem",
    "__str",
    "__nptl",
    "__pthread_",
    "_IO_",
    "__vfprintf",
    "__printf_",
    "__assert",
    "__internal_",
)
_LIBC_MODULE_RE = re.compile(
    r"(?:^|/)(?:libc|libm|libpthread|libdl|librt|ld-linux[\w.-]*|libgcc_s|libstdc\+\+"
    r"|libc\+\+|libc\+\+abi|libresolv)(?:[.-]|$)"
)
_LIBC_PATH_PARTS = ("/glibc-", "/sysdeps/")
# glibc frames carry paths relative to the glibc tree (`stdlib/abort.c`, `signal/../sysdeps/...`).
_GLIBC_RELATIVE_RE = re.compile(
    r"^(?:\.\./)*(?:signal|stdlib|nptl|string|csu|libio|sysdeps|malloc|posix|elf|misc|assert|stdio-common"
    r"|wcsmbs|iconv|setjmp|debug)/"
)
_STDLIB_FUNC_PREFIXES = (
    "std::",
    "__gnu_cxx::",
    "__cxxabiv1::",
    "__cxa_",
    "core::",
    "alloc::",
    "<std::",
    "<core::",
    "<alloc::",
    "<&",
    "rust_begin_unwind",
    "rust_panic",
    "__rust_",
    "__rustc::",
    "panic_abort::",
    "panic_unwind::",
    "__rdl_",
    "__rg_",
)
_STDLIB_PATH_PARTS = (
    "/include/c++/",
    "/c++/v1/",
    "/libcxx/",
    "/libcxxabi/",
    "/libc++/",
    "/rustc/",
    "/library/std/src/",
    "/library/core/src/",
    "/library/alloc/src/",
)
_RUST_TRAIT_CORE_RE = re.compile(r"^<[^<>]*? as (?:core|std|alloc)::")


def classify_frame(function: str, file: str | None = None, module: str | None = None) -> str:
    """Kind of a frame: project | harness | sanitizer | fuzzer | libc | stdlib | unsymbolised."""
    func = (function or "").strip()
    if not func or func in ("<unknown>", "??", "<null>") or re.fullmatch(r"0x[0-9a-fA-F]+", func):
        return "unsymbolised"
    bare = bare_function(func)
    if not bare:
        return "unsymbolised"
    if bare in HARNESS_FUNCTIONS:
        return "harness"
    path = file or ""
    mod = module or ""
    if func.startswith(_SANITIZER_FUNC_PREFIXES) or any(p in path for p in _SANITIZER_PATH_PARTS):
        return "sanitizer"
    if "libclang_rt" in mod or "sanitizer" in mod.rsplit("/", 1)[-1]:
        return "sanitizer"
    if func.startswith(_FUZZER_FUNC_PREFIXES) or any(p in path for p in _FUZZER_PATH_PARTS):
        return "fuzzer"
    system_path = not path.startswith("/src/")  # OSS-Fuzz builds project code under /src/
    if (
        (system_path and (func in _LIBC_FUNCTIONS or bare in _LIBC_FUNCTIONS or func.startswith(_LIBC_FUNC_PREFIXES)))
        or any(p in path for p in _LIBC_PATH_PARTS)
        or _GLIBC_RELATIVE_RE.match(path) is not None
        or (_LIBC_MODULE_RE.search(mod) is not None and not path)
    ):
        return "libc"
    if (
        func.startswith(_STDLIB_FUNC_PREFIXES)
        or _RUST_TRAIT_CORE_RE.match(func)
        or any(p in path for p in _STDLIB_PATH_PARTS)
    ):
        return "stdlib"
    return "project"


def _make_frame(
    index: int, function: str, file: str | None = None, line: int | None = None, module: str | None = None
) -> Frame:
    function = (function or "").strip()
    kind = classify_frame(function, file, module)
    bare = bare_function(function) if kind != "unsymbolised" else ""
    return Frame(index=index, function=function, bare=bare, kind=kind, file=file, line=line, module=module)


def _pick_frames(frames: Sequence[Frame]) -> tuple[Frame | None, Frame | None]:
    top = next((f for f in frames if f.kind in ("project", "harness")), None)
    first = next((f for f in frames if f.symbolised), None)
    return top, first


# ===================================================================================== crash types
_TYPE_ALIASES = {
    "segv-on-unknown-address": "segv",
    "sigsegv": "segv",
    "segmentation-fault": "segv",
    "heap-double-free": "double-free",
    "attempting-double-free": "double-free",
    "attempting-free": "bad-free",
    "invalid-free": "bad-free",
    "bad-free": "bad-free",
    "direct-leak": "memory-leak",
    "indirect-leak": "memory-leak",
    "leak": "memory-leak",
    "memory-leaks": "memory-leak",
    "detected-memory-leaks": "memory-leak",
    "signed-integer-overflow": "integer-overflow",
    "integer-divide-by-zero": "divide-by-zero",
    "division-by-zero": "divide-by-zero",
    "float-divide-by-zero": "divide-by-zero",
    "floating-point-exception": "fpe",
    "sigfpe": "fpe",
    "stack-exhaustion": "stack-overflow",
    "uninitialized-value": "use-of-uninitialized-value",
    "use-of-uninitialized-memory": "use-of-uninitialized-value",
    "abort": "abrt",
    "sigabrt": "abrt",
    "assertion-failure": "assert",
    "assertion-failed": "assert",
    "check-failed": "check-failure",
    "dcheck-failure": "check-failure",
    "security-dcheck-failure": "check-failure",
    "security-check-failure": "check-failure",
    "undefined-behaviour": "undefined-behavior",
    "illegal-instruction": "ill",
    "sigill": "ill",
    "sigbus": "bus",
    "requested-allocation-size": "allocation-size-too-big",
    "malloc-limit": "out-of-memory",
    "out-of-memory-(malloc": "out-of-memory",
    "fatal-error": "fatal-signal",
    "rust-panic": "panic",
}
_TYPE_FAMILY = {
    "segv": "segv",
    "null-dereference": "segv",
    "unknown": "segv",
    "bus": "segv",
    "abrt": "abort",
    "deadly-signal": "abort",
    "fatal-signal": "abort",
    "panic": "abort",
    "assert": "abort",
    "check-failure": "abort",
    "out-of-memory": "oom",
    "allocation-size-too-big": "oom",
    "calloc-overflow": "oom",
    "divide-by-zero": "fpe",
    "fpe": "fpe",
    "unsigned-integer-overflow": "integer-overflow",
}
#: Types UBSan reports; a generic `undefined-behavior` matches any of them.
UB_TYPES = frozenset(
    {
        "integer-overflow", "unsigned-integer-overflow", "index-out-of-bounds", "invalid-shift-exponent",
        "invalid-shift-base", "divide-by-zero", "misaligned-address", "null-dereference", "pointer-overflow",
        "invalid-bool-value", "invalid-enum-value", "incorrect-function-pointer-type", "float-cast-overflow",
        "non-positive-vla-bound-value", "implicit-conversion", "unreachable", "object-size", "bad-cast",
        "missing-return", "invalid-builtin-use", "null-argument",
    }
)  # fmt: skip
_UBSAN_MESSAGES = (
    (r"misaligned address", "misaligned-address"),
    (
        r"applying (?:non-)?zero offset|pointer index expression|(?:addition|subtraction) of unsigned offset",
        "pointer-overflow",
    ),
    (r"unsigned integer overflow", "unsigned-integer-overflow"),
    (r"signed integer overflow|negation of .* cannot be represented", "integer-overflow"),
    (r"out of bounds for type|^index -?\d+ out of bounds", "index-out-of-bounds"),
    (r"shift exponent", "invalid-shift-exponent"),
    (r"left shift of", "invalid-shift-base"),
    (r"division by zero|divide by zero|remainder by zero", "divide-by-zero"),
    (r"null pointer passed as argument|null pointer returned from function", "null-argument"),
    (r"null pointer", "null-dereference"),
    (r"not a valid value for type '(?:bool|_Bool)'", "invalid-bool-value"),
    (r"not a valid value for type", "invalid-enum-value"),
    (r"incorrect function type", "incorrect-function-pointer-type"),
    (r"outside the range of representable values", "float-cast-overflow"),
    (r"variable length array bound", "non-positive-vla-bound-value"),
    (r"implicit conversion", "implicit-conversion"),
    (r"unreachable program point", "unreachable"),
    (r"insufficient space for an object", "object-size"),
    (r"downcast of|does not point to an object|vptr", "bad-cast"),
    (r"end of a value-returning function", "missing-return"),
    (r"passing zero to", "invalid-builtin-use"),
)
_UBSAN_COMPILED = tuple((re.compile(p), t) for p, t in _UBSAN_MESSAGES)


def ubsan_type(message: str) -> str:
    """Crash type of a UBSan `runtime error:` message (`undefined-behavior` when unrecognised)."""
    for pattern, kind in _UBSAN_COMPILED:
        if pattern.search(message):
            return kind
    return "undefined-behavior"


def canonical_crash_type(raw: str | None) -> str | None:
    """`Heap-buffer-overflow READ 4` -> `heap-buffer-overflow`; `SEGV on unknown address 0x0` ->
    `segv`; `Out-of-memory (exceeds 2560 MB)` -> `out-of-memory`; `Direct-leak` -> `memory-leak`."""
    if not raw:
        return None
    t = " ".join(str(raw).split())
    t = re.sub(r"^(?:\w*Sanitizer|libFuzzer)\s*:\s*", "", t)
    t = re.sub(r"^(\d+ byte\(s\) leaked|detected memory leaks).*$", "memory-leak", t)
    t = re.sub(r"\s+\{?\*?(?:READ|WRITE|UNKNOWN|READ/WRITE)\b.*$", "", t)
    t = re.sub(r"\s+on\s+(?:unknown\s+)?address\b.*$", "", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+on\s+0x[0-9a-fA-F]+.*$", "", t)
    t = re.sub(r"\s*\(.*$", "", t)
    t = re.sub(r"\s+/\S.*$", "", t)
    t = t.split(": ", 1)[0].strip().rstrip(":.")
    if not t:
        return None
    t = re.sub(r"[\s_]+", "-", t.lower()).strip("-")
    if t.startswith("out-of-memory"):
        return "out-of-memory"
    if t.startswith("requested-allocation-size"):
        return "allocation-size-too-big"
    return _TYPE_ALIASES.get(t, t)


def types_match(a: str | None, b: str | None) -> bool:
    """Canonical types agree: equal, same family (segv/null-dereference, abrt/panic/assert, ...), or one
    is a generic `undefined-behavior` and the other a UBSan type."""
    if not a or not b:
        return False
    if a == b or _TYPE_FAMILY.get(a, a) == _TYPE_FAMILY.get(b, b):
        return True
    return (a == "undefined-behavior" and b in UB_TYPES) or (b == "undefined-behavior" and a in UB_TYPES)


# ================================================================================ report parsing
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME_RE = re.compile(r"^\s*#(?P<idx>\d+)\s+(?P<pc>0x[0-9a-fA-F]+)\b\s*(?P<rest>.*)$")
# Patterns run on single lines; none has a lazy group followed by `\s*$` or an unanchored `\s*` prefix,
# so a hostile line cannot make them backtrack quadratically. Captures are stripped in code.
_RUST_FRAME_RE = re.compile(r"^ {0,6}(?P<idx>\d+): +(?:0x[0-9a-fA-F]+ - )?(?P<func>\S.*)$")
_RUST_AT_RE = re.compile(r"^\s+at\s(?P<loc>.*)$")
_SUMMARY_RE = re.compile(r"SUMMARY: *(?P<tool>\w*Sanitizer|libFuzzer|[\w-]+): *(?P<rest>.*)$")
_HEADLINE_RE = re.compile(r"(?:ERROR|WARNING): *(?P<tool>\w*Sanitizer|libFuzzer): *(?P<rest>.*)$")
_RUNTIME_RE = re.compile(r"^(?:(?P<loc>[^\s:]+):(?P<line>\d+)(?::\d+)?: *)?runtime error: *(?P<msg>.*)$")
_PANIC_RE = re.compile(r"thread '[^'\n]*' panicked at (?P<rest>.*)$")
_ASSERT_RE = re.compile(r"Assertion [`'][^\n]*[`'] failed|assertion failed", re.IGNORECASE)
_ACCESS_RE = re.compile(r"\b(READ|WRITE) (?:of size \d+|memory access)")
_LOCATION_RE = re.compile(r"^(?P<file>[^\s:]+?)(?::(?P<line>\d+))?(?::\d+)?$")
_MULTIWORD_TYPES = ("deadly signal", "fuzz target exited", "detected memory leaks", "unknown-crash")
_FRAME_LINE_RE = re.compile(r"^[ \t]*#\d+[ \t]+0x[0-9a-fA-F]+", re.MULTILINE)
_MAX_LINE = 16_384  # longer lines are cut before parsing (real frames with templates stay far below)


def _split_location(token: str) -> tuple[str | None, int | None] | None:
    m = _LOCATION_RE.match(token)
    if not m:
        return None
    path, line = m.group("file"), m.group("line")
    if path in ("??", "<unknown>"):
        return None, None
    if "/" not in path and line is None:
        return None
    return path, int(line) if line else None


_BUILD_ID_RE = re.compile(r"\(BuildId: [0-9a-fA-F]+\)$")
_MODULE_RE = re.compile(r"\(([^()\s]+)\+0x[0-9a-fA-F]+\)$")


def _parse_frame_rest(rest: str) -> tuple[str, str | None, int | None, str | None]:
    rest = rest.strip()
    if rest.endswith(")") and (m := _BUILD_ID_RE.search(rest, max(0, len(rest) - 80))):
        rest = rest[: m.start()].rstrip()
    module = None
    if rest.endswith(")") and (m := _MODULE_RE.search(rest, max(0, len(rest) - 4096))):
        module, rest = m.group(1), rest[: m.start()].strip()
    if rest == "in":
        rest = ""
    elif rest.startswith("in "):
        rest = rest[3:].strip()
    if not rest:
        return "", None, None, module
    head, _, last = rest.rpartition(" ")
    if head:
        loc = _split_location(last)
        if loc is not None:
            return head.strip(), loc[0], loc[1], module
        return rest, None, None, module
    if rest.startswith("/") and _OFFSET_RE.search(rest):  # `in /out/fuzzer+0x1234`: a module, no symbol
        return "", None, None, _OFFSET_RE.sub("", rest)
    return rest, None, None, module


def _first_stack(lines: list[str], start: int) -> list[Frame]:
    frames: list[Frame] = []
    for i in range(start, len(lines)):
        m = _FRAME_RE.match(lines[i])
        if not m:
            if frames and lines[i].strip():
                break
            continue
        idx = int(m.group("idx"))
        if frames and idx == 0:
            break
        if not frames and idx != 0:
            continue
        function, file, line, module = _parse_frame_rest(m.group("rest"))
        frames.append(_make_frame(idx, function, file, line, module))
    return frames


def _rust_backtrace(lines: list[str], start: int) -> list[Frame]:
    """`stack backtrace:` frames as printed by Rust's std (RUST_BACKTRACE=1)."""
    for i in range(start, len(lines)):
        if lines[i].strip() == "stack backtrace:":
            break
    else:
        return []
    frames: list[Frame] = []
    j = i + 1
    while j < len(lines):
        m = _RUST_FRAME_RE.match(lines[j].rstrip())
        if not m:
            if _RUST_AT_RE.match(lines[j]):
                j += 1
                continue
            break
        file = line = None
        if j + 1 < len(lines):
            at = _RUST_AT_RE.match(lines[j + 1])
            if at:
                loc = _split_location(at.group("loc").strip())
                if loc:
                    file, line = loc
                j += 1
        frames.append(_make_frame(int(m.group("idx")), m.group("func"), file, line))
        j += 1
    return frames


def _type_from_sanitizer_text(rest: str) -> str | None:
    low = rest.lower()
    for phrase in _MULTIWORD_TYPES:
        if low.startswith(phrase):
            return phrase
    if re.match(r"\d+ byte\(s\) leaked", rest):
        return "memory-leak"
    if low.startswith("attempting double-free"):
        return "double-free"
    if low.startswith("attempting free"):
        return "bad-free"
    if low.startswith("requested allocation size"):
        return "allocation-size-too-big"
    if low.startswith(("out of memory", "out-of-memory", "allocator is out of memory")):
        return "out-of-memory"
    m = re.match(r"[^\s:(]{1,200}", rest)
    return m.group(0) if m else None


def _cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    if len(text) <= max_chars:
        return text, False
    half = max_chars // 2
    return text[:half] + "\n" + text[-half:], True


def _missing_reason(value: object) -> str | None:
    """The reason a fetched per-item file (`.text` None, `.reason`) is missing; None otherwise."""
    if hasattr(value, "text") and hasattr(value, "reason") and value.text is None:  # type: ignore[attr-defined]
        return str(value.reason or "no file")  # type: ignore[attr-defined]
    return None


def _coerce_text(value: object) -> str | None:
    if hasattr(value, "text") and hasattr(value, "reason"):  # sources.taskfiles.TaskFile
        value = value.text  # type: ignore[attr-defined]
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType":
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def _bad(source: str, status: str, reason: str, truncated: bool = False) -> CrashSignature:
    return CrashSignature(source=source, status=status, reason=reason, truncated=truncated)


def parse_sanitizer_report(value: object, *, max_chars: int = DEFAULT_MAX_REPORT_CHARS) -> CrashSignature:
    """Parse a sanitizer report (SEC-bench `sanitizer_report`, CyberGym `error.txt`; str, bytes or a
    fetched file with `.text`/`.reason`). Never raises.

    Reports over `max_chars` keep their first and last halves (the crash is usually at the end of a
    fuzzer log) and are marked `truncated`.
    """
    source = "sanitizer_report"
    text = _coerce_text(value)
    if text is None:
        return _bad(source, "missing", _missing_reason(value) or "no report text")
    if not text.strip():
        return _bad(source, "empty", "report text is blank")
    text, truncated = _cap_text(text, max_chars)
    text = _ANSI_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", ""))
    lines = [line[:_MAX_LINE] for line in text.split("\n")]

    summary = headline = runtime = panic = None
    anchor = None
    access = None
    assertion = False
    for i, line in enumerate(lines):
        if summary is None and (m := _SUMMARY_RE.search(line)):
            summary = m
        if headline is None and (m := _HEADLINE_RE.search(line)):
            headline = m
            anchor = i if anchor is None else anchor
        if runtime is None and "runtime error:" in line and (m := _RUNTIME_RE.match(line.strip())):
            runtime = m
            anchor = i if anchor is None else anchor
        if panic is None and (m := _PANIC_RE.search(line)):
            panic = m
            anchor = i if anchor is None else anchor
        if access is None and (m := _ACCESS_RE.search(line)):
            access = m.group(1)
        if not assertion and "ssertion" in line and _ASSERT_RE.search(line):
            assertion = True

    frames = _first_stack(lines, anchor or 0)
    if not frames and anchor:
        frames = _first_stack(lines, 0)
    if not frames:
        frames = _rust_backtrace(lines, anchor or 0)
    if not frames and summary is not None:
        head, sep, func = summary.group("rest").partition(" in ")
        if sep and func.strip():
            loc = _split_location(head.split()[-1]) if len(head.split()) > 1 else None
            frames = [_make_frame(0, func.strip(), *(loc or (None, None)))]

    tool = raw_type = None
    if summary is not None:
        tool, raw_type = summary.group("tool"), _type_from_sanitizer_text(summary.group("rest").strip())
    if raw_type is None and headline is not None:
        tool, raw_type = headline.group("tool"), _type_from_sanitizer_text(headline.group("rest").strip())
    if headline is not None:
        tool = headline.group("tool")  # LSan and others print an AddressSanitizer SUMMARY
    crash_type = canonical_crash_type(raw_type)
    if runtime is not None and crash_type in (None, "undefined-behavior"):
        raw_type, crash_type = runtime.group("msg").strip(), ubsan_type(runtime.group("msg"))
        tool = tool or "UndefinedBehaviorSanitizer"
    if panic is not None and crash_type in (None, "deadly-signal", "abrt"):
        raw_type, crash_type = "panic", "panic"
        tool = tool or "rust"
    elif assertion and crash_type in ("deadly-signal", "abrt"):
        crash_type = "assert"

    top, first = _pick_frames(frames)
    file = top.file if top else None
    if file is None and runtime is not None and runtime.group("loc"):
        file = runtime.group("loc")
    if file is None and panic is not None:
        m = re.search(r"(?P<file>[^\s',:]+\.rs):\d+", panic.group("rest"))
        if m and not m.group("file").startswith("/rustc/"):
            file = m.group("file")
    if crash_type is None and not frames:
        return _bad(source, "unparseable", "no sanitizer headline, SUMMARY, runtime error or stack found", truncated)
    notes = []
    if truncated:
        notes.append(f"truncated: parsed the first and last {max_chars // 2} characters")
    if not frames:
        notes.append("no stack")
    elif first is None:
        notes.append("only unsymbolised frames")
    elif top is None:
        notes.append("no symbolised project frame")
    return CrashSignature(
        source=source,
        reason="; ".join(notes),
        sanitizer=tool,
        crash_type=crash_type,
        raw_type=raw_type,
        access=access,
        frames=tuple(frames),
        top_frame=top,
        first_frame=first,
        file=file,
        truncated=truncated,
    )


_SPEC_TOOL_RE = re.compile(r"(\w*Sanitizer|libFuzzer) *: *$")
_SPEC_FUNC_RE = re.compile(r"in function +`(?P<func>[^`\n]{0,4000})`(?: +in file +`(?P<file>[^`\n]{0,4000})`)?")
_SPEC_FILE_RE = re.compile(r"in file +`(?P<file>[^`\n]{0,4000})`")


def _spec_parts(text: str) -> dict[str, str | None] | None:
    """Find ``<tool>: <type> in function `f` in file `p` `` by literal search, no backtracking."""
    for marker, pattern in ((" in function `", _SPEC_FUNC_RE), (" in file `", _SPEC_FILE_RE)):
        at = text.find(marker)
        while at >= 0:
            m = pattern.match(text, at + 1)
            if m:
                line_start = text.rfind("\n", 0, at) + 1
                head = text[max(line_start, at - 400) : at]
                tool = None
                cut = max(head.rfind("Sanitizer:"), head.rfind("libFuzzer:"))
                if cut >= 0:
                    tm = _SPEC_TOOL_RE.search(head[: head.index(":", cut) + 1][-80:])
                    tool = tm.group(1) if tm else None
                    head = head[head.index(":", cut) + 1 :]
                kind = head.rsplit(": ", 1)[-1].strip()
                return {"tool": tool, "type": kind, "func": m.groupdict().get("func"), "file": m.group("file")}
            at = text.find(marker, at + 1)
    return None


def parse_crash_spec(value: object) -> CrashSignature:
    """Parse MiMo's one-line crash spec (`prompt[0].content`):
    ``AddressSanitizer: SEGV in function `f` in file `p/x.c` `` -> type `segv`, function `f`, file.
    The crash type is the text between `Sanitizer: ` and ` in function`."""
    source = "spec"
    text = _coerce_text(value)
    if text is None:
        return _bad(source, "missing", _missing_reason(value) or "no spec text")
    if not text.strip():
        return _bad(source, "empty", "spec text is blank")
    groups = _spec_parts(text[:DEFAULT_MAX_REPORT_CHARS])
    if groups is None:
        return _bad(source, "unparseable", "no `<Sanitizer>: <type> in function `...`` spec found")
    raw_type = (groups.get("type") or "").strip() or None
    file = (groups.get("file") or "").strip() or None
    func = (groups.get("func") or "").strip()
    frames = (_make_frame(0, func, file),) if func else ()
    top, first = _pick_frames(frames)
    return CrashSignature(
        source=source,
        sanitizer=groups.get("tool"),
        crash_type=canonical_crash_type(raw_type),
        raw_type=raw_type,
        frames=frames,
        top_frame=top,
        first_frame=first,
        file=file,
        reason="" if func else "spec names no function",
    )


_CF_TYPE_RE = re.compile(r"^[ \t]*Crash Type:(?P<type>[^\n]*)", re.IGNORECASE | re.MULTILINE)
_CF_STATE_RE = re.compile(r"^[ \t]*Crash State:(?P<inline>[^\n]*)", re.IGNORECASE | re.MULTILINE)
_CF_SAN_RE = re.compile(r"^[ \t]*Sanitizer:(?P<san>[^\n]*)", re.IGNORECASE | re.MULTILINE)
_CF_KEY_RE = re.compile(r"^[A-Z][A-Za-z ]*: ")


def parse_clusterfuzz(value: object) -> CrashSignature:
    """Parse ClusterFuzz text (`Crash Type:` line, `Crash State:` block of up to 3 frames)."""
    source = "clusterfuzz"
    text = _coerce_text(value)
    if text is None:
        return _bad(source, "missing", _missing_reason(value) or "no ClusterFuzz text")
    if not text.strip():
        return _bad(source, "empty", "ClusterFuzz text is blank")
    text = text[:DEFAULT_MAX_REPORT_CHARS].replace("\r\n", "\n")
    tm = _CF_TYPE_RE.search(text)
    sm = _CF_STATE_RE.search(text)
    if not tm and not sm:
        return _bad(source, "unparseable", "no `Crash Type:` or `Crash State:` line")
    state: list[str] = []
    if sm:
        if sm.group("inline").strip():
            state.append(sm.group("inline").strip()[:_MAX_LINE])
        for line in text[sm.end() :].split("\n")[1:]:
            s = line.strip()
            if not s or s.startswith("```") or _CF_KEY_RE.match(s) or len(state) >= 10:
                break
            state.append(s[:_MAX_LINE])
    raw_type = tm.group("type").strip()[:400] if tm and tm.group("type").strip() else None
    access = None
    if raw_type and (am := re.search(r"\b(READ|WRITE)\b", raw_type)):
        access = am.group(1)
    frames = tuple(_make_frame(i, s) for i, s in enumerate(state))
    top, first = _pick_frames(frames)
    san = _CF_SAN_RE.search(text)
    return CrashSignature(
        source=source,
        sanitizer=san.group("san").strip() if san else None,
        crash_type=canonical_crash_type(raw_type),
        raw_type=raw_type,
        access=access,
        frames=frames,
        top_frame=top,
        first_frame=first,
        file=None,
        state=tuple(state),
        reason="" if state else "no crash state",
    )


def parse_crash(value: object) -> CrashSignature:
    """Parse whichever format the text is: ClusterFuzz (`Crash Type:`/`Crash State:`), a one-line spec
    (`... in function `f``, no stack), else a sanitizer report."""
    if isinstance(value, CrashSignature):
        return value
    text = _coerce_text(value)
    if text is not None:
        head = text[:DEFAULT_MAX_REPORT_CHARS]
        if _CF_TYPE_RE.search(head) or _CF_STATE_RE.search(head):
            return parse_clusterfuzz(text)
        if "in function `" in head and not _FRAME_LINE_RE.search(head):
            return parse_crash_spec(text)
    return parse_sanitizer_report(value)


# ========================================================================================== grading
def _norm_path(path: str) -> list[str]:
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    return parts


def files_match(a: str | None, b: str | None) -> bool:
    """Same file: one path's components are a suffix of the other's (`/src/x/a/b.c` ~ `a/b.c`)."""
    if not a or not b:
        return False
    pa, pb = _norm_path(a), _norm_path(b)
    if not pa or not pb:
        return False
    short, long_ = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    return long_[-len(short) :] == short


_SITE_SANITIZER_RE = re.compile(r"^_{2,3}interceptor_|^__(?:asan|msan|hwasan)_(?:mem|str|bcmp)")


def _site_names(sig: CrashSignature) -> list[str]:
    """Bare names of the crash-site frames: symbolised frames down to the top project frame, without
    the sanitizer's own reporting frames and the fuzzing engine (interceptors such as
    `__interceptor_memcpy` count, as `memcpy`)."""
    names: list[str] = []
    for f in sig.frames:
        if f.kind in ("project", "harness", "libc", "stdlib") or (
            f.kind == "sanitizer" and _SITE_SANITIZER_RE.match(f.function)
        ):
            names.append(f.bare)
        if f is sig.top_frame:
            break
    return names


def grade_crash(a: CrashSignature | str, b: CrashSignature | str) -> CrashGrade:
    """Grade how well two crash signatures agree (strings are parsed with parse_crash).

    - `not_run`: a side has no usable signature (missing, blank or unparseable text).
    - `harness_entry_point`: a side's top frame is a fuzz harness entry (LLVMFuzzerTestOneInput, ...),
      so the frame says nothing about the crash site (type_match still reported).
    - frames compared (bare names of the top project frames; when a side has none, the crash-site
      frames down to the top project frame, so a spec naming `memcpy` meets a stack whose first frame
      is `__interceptor_memcpy`):
      `type_and_frame`, `frame_only`, `type_only`, `file_only` (same file, different function and
      type), `no_match`.
    - a side has no symbolised frame: `type_only_no_frame`, `file_only` (files still agree), or
      `no_match_no_frame`.
    """
    sa = parse_crash(a) if not isinstance(a, CrashSignature) else a
    sb = parse_crash(b) if not isinstance(b, CrashSignature) else b
    for side, sig in (("a", sa), ("b", sb)):
        if not sig.usable:
            return CrashGrade("not_run", reason=f"{side}: {sig.status}: {sig.reason}")
    type_match = types_match(sa.crash_type, sb.crash_type)
    type_note = f"types {sa.crash_type}/{sb.crash_type}"
    for side, sig in (("a", sa), ("b", sb)):
        if sig.harness:
            return CrashGrade(
                "harness_entry_point",
                type_match=type_match,
                reason=f"{side} names the harness {sig.top_frame.bare}; {type_note}",
            )  # type: ignore[union-attr]
    file_match = files_match(sa.file, sb.file) if sa.file and sb.file else None
    ta, tb = sa.top_frame, sb.top_frame
    if ta is not None and tb is not None:
        frame_match, names = ta.bare == tb.bare, (ta.bare, tb.bare)
    else:
        # A side without a project frame (a spec naming `memcpy`, a stack that crashed in libc with
        # unsymbolised callers): compare the crash-site frames down to the top project frame.
        la, lb = _site_names(sa), _site_names(sb)
        if not la or not lb:
            if type_match:
                grade = "type_only_no_frame"
            elif file_match:
                grade = "file_only"
            else:
                grade = "no_match_no_frame"
            missing = "a" if not la else "b"
            return CrashGrade(
                grade,
                type_match=type_match,
                file_match=file_match,
                reason=f"{missing} has no symbolised frame; {type_note}",
            )
        frame_match, names = bool(set(la) & set(lb)), (la[0], lb[0])
    reason = f"{type_note}; frames {names[0]}/{names[1]}"
    if type_match and frame_match:
        grade = "type_and_frame"
    elif frame_match:
        grade = "frame_only"
    elif type_match:
        grade = "type_only"
    elif file_match:
        grade = "file_only"
    else:
        grade = "no_match"
    return CrashGrade(grade, type_match=type_match, frame_match=frame_match, file_match=file_match, reason=reason)


def best_grade(grades: Iterable[CrashGrade | str]) -> str:
    """The strongest grade (earliest in GRADES); `not_run` for none."""
    best = "not_run"
    for g in grades:
        name = g.grade if isinstance(g, CrashGrade) else str(g)
        if name not in _GRADE_RANK:
            raise ValueError(f"unknown crash grade '{name}'")
        if _GRADE_RANK[name] < _GRADE_RANK[best]:
            best = name
    return best


def summarize_grades(grades: Iterable[CrashGrade | str]) -> GradeSummary:
    """Counts and rates per grade (rates over graded pairs, `not_run` excluded)."""
    counts = dict.fromkeys(GRADES, 0)
    for g in grades:
        counts[g.grade if isinstance(g, CrashGrade) else str(g)] += 1
    n = sum(counts.values())
    graded = n - counts["not_run"]
    rates = {g: (counts[g] / graded if graded else 0.0) for g in GRADES if g != "not_run"}
    return GradeSummary(n_pairs=n, counts=counts, rates=rates, n_not_run=counts["not_run"])


def control_rate(matched: Iterable[Sequence], *, max_pairs: int | None = 200_000, seed: int = 0) -> GradeSummary:
    """Grades of same-project pairs of *different* matched bugs: what a match reaches by chance.

    `matched`: one tuple per matched pair, `(project, train_sig, bench_sig)` or
    `(project, train_sig, bench_sig, bug_id)`; signatures may be CrashSignature or text. Every train
    signature is graded against the bench signature of every other matched pair of the same project,
    skipping pairs of the same bug: same `bug_id`, or the same CrashSignature object on the train or
    bench side (an item matched twice). Pass `bug_id` when signatures are given as text.
    With more than `max_pairs` control pairs, a seeded uniform sample of that size is graded
    (`sampled=True`).
    """
    by_project: dict[str, list[tuple]] = defaultdict(list)
    for row in matched:
        project, train_sig, bench_sig = row[0], row[1], row[2]
        bug = row[3] if len(row) > 3 else None
        if project is None or (isinstance(project, float) and math.isnan(project)):
            continue
        t = train_sig if isinstance(train_sig, CrashSignature) else parse_crash(train_sig)
        b = bench_sig if isinstance(bench_sig, CrashSignature) else parse_crash(bench_sig)
        # The same parsed signature object in two rows is the same item matched twice: not a control.
        tid = id(train_sig) if isinstance(train_sig, CrashSignature) else ("row", len(by_project[str(project)]))
        bid = id(bench_sig) if isinstance(bench_sig, CrashSignature) else ("row", len(by_project[str(project)]))
        by_project[str(project)].append((t, b, bug, tid, bid))
    groups = {p: rows for p, rows in sorted(by_project.items()) if len(rows) >= 2}
    total = sum(len(r) * (len(r) - 1) for r in groups.values())
    sampled = max_pairs is not None and total > max_pairs
    rng = random.Random(seed)
    grades: list[CrashGrade] = []
    for rows in groups.values():
        k = len(rows)
        n_ordered = k * (k - 1)
        if sampled:
            quota = max(1, round(max_pairs * n_ordered / total))  # type: ignore[operator]
            picks = sorted(rng.sample(range(n_ordered), min(quota, n_ordered)))
        else:
            picks = range(n_ordered)
        for p in picks:
            i, r = divmod(p, k - 1)
            j = r if r < i else r + 1
            ti, _, bug_i, tid_i, bid_i = rows[i]
            _, bj, bug_j, tid_j, bid_j = rows[j]
            if (bug_i is not None and bug_i == bug_j) or tid_i == tid_j or bid_i == bid_j:
                continue
            grades.append(grade_crash(ti, bj))
    summary = summarize_grades(grades)
    return GradeSummary(
        n_pairs=summary.n_pairs,
        counts=summary.counts,
        rates=summary.rates,
        n_not_run=summary.n_not_run,
        n_projects=len(groups),
        sampled=sampled,
    )


__all__ = [
    "GRADES", "HARNESS_FUNCTIONS", "UB_TYPES", "CrashGrade", "CrashSignature", "Frame", "GradeSummary",
    "bare_function", "best_grade", "canonical_crash_type", "classify_frame", "control_rate", "files_match",
    "grade_crash", "parse_clusterfuzz", "parse_crash", "parse_crash_spec", "parse_sanitizer_report",
    "summarize_grades", "types_match", "ubsan_type",
]  # fmt: skip
