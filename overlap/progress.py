"""Whether progress may be shown: on stderr, only when it is a terminal and the output is not JSON."""

from __future__ import annotations

import sys

_quiet = False


def set_quiet(quiet: bool = True) -> None:
    """Turn progress off for this process (the CLI does so for `--format json`)."""
    global _quiet
    _quiet = quiet


def progress_enabled() -> bool:
    return not _quiet and sys.stderr.isatty()
