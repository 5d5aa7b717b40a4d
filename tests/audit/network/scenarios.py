"""The network route's fix scenarios (texts of a file before, with and without the fix, release records and the
first release that carries the fix), shared by its tests; a module of its own, not the conftest, since
``from conftest import`` finds whichever conftest comes first on the path when several test folders run."""

from __future__ import annotations

import datetime as dt
import difflib
import os
from dataclasses import dataclass

UNFIXED = '''def add(a, b):
    """The sum of two numbers."""
    return a - b


def clamp(value, lower, upper):
    """value, kept between lower and upper."""
    return value
'''
FIXED = '''def add(a, b):
    """The sum of two numbers."""
    result_of_addition = a + b
    return result_of_addition


def clamp(value, lower, upper):
    """value, kept between lower and upper."""
    bounded_value = max(lower, min(value, upper))
    return bounded_value
'''
# the first hunk only: a release that carries part of the fix
PARTIAL = FIXED.replace("    bounded_value = max(lower, min(value, upper))\n    return bounded_value\n",
                        "    return value\n")
# the fix as a formatter rewraps it: every token, not every line
REFORMATTED = FIXED.replace("    bounded_value = max(lower, min(value, upper))\n",
                            "    bounded_value = max(\n        lower, min(value, upper)\n    )\n").replace(
    "    result_of_addition = a + b\n", "    result_of_addition = (\n        a + b\n    )\n")
TEXTS = {None: UNFIXED, "full": FIXED, "partial": PARTIAL, "tokens": REFORMATTED}
CREATED = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def fix_patch(path: str) -> str:
    lines = difflib.unified_diff(UNFIXED.splitlines(True), FIXED.splitlines(True), f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


@dataclass(frozen=True)
class Rel:
    version: str
    day: float  # upload time, days after CREATED (negative: before the task was opened)
    fix: str | None  # None | partial | full | tokens: what the release's file holds
    yanked: str | None = None
    wheel_only: bool = False

    @property
    def when(self) -> dt.datetime:
        return CREATED + dt.timedelta(days=self.day)


def series(version: str) -> tuple[int, ...]:
    from packaging.version import Version

    return (Version(version).release + (0, 0, 0))[:3]


def expected_first(releases: list[Rel], base: str) -> Rel | None:
    """The documented rule, written plainly: among releases at or after the base's series, or uploaded after the
    task was opened, the lowest version whose file holds the fix (lines or tokens)."""
    from packaging.version import Version

    ok = [r for r in releases if r.fix in ("full", "tokens") and (series(r.version) >= series(base) or r.day > 0)]
    return min(ok, key=lambda r: Version(r.version)) if ok else None


def stamp(path, when: dt.datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))
