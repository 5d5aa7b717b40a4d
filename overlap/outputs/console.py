"""Stdout renderings of a compare summary: a rich table, Markdown, JSON, CSV."""

from __future__ import annotations

from typing import Any

from .report import dumps_json, to_csv_text

SUMMARY_ROWS = (
    ("bench items", lambda b: b["bench_items"]),
    ("shared canonical keys", lambda b: b["shared_keys"]),
    ("pairs by how they matched", lambda b: pairs_cell(b)),
    ("train items matched", lambda b: b["train_items_matched"]),
    ("bench items matched", lambda b: f"{b['bench_items_matched']} ({b['bench_share']:.1%})"),
    ("plain id join: bench items", lambda b: f"{b['plain_join']['bench_items_matched']} "
                                             f"({b['plain_join']['bench_share']:.1%})"),
    ("found only by normalisation", lambda b: b["found_only_by_normalisation"]["bench_items"]),
    ("bench duplicates (groups / items)", lambda b: "{} / {}".format(
        b["dataset"]["duplicates"]["groups"], b["dataset"]["duplicates"]["items"])),
)


# How a pair matched (pairs.csv `match_type`) → its words in the summary table; other kinds follow by name.
MATCH_TYPE_WORDS = {"exact": "exact", "translated": "translated", "fix": "by fix"}


def pairs_cell(bench: dict[str, Any]) -> str:
    """`100 (0 exact / 80 translated / 20 by fix)`: every kind of pair, so the parts add up to the total
    (exact and translated always shown, the others when there are any)."""
    by_type = dict(bench.get("pairs_by_match_type") or {})
    parts = [f"{by_type.pop(k, 0)} {MATCH_TYPE_WORDS[k]}" for k in ("exact", "translated")]
    parts += [f"{n} {MATCH_TYPE_WORDS.get(k, k)}" for k, n in sorted(by_type.items(), key=lambda kv: kv[0] != "fix")]
    return f"{bench['pairs']} ({' / '.join(parts)})"


def summary_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the summary table: one column per benchmark."""
    header = ["", *[b["bench"] for b in summary["benches"]]]
    train = summary["train"]
    rows = [[f"train items ({train['name']})", *[str(train["items"]) for _ in summary["benches"]]]]
    rows += [[label, *[str(get(b)) for b in summary["benches"]]] for label, get in SUMMARY_ROWS]
    rows.append(["train duplicates (groups / items)",
                 *[f"{train['duplicates']['groups']} / {train['duplicates']['items']}" for _ in summary["benches"]]])
    for bench_index, bench in enumerate(summary["benches"]):
        for side, key in (("bench", "by_subset"), ("train", "train_by_subset")):
            for subset, counts in bench.get(key, {}).items():
                name = bench["bench"] if side == "bench" else train["name"]
                cells = [""] * len(summary["benches"])
                cells[bench_index] = (f"{counts[side + '_items_matched']}/{counts[side + '_items']} "
                                      f"({counts['plain_' + side + '_items_matched']})")
                label = f"  {subset} matched (plain)" if side == "bench" else f"  {name}:{subset} matched (plain)"
                rows.append([label, *cells])
    rows += _section_rows(summary)
    return header, rows


def _section_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Rows of optional per-benchmark sections (chance baselines, inclusion test), one column per bench."""
    from ..stats.wiring import table_rows
    from ..text.attach import text_rows

    benches = summary["benches"]
    labels: dict[str, list[str]] = {}
    for index, bench in enumerate(benches):
        for key in ("baselines", "inclusion"):
            block = bench.get(key)
            if isinstance(block, dict) and ("uniform" in block or "inclusion" in block):
                for label, text in table_rows(block):
                    labels.setdefault(label, [""] * len(benches))[index] = text
    for index, bench in enumerate(benches):
        rows = _swe_rows(bench.get("swe")) + _evidence_rows(bench.get("evidence")) + text_rows(bench.get("text"))
        for label, text in rows:
            labels.setdefault(label, [""] * len(benches))[index] = text
    rows = [[label, *cells] for label, cells in labels.items()]
    status = summary.get("baselines", {})
    if status.get("status") == "not_run":
        rows.append(["chance baselines", *["not run: pool not available (see summary.json)"] * len(benches)])
    return rows


def _evidence_rows(block: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Evidence rows: fix relations, pairs found by fix alone, crash grades beside the control rate."""
    if not isinstance(block, dict):
        return []
    rows = []
    fix = block.get("fix", {})
    if fix.get("status") == "ran":
        rows.append(("pairs sharing the fix", f"{fix['sharing_fix']}/{fix['pairs']}"))
    elif fix.get("status") == "not_run" and fix.get("reason"):
        rows.append(("fix evidence", f"not run: {fix['reason']}"))
    join = block.get("fix_join", {})
    if join.get("status") == "ran":
        rows.append(("pairs found by fix alone", str(join["pairs_added"])))
    crash = block.get("crash", {})
    if crash.get("status") == "ran" and crash.get("pairs"):
        control = crash["control"]
        strong = crash["rates"].get("type_and_frame", 0.0)
        base = control["rates"].get("type_and_frame", 0.0)
        rows.append(("crash type+frame: matched / control",
                     f"{strong:.0%} / {base:.0%} ({control['pairs']} control pairs)"))
    elif crash.get("status") == "not_run" and crash.get("reason"):
        rows.append(("crash evidence", f"not run: {crash['reason']}"))
    related = block.get("related", {})
    if related.get("status") == "ran" and related.get("pairs"):
        rows.append(("related bugs (not counted)", str(related["pairs"])))
    return rows


def _swe_rows(block: dict[str, Any] | None) -> list[tuple[str, str]]:
    """SWE rows: bench items each key finds, the counted overlap, repo presence."""
    if not isinstance(block, dict) or "found_by_key" not in block:
        return []
    found = block["found_by_key"]
    overlap = block["overlap"]
    presence = block.get("repo_presence", {})
    rows = [
        ("repo+PR: exact / folded / canonical", "{} / {} / {}".format(
            found.get("repo_pr_exact", 0), found.get("repo_pr_casefold", 0), found.get("repo_pr", 0))),
        ("base+PR / base only", f"{found.get('base_pr', 0)} / {found.get('base', 0)}"),
        ("SWE overlap (counted pairs)", f"{overlap['bench_items']} ({overlap['share']:.1%})"),
    ]
    other = overlap.get("bench_items_by_kind", {})
    if other.get("same_pr_other_base") or other.get("same_pr_base_unknown"):
        rows.append(("  same PR, other/unknown base", "{} / {}".format(
            other.get("same_pr_other_base", 0), other.get("same_pr_base_unknown", 0))))
    if presence:
        rows.append(("bench repos present in train", f"{presence['present_in_train']}/{presence['bench_repos']}"))
    return rows


def render_markdown(summary: dict[str, Any]) -> str:
    header, rows = summary_rows(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def print_table(summary: dict[str, Any], console) -> None:
    from rich.table import Table

    header, rows = summary_rows(summary)
    table = Table(title=f"overlap: {summary['train']['name']} vs {', '.join(header[1:])}", title_justify="left")
    table.add_column(header[0], style="bold")
    for name in header[1:]:
        table.add_column(name, justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def render(summary: dict[str, Any], pairs, fmt: str) -> str | None:
    """Text for stdout in `fmt` (json, csv, md), or None for the rich table."""
    if fmt == "json":
        return dumps_json(summary)
    if fmt == "csv":
        return to_csv_text(pairs)
    if fmt == "md":
        return render_markdown(summary)
    return None
