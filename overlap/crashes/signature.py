"""The CrashSignature record every crash parser returns, and the input handling they share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .frames import Frame, pick_frames
from .inputs import is_missing, unwrap_file

DEFAULT_MAX_REPORT_CHARS = 1_000_000


MAX_LINE = 16_384  # longer lines are cut before parsing (real frames with templates stay far below)


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


def bad_signature(source: str, status: str, reason: str, truncated: bool = False) -> CrashSignature:
    return CrashSignature(source=source, status=status, reason=reason, truncated=truncated)


def coerce_text(value: object) -> tuple[str | None, str | None]:
    """(text, None), or (None, why) for a missing value or a fetched file without text."""
    value, why = unwrap_file(value)
    if why is not None:
        return None, why
    if is_missing(value):
        return None, None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace"), None
    return str(value), None


def text_or_status(value: object, source: str, noun: str) -> str | CrashSignature:
    """The text to parse, or the `missing` / `empty` signature every parser returns for no text."""
    text, why = coerce_text(value)
    if text is None:
        return bad_signature(source, "missing", why or f"no {noun} text")
    if not text.strip():
        return bad_signature(source, "empty", f"{noun} text is blank")
    return text


def signature_from_frames(source: str, frames: Sequence[Frame], **fields) -> CrashSignature:
    """A usable signature whose top frame (first project or harness frame) and first symbolised frame
    are picked from `frames`."""
    top, first = pick_frames(frames)
    return CrashSignature(source=source, frames=tuple(frames), top_frame=top, first_frame=first, **fields)
