"""How numbers read in printed tables and reports: one helper per concept, so the console table, report.md
and report.html say the same thing the same way (`1,507`, `1 row` / `2 rows`, `6 of 8 (75.0%)`,
`95% range 0–3`, `P(X ≥ 6) = 3.8e-05`). Every cell should read as a sentence fragment without the docs."""

from __future__ import annotations

from typing import Any

from ...words import IRREGULAR, count, plural, word_for  # noqa: F401 - re-exported: the cells' vocabulary


def share(x: float | None) -> str:
    """`70.0%`, or `n/a`."""
    return "n/a" if x is None else f"{x:.1%}"


def part_of(k: Any, n: Any, fraction: float | None = None, word: str = "") -> str:
    """`6 of 8`, `7 of 10 bench items (70.0%)`: a part of a whole, with its share when given."""
    text = f"{count(k)} of {plural(n, word) if word else count(n)}"
    return text if fraction is None else f"{text} ({share(fraction)})"


def p_value(p: float | None) -> str:
    """A probability: two significant figures, scientific below 1e-3."""
    if p is None:
        return "n/a"
    if p == 0:
        return "0"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.2g}"


def tail(observed: Any, p: float | None, upper: bool = True, approx: bool = False) -> str:
    """`P(X ≥ 6) = 3.8e-05`: the chance of a count at least (or at most) the observed one."""
    return f"P(X {'≥' if upper else '≤'} {count(observed)}) {'≈' if approx else '='} {p_value(p)}"


def range95(interval: Any, level: float | None = 0.95) -> str:
    """`95% range 0–3` (the central interval of a chance distribution), or "" without one."""
    if not (isinstance(interval, list | tuple) and len(interval) == 2):
        return ""
    return f"{(level or 0.95):.0%} range {count(interval[0])}–{count(interval[1])}"


def null_cell(model: dict[str, Any]) -> str:
    """One chance null in words: `observed 6, expected 1.2 ± 0.9 (95% range 0–3), z = 5.11, P(X ≥ 6) = 3.8e-05`;
    the lower tail is added when the observed count is below what chance gives."""
    observed, expected = model.get("observed"), model.get("expected")
    parts = [f"observed {count(observed)}"]
    if expected is not None:
        spread = f" ± {model['sd']:.1f}" if model.get("sd") is not None else ""
        interval = range95(model.get("expected_interval"), model.get("interval_level"))
        parts.append(f"expected {expected:.1f}{spread}" + (f" ({interval})" if interval else ""))
    if model.get("z") is not None:
        parts.append(f"z = {model['z']:.2f}")
    p = model.get("p_upper", model.get("p"))
    parts.append(tail(observed, p))
    if model.get("p_lower") is not None and expected is not None and observed is not None and observed < expected:
        parts.append(tail(observed, model["p_lower"], upper=False))
    return ", ".join(parts)


def permutation_cell(check: dict[str, Any]) -> str:
    """`P(X ≥ 6) ≈ 4.0e-05 ± 2.0e-05 by 100,000 draws (seed 0), agrees with the exact value`."""
    if not check.get("draws"):
        return "not run"
    se = check.get("p_upper_se")
    verdict = {True: ", agrees with the exact value", False: ", DISAGREES with the exact value"}
    return (f"{tail(check.get('observed', 'observed'), check.get('p_upper'), approx=True)} ± "
            f"{p_value(se) if se else '0'} by {plural(check['draws'], 'draw')} (seed {check.get('seed')})"
            f"{verdict.get(check.get('agrees_with_exact'), '')}")


def groups_cell(groups: Any, items: Any, repeated: Any = 0) -> str:
    """Duplicates inside one dataset: `none`, `2 items in 1 group` (distinct items sharing a key), and the rows
    that repeat an earlier row's id (`1 duplicate id`, as the input-problem line on stderr counts them)."""
    parts = [f"{plural(items, 'item')} in {plural(groups, 'group')}"] if groups else []
    if repeated:
        parts.append(f"{plural(repeated, 'duplicate id')} ({word_for(repeated, 'a row repeats', 'rows repeat')} "
                     "an earlier row's id)")
    return "; ".join(parts) or "none"


def duplicates_cell(block: dict[str, Any]) -> str:
    """`groups_cell` of a summary's `duplicates` block (`repeated_ids` absent in summaries of older versions)."""
    return groups_cell(block.get("groups", 0), block.get("items", 0), block.get("repeated_ids", 0))


def title_of(summary: dict) -> str:
    """`overlap: TRAIN vs BENCH, …` with each dataset as selected (`cybergym:arvo`) when recorded."""
    labels = (summary.get("parameters") or {}).get("labels")
    if labels:
        return f"overlap: {labels[0]} vs {', '.join(map(str, labels[1:]))}"
    benches = ", ".join(str(b.get("bench")) for b in summary.get("benches", []))
    return f"overlap: {(summary.get('train') or {}).get('name', 'train')} vs {benches}"
