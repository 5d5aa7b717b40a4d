"""Identifier evidence: does the bench text name the function or file that the train item targets?

The *targets* of a train item come from its crash spec or sanitizer report (``in function `f` in file
`p```, stack frames ``#0 0x... in f path:line``, ClusterFuzz ``Crash State:`` lines) or from its patch
(``diff --git`` / ``+++`` paths and the function names in hunk headers). Fuzz-harness entry points and
sanitizer runtime frames are not targets (``LLVMFuzzerTestOneInput`` names every fuzzer, not a bug).

A target is *named* by a bench text when it occurs there exactly (case-sensitive) with no identifier
character on either side, in the raw text (no tokenisation). A file counts as named by its full path
or by its base name; a qualified function (``ns::Class::method``) by its full name or its last part.
This runs per pair (the id-matched pairs are few), with compiled regular expressions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Targets", "extract_targets", "identifier_evidence", "names_in"]

HARNESS_FUNCTIONS = frozenset(
    {"LLVMFuzzerTestOneInput", "LLVMFuzzerInitialize", "LLVMFuzzerCustomMutator", "main", "fuzz_target",
     "FuzzerTestOneInput", "ExecuteFilesOnyByOne", "RunOneTest"}
)
_RUNTIME_PREFIXES = ("__asan", "__msan", "__ubsan", "__tsan", "__lsan", "__sanitizer", "__interceptor_",
                     "___interceptor_", "__libc_", "fuzzer::", "std::__")
_RUNTIME_PATHS = ("compiler-rt/", "/sanitizer_common/", "llvm-project/", "libFuzzer/", "/usr/include/")
_IDENT_CHARS = "A-Za-z0-9_"

_SPEC_FUNCTION = re.compile(r"\bin function [`'\"]([^`'\"\s]+)[`'\"]")
_SPEC_FILE = re.compile(r"\bin file [`'\"]([^`'\"\s]+)[`'\"]")
_FRAME = re.compile(r"^\s*#\d+\s+0x[0-9a-fA-F]+\s+in\s+(\S+)\s+(\S+?)(?::\d+)*(?:\s|$)", re.M)
_CRASH_STATE = re.compile(r"^Crash State:\s*\n((?:[ \t]*\S.*\n?){1,3})", re.M)
_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)
_PLUS_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)
_HUNK = re.compile(r"^@@ [^@]* @@[ \t]*(.*)$", re.M)
_CALL_NAME = re.compile(r"([A-Za-z_~][A-Za-z0-9_:~]*)\s*\(")
_KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch", "elif", "case"})
_DEF_NAME = re.compile(r"\b(?:def|class|func|fn|function|sub)\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Targets:
    """What a train item points at: function and file names, plus what was left out and why."""

    functions: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # harness / runtime names found but not targets

    def add_function(self, name: str) -> None:
        name = name.strip().strip("`'\"").rstrip(",;:")
        if not name or name in self.functions:
            return
        if name in HARNESS_FUNCTIONS or name.startswith(_RUNTIME_PREFIXES):
            if name not in self.ignored:
                self.ignored.append(name)
            return
        self.functions.append(name)

    def add_file(self, path: str) -> None:
        path = path.strip().strip("`'\"").rstrip(",;:")
        if not path or path == "/dev/null" or path in self.files:
            return
        if any(p in path for p in _RUNTIME_PATHS):
            if path not in self.ignored:
                self.ignored.append(path)
            return
        self.files.append(path)

    def __bool__(self) -> bool:
        return bool(self.functions or self.files)


def extract_targets(text: str | None, *, max_frames: int = 3) -> Targets:
    """Functions and files named by a crash spec, sanitizer report or patch."""
    out = Targets()
    if not text:
        return out
    # each pattern only where the text holds a literal that every match of it holds: most texts hold none,
    # and a substring test costs a small part of a regular expression's scan
    for m in _SPEC_FUNCTION.finditer(text) if "in function " in text else ():
        out.add_function(m.group(1))
    for m in _SPEC_FILE.finditer(text) if "in file " in text else ():
        out.add_file(m.group(1))
    frames = 0
    for m in _FRAME.finditer(text) if "0x" in text else ():
        func, path = m.group(1), m.group(2)
        if func.startswith(_RUNTIME_PREFIXES) or any(p in path for p in _RUNTIME_PATHS):
            continue
        if func in HARNESS_FUNCTIONS:  # the harness frame: neither its function nor its file is a target
            out.add_function(func)
            continue
        out.add_function(func)
        out.add_file(path)
        frames += 1
        if frames >= max_frames:
            break
    for m in _CRASH_STATE.finditer(text) if "Crash State:" in text else ():
        for line in m.group(1).splitlines():
            line = line.strip()
            if line:
                out.add_function(line.split("(")[0].strip())
    for m in _DIFF_GIT.finditer(text) if "diff --git a/" in text else ():
        out.add_file(m.group(2))
    for m in _PLUS_FILE.finditer(text) if "+++ " in text else ():
        out.add_file(m.group(1))
    for m in _HUNK.finditer(text) if "@@ " in text else ():
        context = m.group(1)
        name = _DEF_NAME.search(context) or None
        if name:
            out.add_function(name.group(1))
            continue
        calls = [c for c in _CALL_NAME.findall(context) if c not in _KEYWORDS]
        if calls:
            out.add_function(calls[0])
    return out


def _variants(name: str, kind: str) -> list[str]:
    if kind == "file":
        base = name.rsplit("/", 1)[-1]
        return [name] if base == name else [name, base]
    if "::" in name:
        last = name.rsplit("::", 1)[-1]
        return [name, last] if last else [name]
    return [name]


def _found(name: str, text: str) -> bool:
    pattern = rf"(?<![{_IDENT_CHARS}]){re.escape(name)}(?![{_IDENT_CHARS}])"
    return re.search(pattern, text) is not None


def names_in(targets: Targets, text: str | None) -> dict[str, list[str]]:
    """Which targets the text names: {"functions": [...], "files": [...]} (the target as extracted)."""
    got: dict[str, list[str]] = {"functions": [], "files": []}
    if not text:
        return got
    for kind, names in (("functions", targets.functions), ("files", targets.files)):
        for name in names:
            if any(_found(v, text) for v in _variants(name, "file" if kind == "files" else "function")):
                got[kind].append(name)
    return got


def identifier_evidence(
    pairs: Iterable[tuple[str, str]],
    train_targets: Mapping[str, str | None],
    bench_texts: Mapping[str, str | None],
) -> list[dict]:
    """Per pair: the train item's targets and whether the bench text names them.

    ``train_targets``: train id -> the text holding its crash spec / report / patch (or its Targets).
    ``bench_texts``: bench id -> the raw bench text. Returns one dict per pair with ``function_named`` /
    ``file_named`` = None when the train item has no such target (the check does not apply).
    """
    cache: dict[str, Targets] = {}
    rows = []
    for train_id, bench_id in pairs:
        if train_id not in cache:
            value = train_targets.get(train_id)
            cache[train_id] = value if isinstance(value, Targets) else extract_targets(value)
        t = cache[train_id]
        text = bench_texts.get(bench_id)
        got = names_in(t, text)
        rows.append({
            "train_id": train_id,
            "bench_id": bench_id,
            "functions": ";".join(t.functions),
            "files": ";".join(t.files),
            "named_functions": ";".join(got["functions"]),
            "named_files": ";".join(got["files"]),
            "function_named": (bool(got["functions"]) if t.functions else None) if text is not None else None,
            "file_named": (bool(got["files"]) if t.files else None) if text is not None else None,
            "bench_text": text is not None,
        })
    return rows
