"""Stdout renderings of a compare summary: a rich table, Markdown, JSON, CSV."""

from __future__ import annotations

from typing import Any

from .cells import count, groups_cell, null_cell, part_of, permutation_cell, plural, share, title_of
from .report import dumps_json, to_csv_text

# Width of stdout tables when stdout is not a terminal and COLUMNS is not set (a file, a pipe, CI): fixed,
# so that saved output does not depend on the terminal the command happened to run from.
PIPE_WIDTH = 100

# The summary table's first header: its rows say what each benchmark column counts.
FIRST_HEADER = "measure"

SUMMARY_ROWS = (
    ("bench items", lambda b: count(b["bench_items"])),
    ("shared canonical keys", lambda b: count(b["shared_keys"])),
    ("pairs by how they matched", lambda b: pairs_cell(b)),
    ("train items matched", lambda b: count(b["train_items_matched"])),
    ("bench items matched", lambda b: part_of(b["bench_items_matched"], b["bench_items"], b["bench_share"])),
    ("bench items matched by a plain id join", lambda b: part_of(
        b["plain_join"]["bench_items_matched"], b["bench_items"], b["plain_join"]["bench_share"])),
    ("found only by normalisation", lambda b: plural(b["found_only_by_normalisation"]["bench_items"], "bench item")),
    ("bench duplicates", lambda b: groups_cell(b["dataset"]["duplicates"]["groups"],
                                               b["dataset"]["duplicates"]["items"])),
)


# How a pair matched (pairs.csv `match_type`) → its words in the summary table; other kinds follow by name.
MATCH_TYPE_WORDS = {"exact": "exact", "translated": "translated", "fix": "by fix"}


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
    duplicates = groups_cell(train["duplicates"]["groups"], train["duplicates"]["items"])
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
        rows.append(("  same PR, not counted", f"{count(other.get('same_pr_other_base', 0))} other base, "
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


def render_markdown(summary: dict[str, Any]) -> str:
    header, rows = summary_rows(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def stdout_console():
    """A rich console on stdout as wide as the terminal (or COLUMNS when set); PIPE_WIDTH when stdout is
    not a terminal, so files and pipes get the same bytes whatever terminal ran the command."""
    import os
    import sys

    from rich.console import Console

    explicit = (os.environ.get("COLUMNS") or "").isdigit()
    width = None if explicit or sys.stdout.isatty() else PIPE_WIDTH
    return Console(file=sys.stdout, soft_wrap=False, width=width)


def print_table(summary: dict[str, Any], console) -> None:
    header, rows = summary_rows(summary)
    print_fitted(console, title_of(summary), header, rows,
                 names=header[1:], long_names=("benchmark", "value"), justify="left")


def print_matrix(result, console) -> None:
    """`overlap matrix`'s two tables (see matrix.matrix_rows / couple_rows), fitted to the console: benchmark
    names become codes with a legend, or the table one row per cell, when the full table is too wide."""
    from .matrix import couple_rows, matrix_rows

    names = [d.name for d in result.datasets]
    header, rows = matrix_rows(result)
    print_fitted(console, "overlap matrix: bench items found in each other benchmark", header, rows, keys=2,
                 names=names, long_names=("in benchmark", "bench items found"))
    header, rows = couple_rows(result)
    print_fitted(console, "pair kinds per two benchmarks", [identifier_words(h) for h in header], rows, keys=2,
                 names=names, long_names=("pair kind", "pairs"))


def identifier_words(name: str) -> str:
    """`same_pr_other_base` → `same PR other base`: an identifier as words a header can wrap between."""
    return " ".join("PR" if word == "pr" else word for word in name.split("_"))


def print_fitted(console, title: str, header: list[str], rows: list[list[str]], *, keys: int = 1,
                 names: list[str] = (), long_names: tuple[str, str] = ("column", "value"),
                 justify: str = "right") -> None:
    """Print a table no wider than the console without splitting a word (cells wrap at spaces). Tried in
    turn: the table as given; with each long name in `names` (in headers and the first `keys` columns)
    replaced by a short code, explained in a legend under the table; one row per (row, column) cell, with
    the column's header in a `long_names[0]` column beside the `long_names[1]` column of values. Key
    columns are left-aligned, the others `justify`."""
    shown = [i for i, h in enumerate(header) if i < keys or any(row[i] for row in rows)]  # no empty column
    header, rows = [header[i] for i in shown], [[row[i] for i in shown] for row in rows]
    codes = {name: f"[{i}]" for i, name in enumerate(dict.fromkeys(names), start=1) if len(name) > 4}
    coded_header = [codes.get(h, h) for h in header]
    coded_rows = [[codes.get(c, c) if i < keys else c for i, c in enumerate(row)] for row in rows]
    used = [name for name in codes if name in header or any(name in row[:keys] for row in rows)]
    long_rows = [[*row[:keys], header[i], cell] for row in rows for i, cell in enumerate(row)
                 if i >= keys and cell not in ("", "-")]
    candidates = [(header, rows, []), (coded_header, coded_rows, [f"{codes[name]} {name}" for name in used]),
                  ([*header[:keys], *long_names], long_rows, [])]
    for cand_header, cand_rows, legend in candidates:
        widths = column_widths(cand_header, cand_rows, console.width)
        if widths is not None or cand_rows is long_rows:
            console.print(_rich_table(title, cand_header, cand_rows, keys, justify, widths))
            for line in _legend_lines(legend, console.width):
                console.print(line, highlight=False, markup=False)
            return


# Columns of a rich table with the default box and padding take 3 characters each besides their text, plus 1.
def column_widths(header: list[str], rows: list[list[str]], width: int) -> list[int] | None:
    """Text widths for the columns so that the table is at most `width` wide and no word is split (each
    column at least its longest word; the room left goes to the columns that would wrap), or None."""
    from rich.cells import cell_len

    columns = list(zip(header, *rows, strict=True))
    least = [max(cell_len(word) for text in column for word in [*str(text).split(), ""]) for column in columns]
    most = [max(cell_len(str(text)) for text in column) for column in columns]
    room = width - (3 * len(columns) + 1)
    if sum(least) > room:
        return None
    widths = list(least)
    while sum(widths) < room and any(w < m for w, m in zip(widths, most, strict=True)):
        wanting = [i for i, (w, m) in enumerate(zip(widths, most, strict=True)) if w < m]
        for i in wanting[: room - sum(widths)]:
            widths[i] += 1
    return widths


def _legend_lines(entries: list[str], width: int) -> list[str]:
    """`[1] name  [2] name`, broken between entries (never inside one) to fit `width`."""
    lines: list[str] = []
    for entry in entries:
        if lines and len(lines[-1]) + 2 + len(entry) <= width:
            lines[-1] += "  " + entry
        else:
            lines.append(entry)
    return lines


def _rich_table(title: str, header: list[str], rows: list[list[str]], keys: int, justify: str,
                widths: list[int] | None):
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    for index, name in enumerate(header):
        table.add_column(Text(name), justify="left" if index < keys else justify,
                         style="bold" if index == 0 else None, width=widths[index] if widths else None)
    for row in rows:
        table.add_row(*[Text(cell) for cell in row])
    return table


def render(summary: dict[str, Any], pairs, fmt: str) -> str | None:
    """Text for stdout in `fmt` (json, csv, md), or None for the rich table."""
    if fmt == "json":
        return dumps_json(summary)
    if fmt == "csv":
        return to_csv_text(pairs)
    if fmt == "md":
        return render_markdown(summary)
    return None
