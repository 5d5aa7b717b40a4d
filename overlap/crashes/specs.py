"""One-line crash specs (MiMo `prompt[0].content`) and ClusterFuzz text (`Crash Type:` / `Crash State:`)
-> CrashSignature; `parse_crash` picks the parser by format."""

from __future__ import annotations

import re

from .crash_types import canonical_crash_type
from .frames import make_frame
from .reports import FRAME_LINE_RE, parse_sanitizer_report
from .signature import (
    DEFAULT_MAX_REPORT_CHARS,
    MAX_LINE,
    CrashSignature,
    bad_signature,
    coerce_text,
    signature_from_frames,
    text_or_status,
)

_SPEC_TOOL_RE = re.compile(r"(\w*Sanitizer|libFuzzer) *: *$")


_SPEC_FUNC_RE = re.compile(
    r"in function +`(?P<func>[^`\n]{0,4000})`(?: +in file +`(?P<file>[^`\n]{0,4000})`)?"
)


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
                return {
                    "tool": tool,
                    "type": kind,
                    "func": m.groupdict().get("func"),
                    "file": m.group("file"),
                }
            at = text.find(marker, at + 1)
    return None


def parse_crash_spec(value: object) -> CrashSignature:
    """Parse MiMo's one-line crash spec (`prompt[0].content`):
    ``AddressSanitizer: SEGV in function `f` in file `p/x.c` `` -> type `segv`, function `f`, file.
    The crash type is the text between `Sanitizer: ` and ` in function`."""
    source = "spec"
    text = text_or_status(value, source, "spec")
    if isinstance(text, CrashSignature):
        return text
    groups = _spec_parts(text[:DEFAULT_MAX_REPORT_CHARS])
    if groups is None:
        return bad_signature(source, "unparseable", "no `<Sanitizer>: <type> in function `...`` spec found")
    raw_type = (groups.get("type") or "").strip() or None
    file = (groups.get("file") or "").strip() or None
    func = (groups.get("func") or "").strip()
    return signature_from_frames(
        source,
        [make_frame(0, func, file)] if func else [],
        sanitizer=groups.get("tool"),
        crash_type=canonical_crash_type(raw_type),
        raw_type=raw_type,
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
    text = text_or_status(value, source, "ClusterFuzz")
    if isinstance(text, CrashSignature):
        return text
    text = text[:DEFAULT_MAX_REPORT_CHARS].replace("\r\n", "\n")
    tm = _CF_TYPE_RE.search(text)
    sm = _CF_STATE_RE.search(text)
    if not tm and not sm:
        return bad_signature(source, "unparseable", "no `Crash Type:` or `Crash State:` line")
    state: list[str] = []
    if sm:
        if sm.group("inline").strip():
            state.append(sm.group("inline").strip()[:MAX_LINE])
        for line in text[sm.end() :].split("\n")[1:]:
            s = line.strip()
            if not s or s.startswith("```") or _CF_KEY_RE.match(s) or len(state) >= 10:
                break
            state.append(s[:MAX_LINE])
    raw_type = tm.group("type").strip()[:400] if tm and tm.group("type").strip() else None
    access = None
    if raw_type and (am := re.search(r"\b(READ|WRITE)\b", raw_type)):
        access = am.group(1)
    san = _CF_SAN_RE.search(text)
    return signature_from_frames(
        source,
        [make_frame(i, s) for i, s in enumerate(state)],
        sanitizer=san.group("san").strip() if san else None,
        crash_type=canonical_crash_type(raw_type),
        raw_type=raw_type,
        access=access,
        state=tuple(state),
        reason="" if state else "no crash state",
    )


def parse_crash(value: object) -> CrashSignature:
    """Parse whichever format the text is: ClusterFuzz (`Crash Type:`/`Crash State:`), a one-line spec
    (`... in function `f``, no stack), else a sanitizer report."""
    if isinstance(value, CrashSignature):
        return value
    text, _ = coerce_text(value)
    if text is not None:
        head = text[:DEFAULT_MAX_REPORT_CHARS]
        if _CF_TYPE_RE.search(head) or _CF_STATE_RE.search(head):
            return parse_clusterfuzz(text)
        if "in function `" in head and not FRAME_LINE_RE.search(head):
            return parse_crash_spec(text)
    return parse_sanitizer_report(value)
