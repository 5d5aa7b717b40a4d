"""The CI formats on stdout (`--format sarif|junit`) of audit, compare and filter: which writer of
`overlap.outputs.sarif` / `overlap.outputs.junit` gets what. The writers are imported inside the functions:
that keeps `overlap --help` fast, it dodges no cycle."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import InputError
from .options import CiFormat


def print_audit(report, fmt: CiFormat, fail_on: str | None) -> None:
    """An audit report (`AuditReport`) as SARIF or JUnit XML on stdout."""
    from ..audit.catalog import CHECK_DESCRIPTIONS
    from ..audit.model import CHECK_ROUTE, report_dict
    from ..outputs.junit import audit_junit
    from ..outputs.sarif import audit_sarif, sarif_json

    document = report_dict(report)
    if fmt == CiFormat.sarif:
        text = sarif_json(audit_sarif(document, CHECK_DESCRIPTIONS, CHECK_ROUTE, Path.cwd()))
    else:
        text = audit_junit(document, fail_on)
    sys.stdout.write(text)


def print_comparison(result, summary: dict, fmt: CiFormat, crossed: list[str] | None, out: Path | None,
                     command: str) -> None:
    """A compare result (a filter's comparison too) as SARIF (one result per contaminated benchmark item) or
    JUnit XML (one test case per benchmark) on stdout. `crossed`: the benchmarks at or above `--fail-on`
    (None without it)."""
    from ..outputs.junit import compare_junit
    from ..outputs.sarif import compare_sarif, contaminated_items, sarif_json

    items = contaminated_items(result)
    if fmt == CiFormat.sarif:
        see = str(out / "pairs.csv") if out is not None and (out / "pairs.csv").exists() else None
        text = sarif_json(compare_sarif(items, summary.get("tool") or {}, result.train.name, crossed, Path.cwd(),
                                        see=see))
    else:
        text = compare_junit(summary, items, crossed, command=command)
    sys.stdout.write(text)


def refuse_for_batch(fmt: CiFormat) -> None:
    """SARIF and JUnit cover one audited target's report; an image set's document is JSON."""
    if fmt in (CiFormat.sarif, CiFormat.junit):
        raise InputError(f"--format {fmt.value}: for one audited target; with --targets or --benchmark use "
                         "--format json (or --out DIR for every target's report)")
