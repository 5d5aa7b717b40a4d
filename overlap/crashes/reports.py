"""Sanitizer reports (ASan, MSan, UBSan, LSan, libFuzzer, Rust panics) -> CrashSignature.

Crash type from the `SUMMARY:` line, else the `ERROR:`/`WARNING:` headline; a generic summary
(`undefined-behavior`, `deadly signal`) is refined by the `runtime error:` / `panicked at` line. Frames
from the first stack after the headline (sanitizer `#N 0x... in f file:line` lines, else a Rust
`stack backtrace:`, else the SUMMARY's `in f`).
"""

from __future__ import annotations

import re

from .crash_types import canonical_crash_type, ubsan_type
from .frames import OFFSET_RE, Frame, make_frame, pick_frames
from .signature import DEFAULT_MAX_REPORT_CHARS, MAX_LINE, CrashSignature, bad_signature, text_or_status

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


FRAME_LINE_RE = re.compile(r"^[ \t]*#\d+[ \t]+0x[0-9a-fA-F]+", re.MULTILINE)


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
    if rest.startswith("/") and OFFSET_RE.search(rest):  # `in /out/fuzzer+0x1234`: a module, no symbol
        return "", None, None, OFFSET_RE.sub("", rest)
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
        frames.append(make_frame(idx, function, file, line, module))
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
        frames.append(make_frame(int(m.group("idx")), m.group("func"), file, line))
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


def parse_sanitizer_report(value: object, *, max_chars: int = DEFAULT_MAX_REPORT_CHARS) -> CrashSignature:
    """Parse a sanitizer report (SEC-bench `sanitizer_report`, CyberGym `error.txt`; str, bytes or a
    fetched file with `.text`/`.reason`). Never raises.

    Reports over `max_chars` keep their first and last halves (the crash is usually at the end of a
    fuzzer log) and are marked `truncated`.
    """
    source = "sanitizer_report"
    text = text_or_status(value, source, "report")
    if isinstance(text, CrashSignature):
        return text
    text, truncated = _cap_text(text, max_chars)
    text = _ANSI_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", ""))
    lines = [line[:MAX_LINE] for line in text.split("\n")]

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
            frames = [make_frame(0, func.strip(), *(loc or (None, None)))]

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

    top, first = pick_frames(frames)
    file = top.file if top else None
    if file is None and runtime is not None and runtime.group("loc"):
        file = runtime.group("loc")
    if file is None and panic is not None:
        m = re.search(r"(?P<file>[^\s',:]+\.rs):\d+", panic.group("rest"))
        if m and not m.group("file").startswith("/rustc/"):
            file = m.group("file")
    if crash_type is None and not frames:
        return bad_signature(
            source, "unparseable", "no sanitizer headline, SUMMARY, runtime error or stack found", truncated
        )
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
