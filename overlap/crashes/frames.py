"""Stack frames: bare function names and frame kinds.

`bare_function` reduces a symbol as a symbolizer, ClusterFuzz or a crash spec prints it to the name
both sides can agree on (`ns::Foo<int>::bar(char const*) const` -> `bar`). `classify_frame` says
whether a frame is project code, a fuzz harness entry point, or runtime to skip (sanitizer,
compiler-rt, fuzzing engine, libc, C++/Rust standard library, unsymbolised).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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


FRAME_KINDS = ("project", "harness", "sanitizer", "fuzzer", "libc", "stdlib", "unsymbolised")


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


_RUST_HASH_RE = re.compile(r"::h[0-9a-f]{16}(?=$|::|\s)")


_GCC_SUFFIX_RE = re.compile(r"(?:\.(?:part|isra|constprop|cold|lto_priv|localalias|llvm|clone)(?:\.\d+)?)+$")


OFFSET_RE = re.compile(r"\+0x[0-9a-fA-F]+$")


_INTERCEPTOR_RE = re.compile(
    r"^_{2,3}(?:interceptor_(?:trampoline_)?|wrap_)|^__(?:asan|msan|hwasan)_(?=mem|str|bcmp)"
)


_LAMBDA_RE = re.compile(
    r"^(?:\$_\d+|'lambda\d*'|\{lambda|'unnamed\d*'|\{unnamed|\{\{closure\}\}|\{closure|<lambda)"
)


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
        if (
            s.startswith("operator", i)
            and (i == 0 or not _ident(s[i - 1]))
            and (i + 8 >= n or not _ident(s[i + 8]))
        ):
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
    s = OFFSET_RE.sub("", s)
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
        (
            system_path
            and (func in _LIBC_FUNCTIONS or bare in _LIBC_FUNCTIONS or func.startswith(_LIBC_FUNC_PREFIXES))
        )
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


def make_frame(
    index: int, function: str, file: str | None = None, line: int | None = None, module: str | None = None
) -> Frame:
    function = (function or "").strip()
    kind = classify_frame(function, file, module)
    bare = bare_function(function) if kind != "unsymbolised" else ""
    return Frame(index=index, function=function, bare=bare, kind=kind, file=file, line=line, module=module)


def pick_frames(frames: Sequence[Frame]) -> tuple[Frame | None, Frame | None]:
    top = next((f for f in frames if f.kind in ("project", "harness")), None)
    first = next((f for f in frames if f.symbolised), None)
    return top, first
