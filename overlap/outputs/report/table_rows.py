"""The rows of the tables more than one writer shows, as text cells: the compare summary table (one column per
benchmark; the console table, the stdout Markdown and report.md/html all show it) and the two matrix tables
(`overlap matrix` on the console and as Markdown). `markdown_table` is the one pipe-table layout of both.
"""

from __future__ import annotations

from typing import Any

from ...model import PAIR_KINDS
from ...results import MatrixResult
from .cell_text import count, duplicates_cell, null_cell, part_of, permutation_cell, plural, share

# The summary table's first header: its rows say what each benchmark column counts.
FIRST_HEADER = "measure"

SUMMARY_ROWS = (
    ("bench items", lambda b: count(b["bench_items"])),
    ("shared canonical keys", lambda b: count(b["shared_keys"])),
    ("pairs by how they matched", lambda b: pairs_cell(b)),
    ("train items matched", lambda b: count(b["train_items_matched"])),
    ("bench items matched", lambda b: part_of(b["bench_items_matched"], b["bench_items"], b["bench_share"])),
    ("  by what matched", lambda b: pair_kinds_cell(b.get("bench_items_by_pair_kind") or {})),
    ("bench items matched by a plain id join", lambda b: part_of(
        b["plain_join"]["bench_items_matched"], b["bench_items"], b["plain_join"]["bench_share"])),
    ("found only by normalisation", lambda b: plural(b["found_only_by_normalisation"]["bench_items"], "bench item")),
    ("bench duplicates", lambda b: duplicates_cell(b["dataset"]["duplicates"])),
)


# How a pair matched (pairs.csv `match_type`) → its words in the summary table; other kinds follow by name.
MATCH_TYPE_WORDS = {"exact": "exact", "translated": "translated", "fix": "by fix"}


# Pair kinds → words of the summary table's "by what matched" row.
PAIR_KIND_WORDS = {"same_ossfuzz": "OSS-Fuzz issue", "same_cve": "CVE", "same_fix_commit": "fix commit",
                   "same_fix": "same fix", "same_pr_same_base": "PR at its base",
                   "same_pr_other_base": "PR at another base", "same_pr_base_unknown": "PR, base unknown",
                   "same_base_identical_fix_no_pr": "base + identical fix"}


def pair_kinds_cell(by_kind: dict[str, int]) -> str:
    """`8 OSS-Fuzz issue, 1 PR at its base`: the kinds that matched something (a bench item matched by two
    kinds is in both), or `none`."""
    parts = [f"{count(n)} {PAIR_KIND_WORDS.get(k, k)}" for k, n in by_kind.items() if n]
    return ", ".join(parts) or "none"


def pairs_cell(bench: dict[str, Any]) -> str:
    """`100 pairs: 0 exact, 80 translated, 20 by fix`: every kind of pair, so the parts add up to the total
    (exact and translated always shown, the others when there are any)."""
    by_type = dict(bench.get("pairs_by_match_type") or {})
    parts = [f"{count(by_type.pop(k, 0))} {MATCH_TYPE_WORDS[k]}" for k in ("exact", "translated")]
    parts += [f"{count(n)} {MATCH_TYPE_WORDS.get(k, k)}"
              for k, n in sorted(by_type.items(), key=lambda kv: kv[0] != "fix")]
    return f"{plural(bench['pairs'], 'pair')}: {', '.join(parts)}"


def summary_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the summary table: one column per benchmark."""
    header = [FIRST_HEADER, *[b["bench"] for b in summary["benches"]]]
    train = summary["train"]
    rows = [[f"train items ({train['name']})", *[count(train["items"]) for _ in summary["benches"]]]]
    rows += [[label, *[get(b) for b in summary["benches"]]] for label, get in SUMMARY_ROWS]
    duplicates = duplicates_cell(train["duplicates"])
    rows.append(["train duplicates", *[duplicates for _ in summary["benches"]]])
    for bench_index, bench in enumerate(summary["benches"]):
        for side, key in (("bench", "by_subset"), ("train", "train_by_subset")):
            for subset, counts in bench.get(key, {}).items():
                name = bench["bench"] if side == "bench" else train["name"]
                cells = [""] * len(summary["benches"])
                cells[bench_index] = (f"{part_of(counts[side + '_items_matched'], counts[side + '_items'])} "
                                      f"({count(counts['plain_' + side + '_items_matched'])} by plain join)")
                label = (f"  {subset}: bench items matched" if side == "bench"
                         else f"  {name}:{subset}: train items matched")
                rows.append([label, *cells])
    rows += _section_rows(summary)
    return header, rows


def _section_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Rows of optional per-benchmark sections (chance baselines, inclusion test, SWE identity, evidence,
    text), one column per bench."""
    benches = summary["benches"]
    labels: dict[str, list[str]] = {}
    for index, bench in enumerate(benches):
        rows = []
        for key in ("baselines", "inclusion"):
            rows += _chance_rows(bench.get(key))
        rows += (_swe_rows(bench.get("swe"), bench["bench_items"]) + _evidence_rows(bench.get("evidence"))
                 + _text_rows(bench.get("text")))
        for label, text in rows:
            labels.setdefault(label, [""] * len(benches))[index] = text
    rows = [[label, *cells] for label, cells in labels.items()]
    status = summary.get("baselines", {})
    if status.get("status") == "not_run":
        rows.append(["chance baselines", *["not run: pool not available (see summary.json)"] * len(benches)])
    return rows


def _chance_rows(block: Any) -> list[tuple[str, str]]:
    """A cyber `baselines` block (the pool, what is outside it, each null, the permutation check) or a SWE
    `inclusion` block (PRs, included rates, the within-repo null, the permutation check)."""
    if not isinstance(block, dict):
        return []
    if "inclusion" in block:
        test = block["inclusion"]
        return [
            ("inclusion test PRs", f"{plural(block['bench_prs'], 'bench PR')}, "
                                   f"{plural(block['reference_prs'], 'reference PR')}"),
            ("  share included", f"bench {share(test.get('bench_rate'))}, "
                                 f"reference {share(test.get('reference_rate'))}"),
            ("  chance, within repo", null_cell(test)),
            ("  permutation check", permutation_cell(block["permutation"])),
        ]
    if "uniform" not in block:
        return []
    bench, uniform = block["bench"], block["uniform"]
    outside = f"{plural(bench['ids_outside_pool'], 'bench id')} ({count(block['shared_outside_pool'])} shared)"
    if bench.get("items_without_ossfuzz_id"):
        outside += f"; {plural(bench['items_without_ossfuzz_id'], 'bench item')} without an OSS-Fuzz id"
    rows = [
        ("chance pool", f"{plural(uniform['pool'], 'id')}: {count(uniform['train_in_pool'])} train, "
                        f"{count(uniform['bench_in_pool'])} bench, {count(block['shared_in_pool'])} shared"),
        ("outside the pool", outside),
        ("chance, uniform", null_cell(uniform)),
    ]
    if block.get("stratified") is not None:
        rows.append((f"chance, within {block['stratified']['by']}", null_cell(block["stratified"])))
    rows.append(("  permutation check", permutation_cell(block["permutation"])))
    return rows


def _evidence_rows(block: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Evidence rows: fix relations, pairs found by fix alone, crash grades beside the control rate."""
    if not isinstance(block, dict):
        return []
    rows = []
    fix = block.get("fix", {})
    if fix.get("status") == "ran":
        rows.append(("pairs sharing the fix", part_of(fix["sharing_fix"], fix["pairs"], word="pair")))
    elif fix.get("status") == "not_run" and fix.get("reason"):
        rows.append(("fix evidence", f"not run: {fix['reason']}"))
    join = block.get("fix_join", {})
    if join.get("status") == "ran":
        rows.append(("pairs found by fix alone", plural(join["pairs_added"], "pair")))
    crash = block.get("crash", {})
    if crash.get("status") == "ran" and crash.get("pairs"):
        control = crash["control"]
        strong = crash["rates"].get("type_and_frame", 0.0)
        base = control["rates"].get("type_and_frame", 0.0)
        rows.append(("same crash type and frame",
                     f"{share(strong)} of matched pairs, {share(base)} of "
                     f"{plural(control['pairs'], 'control pair')}"))
    elif crash.get("status") == "not_run" and crash.get("reason"):
        rows.append(("crash evidence", f"not run: {crash['reason']}"))
    related = block.get("related", {})
    if related.get("status") == "ran" and related.get("pairs"):
        rows.append(("related bugs (not counted)", plural(related["pairs"], "pair")))
    return rows


def _swe_rows(block: dict[str, Any] | None, bench_items: int) -> list[tuple[str, str]]:
    """SWE rows: bench items each key finds, the counted overlap, repo presence."""
    if not isinstance(block, dict) or "found_by_key" not in block:
        return []
    found = block["found_by_key"]
    overlap = block["overlap"]
    presence = block.get("repo_presence", {})
    rows = [
        ("bench items found by repo+PR", f"{count(found.get('repo_pr_exact', 0))} exact, "
                                         f"{count(found.get('repo_pr_casefold', 0))} case-folded, "
                                         f"{count(found.get('repo_pr', 0))} canonical"),
        ("bench items found by base", f"{count(found.get('base_pr', 0))} with the PR, "
                                      f"{count(found.get('base', 0))} base only"),
        ("SWE overlap (counted pairs)", part_of(overlap["bench_items"], bench_items, overlap["share"],
                                                word="bench item")),
    ]
    other = overlap.get("bench_items_by_kind", {})
    if other.get("same_pr_other_base") or other.get("same_pr_base_unknown"):
        rows.append(("  same PR at another base", f"{count(other.get('same_pr_other_base', 0))} other base, "
                                               f"{count(other.get('same_pr_base_unknown', 0))} base unknown"))
    if presence:
        rows.append(("bench repos present in train",
                     part_of(presence["present_in_train"], presence["bench_repos"], word="repo")))
    return rows


def _text_rows(block: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Text rows: flags among the id-matched and the rest per n, the filter's blind spot (bench items
    shorter than n words) and the pair view's longest runs."""
    if not isinstance(block, dict) or not block.get("status"):
        return []
    if block.get("status") == "not_run":
        return [("text check", f"not run: {block.get('reason')}")]
    rows = []
    for check in block.get("checks", [block]):
        fields = check.get("fields", {})
        names = [fields.get(side, "?").removeprefix("text_") for side in ("train", "bench")]
        rows.append(("text check", f"train {names[0]} vs bench {names[1]}"))
        short = check.get("bench", {}).get("short", {})
        for n, by_n in sorted(check.get("flags", {}).items(), key=lambda kv: -int(kv[0])):
            matched, rest = by_n.get("id_matched", {}), by_n.get("rest", {})
            rows.append((f"  train items flagged by {n}-grams",
                         f"{part_of(matched.get('flagged', 0), matched.get('items', 0))} id-matched, "
                         f"{part_of(rest.get('flagged', 0), rest.get('items', 0))} others; "
                         f"{plural(short.get(str(n), 0), 'bench item')} under {n} words"))
        runs = check.get("runs", {})
        if runs.get("with_text"):
            rows.append(("  longest shared run per pair", f"median {plural(runs.get('median'), 'word')}, "
                                                          f"max {plural(runs.get('max'), 'word')}"))
    return rows


# --- the matrix tables ----------------------------------------------------------------------------------


def matrix_rows(result: MatrixResult) -> tuple[list[str], list[list[str]]]:
    """The main table: one row per benchmark, one column per other benchmark (`found/items (share)`),
    then items in at least one / two other benchmarks."""
    names = [d.name for d in result.datasets]
    header = ["bench", "items", *names, ">=1 other", ">=2 others"]
    cells = {(c["bench"], c["other"]): c for c in result.cells.to_dict(orient="records")}
    rows = []
    for bench in result.bench_rows():
        row = [bench["bench"], str(bench["items"])]
        for other in names:
            cell = cells.get((bench["bench"], other))
            if cell is None:
                row.append("-")
            elif cell["skipped"]:
                row.append("subset")
            else:
                row.append(f"{cell['bench_items_found']} ({cell['share']:.1%})")
        row.append(f"{bench['in_ge1_other']} ({bench['share_ge1_other']:.1%})")
        row.append(f"{bench['in_ge2_other']} ({bench['share_ge2_other']:.1%})")
        rows.append(row)
    return header, rows


def couple_rows(result: MatrixResult) -> tuple[list[str], list[list[str]]]:
    header = ["a", "b", *PAIR_KINDS, "shared repos", "note"]
    rows = []
    for couple in result.couples.to_dict(orient="records"):
        rows.append([couple["a"], couple["b"], *[str(couple[f"pairs_{k}"]) for k in PAIR_KINDS],
                     str(couple["shared_repos"]), couple["skipped"] and "skipped: own subset"])
    return header, rows


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown pipe table (`|` inside a cell escaped), ending with a newline."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
