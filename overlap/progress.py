"""Whether progress may be shown: on stderr, only when it is a terminal and the output is not JSON."""

from __future__ import annotations

import contextlib
import sys

_quiet = False


def set_quiet(quiet: bool = True) -> None:
    """Turn progress off for this process (the CLI does so for `--format json`)."""
    global _quiet
    _quiet = quiet


def progress_enabled() -> bool:
    return not _quiet and sys.stderr.isatty()


def _stderr_console():
    from rich.console import Console  # imported here: keeps `overlap --help` fast

    return Console(stderr=True)


_active: list = []  # the spinners shown now, innermost last: `stage` names the step under the newest


def status(message: str):
    """A spinner with `message` on stderr while a command runs (nothing when progress is off). The library
    names its steps with `stage`, which shows under the newest spinner."""
    if not progress_enabled():
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def shown():
        with _stderr_console().status(message) as spinner:
            _active.append((spinner, message))
            try:
                yield spinner
            finally:
                _active.pop()

    return shown()


def stage(step: str) -> None:
    """Name the step a long command is in (`compare: joining ids`); a no-op without a spinner, so library
    code calls it freely."""
    if _active:
        spinner, message = _active[-1]
        spinner.update(f"{message}: {step}")


class RowsBar:
    """A progress display for a scan, on stderr: rows and bytes read so far and, when `total` (rows) is known
    before the scan (parquet footers, a table's length), a bar with the share done and the time left.
    `update(rows, bytes)` is the scanner's callback (counts of the chunk just read)."""

    def __init__(self, label: str, total: int | None = None) -> None:
        self.label = label
        self.total = total
        self._progress = None
        self._task = None
        self.rows = self.bytes = 0

    def __enter__(self) -> RowsBar:
        if progress_enabled():
            from rich.progress import (  # imported here: keeps `overlap --help` fast
                BarColumn,
                Progress,
                SpinnerColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            if self.total is None:
                columns = [TextColumn("{task.fields[rows]:,} rows, {task.fields[mb]:,.0f} MB"), TimeElapsedColumn()]
            else:
                columns = [TaskProgressColumn(), TextColumn("{task.fields[rows]:,} of {task.total:,.0f} rows, "
                                                            "{task.fields[mb]:,.0f} MB"),
                           TimeElapsedColumn(), TextColumn("·"), TimeRemainingColumn(), TextColumn("left")]
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), *columns,
                                      console=_stderr_console(), transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task(self.label, total=self.total, rows=0, mb=0.0)
        return self

    def update(self, rows: int, nbytes: int) -> None:
        self.rows += int(rows)
        self.bytes += int(nbytes)
        if self._progress is not None:
            self._progress.update(self._task, completed=self.rows, rows=self.rows, mb=self.bytes / 1e6)

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)


MAX_PROBLEM_LINES = 8


def problem_lines(datasets, see: str | None = None) -> list[str]:
    """Input problems of each dataset as stderr lines: one per problem kind with its count and first
    example, at most MAX_PROBLEM_LINES, then where the rest is. `datasets`: (name, problems) pairs; a
    problem is a `Problem` or its dict."""
    lines = []
    for name, problems in datasets:
        for p in problems:
            p = p if isinstance(p, dict) else p.__dict__
            first = " ".join(str(p.get("example") or "").split())
            example = f" (first: {first[:80]}{'…' if len(first) > 80 else ''})" if first else ""
            lines.append(f"{name}: {p['count']:,} × {p['what'].replace('_', ' ')}{example}")
    if not lines:
        return []
    shown = lines[:MAX_PROBLEM_LINES]
    more = f"{len(lines) - len(shown)} more; " if len(lines) > len(shown) else ""
    tail = f"… {more}see {see}" if see else (f"… {more.rstrip('; ')}" if more else "")
    return ["input problems (counted, not fatal):", *shown, *([tail] if tail else [])]
