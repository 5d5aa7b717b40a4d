"""`--fail-on N|P%` of compare and filter: the threshold, which benchmarks reach it, and the exit it causes.

A benchmark reaches it with at least N matched items (or P percent of its items), and at least one: the
filter writes its split first, so a CI step fails on a contaminated training set and still has the clean split.
"""

from __future__ import annotations

import math
import re
from typing import Annotated

import typer

from ..outputs.atomic import printable
from ..words import plural

_FAIL_ON = re.compile(r"(?P<count>[0-9]{1,16})|(?P<share>[0-9]{1,3}(?:\.[0-9]{1,6})?)%", re.ASCII)


def parse_fail_on(value: str | None) -> tuple[float, bool] | None:
    """`--fail-on N` (a count of bench items) or `P%` (a share, 0–100%) → (limit, is_share)."""
    if value is None:
        return None
    text = value.strip()
    usage = "give a count of bench items (e.g. 1) or a share from 0% to 100% (e.g. 5%)"
    match = _FAIL_ON.fullmatch(text)
    if match is None:
        raise typer.BadParameter(f"{value!r}: {usage}")
    limit, is_share = (float(match["share"]) / 100, True) if match["share"] else (float(match["count"]), False)
    if not math.isfinite(limit) or limit > (1 if is_share else 1e15):
        raise typer.BadParameter(f"{value!r}: {usage}")
    return limit, is_share


def _check_fail_on(value: str | None) -> str | None:
    parse_fail_on(value)
    return value


FailOnOption = Annotated[str | None, typer.Option(
    "--fail-on", metavar="N|P%", callback=_check_fail_on,
    help="Exit 1 when a benchmark has at least N matched items (or P percent of its items); each one is named "
         "on stderr.")]


def benches_crossed(summary: dict, fail_on: str | None) -> list[str] | None:
    """The benchmarks at or above `--fail-on`; None when no threshold was given."""
    return None if fail_on is None else [name for name, _ in _crossing(summary, fail_on)]


def _crossing(summary: dict, fail_on: str | None) -> list[tuple[str, str]]:
    """(benchmark, line) per benchmark at or above `--fail-on`, e.g. `cybergym: 7 of 10 bench items matched
    (70.0%) ≥ --fail-on 5%`; empty when none is (or no threshold was given)."""
    threshold = parse_fail_on(fail_on)
    if threshold is None:
        return []
    limit, is_share = threshold
    lines = []
    for bench in summary["benches"]:
        matched = bench["bench_items_matched"]
        observed = bench["bench_share"] if is_share else matched
        if observed >= limit and matched > 0:
            lines.append((bench["bench"], f"{bench['bench']}: {matched} of {plural(bench['bench_items'], 'bench item')}"
                                          f" matched ({bench['bench_share']:.1%}) ≥ --fail-on {fail_on.strip()}"))
    return lines


def exit_if_crossed(summary: dict, fail_on: str | None) -> None:
    """Name each benchmark at or above `--fail-on` on stderr and exit 1; nothing when none is."""
    crossed = _crossing(summary, fail_on)
    for _, line in crossed:
        typer.echo(f"overlap: {printable(line)}", err=True)
    if crossed:
        raise typer.Exit(1)
