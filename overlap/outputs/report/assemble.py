"""The report's sections in reading order (`build_report`), which both renderers draw: report.md
(`markdown.py`) and report.html (`html.py`).

The core counts come first (the summary table of `table_rows`, a headline per benchmark), then one section
per extra summary key (registered in `sections.py` and `evidence_sections.py`, or shown generically), the
evidence columns that later stages add to pairs.csv as count tables (`evidence_blocks`, no registration
needed), matched pairs side by side, duplicates and provenance. `with_appendix` moves the raw detail to
an appendix at the end.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...model import PAIR_COLUMNS
from ..published import memory_description
from . import evidence_sections  # noqa: F401 - registers the evidence, text and SWE sections
from .cell_text import count, part_of, plural, share
from .sections import (
    MAX_TEXT_CHARS,
    Block,
    Examples,
    Note,
    Plot,
    RenderedSection,
    ResultView,
    Table,
    fmt,
    generic_blocks,
    registered_sections,
    stage_ran,
)
from .table_rows import summary_rows

MAX_EXAMPLES = 6  # matched pairs shown side by side per benchmark


# --- evidence and examples ----------------------------------------------------------------------------


def _bench_pairs(view: ResultView, name: str) -> pd.DataFrame:
    if view.pairs.empty or "bench" not in view.pairs.columns:
        return view.pairs
    return view.pairs[view.pairs["bench"].astype(str) == name]


# The order a pair's evidence is shown in, then any other column by name: the same whether the pairs are a
# compare's in memory (in the order its stages added them) or read back from pairs.csv (in its column order),
# so `overlap report DIR` re-renders the report compare wrote.
EVIDENCE_ORDER = ("pair_kind", "counted", "fix_relation", "fix_reason", "fix_method", "crash_grade", "crash_reason",
                  "longest_run", "names_function", "names_file")


def _evidence_order(columns) -> list[str]:
    columns = [c for c in columns if c not in PAIR_COLUMNS]
    return [c for c in EVIDENCE_ORDER if c in columns] + sorted(c for c in columns if c not in EVIDENCE_ORDER)


def evidence_columns(pairs: pd.DataFrame) -> list[str]:
    """Columns later stages added to pairs (fix relation, crash grade, text scores...); the free-text
    `*_reason` columns are left to pairs.csv and the examples (one row per distinct sentence is noise)."""
    return [c for c in _evidence_order(pairs.columns) if not c.endswith("_reason")]


def evidence_blocks(pairs: pd.DataFrame) -> list[Block]:
    """One count table per categorical evidence column (grades, relations); numeric columns summarised. The
    pair kind every pair has is the summary's "by what matched", not evidence."""
    blocks: list[Block] = []
    for column in (c for c in evidence_columns(pairs) if c not in ("pair_kind", "counted")):
        values = pairs[column].astype("string").fillna("(empty)").replace("", "(empty)")
        if (values == "(empty)").all():  # a stage that did not run leaves its pairs.csv column empty
            continue
        numeric = pd.to_numeric(pairs[column], errors="coerce")
        if numeric.notna().all() and values.nunique() > 12:
            blocks.append(Table(["column", "min", "median", "max"], [[column, fmt(numeric.min()),
                                fmt(float(numeric.median())), fmt(numeric.max())]]))
            continue
        counts = values.value_counts()
        rows = [[v, int(n)] for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:20]]
        blocks.append(Table([column, "pairs"], rows))
    return blocks


def _item_record(view: ResultView, dataset: str, item_id: str) -> dict[str, Any]:
    if view.items is None:
        return {"item_id": item_id}
    match = view.items[(view.items["dataset"] == dataset) & (view.items["item_id"] == item_id)]
    if match.empty:
        return {"item_id": item_id}
    record = match.iloc[0].to_dict()
    return {k: v for k, v in record.items() if k != "dataset" and v is not None and not pd.isna(v)}


EXAMPLE_FIELDS = ("item_id", "project", "subset")


def _side_by_side(train: dict[str, Any], bench: dict[str, Any]) -> list[list[str]]:
    """Rows (field, train value, bench value): ids and project first, then texts, then crash lines."""
    texts = sorted({k for k in (*train, *bench) if k.startswith("text_")})
    fields = [f for f in (*EXAMPLE_FIELDS, *texts, "patch", "crash_lines") if f in train or f in bench]
    return [[f, fmt(train.get(f)), fmt(bench.get(f))] for f in fields]


def example_blocks(view: ResultView, bench: dict) -> list[Block]:
    pairs = _bench_pairs(view, str(bench.get("bench")))
    if pairs.empty:
        return []
    # Translated pairs first: they are the ones only normalisation finds, the most instructive to read.
    order = pairs.assign(_t=(pairs.get("match_type", "") != "translated")).sort_values("_t", kind="stable")
    train = view.summary.get("train", {}).get("name", "train")
    chosen = []
    for record in order.head(MAX_EXAMPLES).drop(columns="_t").to_dict(orient="records"):
        extra = {k: fmt(record[k]) for k in _evidence_order(record) if fmt(record[k])}
        rows = _side_by_side(_item_record(view, train, str(record["train_id"])),
                             _item_record(view, str(bench.get("bench")), str(record["bench_id"])))
        chosen.append({"pair": record, "evidence": extra, "rows": rows})
    blocks: list[Block] = [Examples(chosen)]
    if view.items is None:
        blocks.insert(0, Note("Item texts are not in this result folder (no pair_items.parquet): ids only.", "warn"))
    elif len(pairs) > MAX_EXAMPLES:
        blocks.insert(0, Note(f"{part_of(MAX_EXAMPLES, len(pairs), word='pair')}; texts cut at "
                              f"{plural(MAX_TEXT_CHARS, 'character')}."))
    return blocks


# --- assembling the report ------------------------------------------------------------------------------


CORE_BENCH_KEYS = {"bench", "bench_items", "bench_items_matched", "bench_items_by_pair_kind", "bench_share",
                   "by_subset", "dataset", "found_only_by_normalisation", "pairs", "pairs_by_match_type",
                   "plain_join", "shared_keys", "shared_keys_by_kind", "train_by_subset", "train_items_matched"}
CORE_TOP_KEYS = {"tool", "parameters", "train", "benches", "train_items_in_any_pair", "train_items_clean",
                 "mapping", "schema_version", "kind"}


def _shares_plot(benches: list[dict]) -> Plot:
    bars = {}
    for b in benches:
        bars[str(b.get("bench"))] = (b.get("bench_share", 0.0), (b.get("plain_join") or {}).get("bench_share", 0.0))
        for subset, counts in (b.get("by_subset") or {}).items():
            total = counts.get("bench_items") or 0
            plain = counts.get("plain_bench_items_matched", 0) / total if total else 0.0
            bars[f"{b.get('bench')}:{subset}"] = (counts.get("share", 0.0), plain)
    return Plot("shares", {"bars": bars}, "share of bench items matched: normalised vs plain join")


def _headline(bench: dict, train: str) -> Note:
    plain = bench.get("plain_join") or {}
    return Note(f"{count(bench.get('bench_items_matched', 0))} of {count(bench.get('bench_items', 0))} "
                f"{bench.get('bench')} items ({share(bench.get('bench_share', 0))}) share a source identity with "
                f"{train} items ({plural(bench.get('train_items_matched', 0), 'train item')}). A plain join on ids "
                f"as written finds {count(plain.get('bench_items_matched', 0))} "
                f"({share(plain.get('bench_share', 0))}).")


def _provenance_rows(block: dict | None, name: str) -> list[list[str]]:
    prov = (block or {}).get("provenance") or {}
    where = f"{prov.get('repo_id') or prov.get('location') or ''}@{prov.get('revision') or 'local copy'}"
    if isinstance(prov.get("in_memory"), dict):  # no place or revision: what was given stands for them
        where = memory_description(prov["in_memory"])
    files = prov.get("files") or [{}]
    return [[name, prov.get("origin", ""), where, prov.get("adapter") or "", f.get("path", ""),
             f.get("sha256", ""), count(f.get("rows")) if f.get("rows") is not None else ""] for f in files]


def provenance_blocks(summary: dict) -> list[Block]:
    rows = _provenance_rows(summary.get("train"), f"train: {summary.get('train', {}).get('name')}")
    for b in summary.get("benches", []):
        rows += _provenance_rows(b.get("dataset"), f"bench: {b.get('bench')}")
    if stage_ran(summary.get("mapping")):
        rows += _provenance_rows(summary["mapping"], "mapping")
    for key in sorted(set(summary) - CORE_TOP_KEYS):  # inputs of extra sections (baseline pool, reference)
        value = summary[key]
        for name, part in sorted(value.items()) if isinstance(value, dict) else ():
            if isinstance(part, dict) and isinstance(part.get("provenance"), dict):
                rows += _provenance_rows(part, f"{key} {name}: {part.get('name', '')}".rstrip(": "))
    tool = summary.get("tool") or {}
    return [Note(f"{tool.get('name', 'overlap')} {tool.get('version', '')}; parameters: "
                 f"{fmt(summary.get('parameters') or {})}"),
            Table(["input", "origin", "repo@revision", "adapter", "file", "sha256", "rows"], rows)]


def _extra_sections(container: dict, core: set[str], scope: str, view: ResultView, bench: dict | None,
                    level: int) -> list[RenderedSection]:
    registered = registered_sections(scope)
    known = [k for k in registered if k in container]
    unknown = sorted(k for k in container if k not in core and k not in registered)
    out, not_run = [], []
    for key in known + unknown:
        section = registered.get(key)
        title = section.title if section else key.replace("_", " ").capitalize()
        value = container[key]
        if value is None:  # a count its stage did not make
            continue
        if isinstance(value, dict) and not stage_ran(value):  # one line for every stage that did not run
            not_run.append(f"{title.lower()} ({value.get('reason', 'no reason given')})")
            continue
        out.append(RenderedSection(title, (section.build if section else generic_blocks)(value, view, bench), level))
    if not_run:
        out.append(RenderedSection("Not run", [Note("Not run: " + "; ".join(not_run) + ".", "warn")], level))
    return out


def build_report(view: ResultView) -> list[RenderedSection]:
    """The report's sections in reading order, from a result view."""
    summary = view.summary
    train = str((summary.get("train") or {}).get("name", "train"))
    header, rows = summary_rows(summary)
    sections = [RenderedSection("Summary by benchmark", [Table(header, rows), _shares_plot(summary["benches"])])]
    for bench in summary["benches"]:
        sections.append(RenderedSection(f"{bench.get('bench')}", [_headline(bench, train)]))
        sections += _extra_sections(bench, CORE_BENCH_KEYS, "bench", view, bench, 3)
        # Without an evidence summary (older folders, columns added by hand) the pair columns are counted.
        pairs = _bench_pairs(view, str(bench.get("bench")))
        evidence = [] if stage_ran(bench.get("evidence")) else evidence_blocks(pairs)
        if evidence:
            sections.append(RenderedSection("Evidence grades", evidence, 3))
        examples = example_blocks(view, bench)
        if examples:
            sections.append(RenderedSection("Matched pairs, side by side", examples, 3))
    if not view.duplicates.empty:
        dups = view.duplicates.astype(str)
        sections.append(RenderedSection("The same bug twice inside one dataset",
                                        [Table(list(dups.columns), dups.values.tolist())]))
    sections += _extra_sections(summary, CORE_TOP_KEYS, "top", view, None, 2)
    sections.append(RenderedSection("Provenance", provenance_blocks(summary)))
    return with_appendix(sections)


APPENDIX = "Appendix"  # the title of the section after which everything is raw detail (collapsed in HTML)


def _raw(block: Block) -> bool:
    """A raw `field | value` dump (generic_blocks of a summary block): appendix material."""
    return isinstance(block, Table) and [str(c) for c in block.columns] == ["field", "value"]


def with_appendix(sections: list[RenderedSection]) -> list[RenderedSection]:
    """The sections in reading order, the raw detail moved to the end: every `field | value` dump (under
    the title of the section it came from) and the provenance, after one `Appendix` section (report.md
    shows it as a final section, report.html as a collapsed <details>)."""
    main, appendix = [], []
    for section in sections:
        if section.title == "Provenance":
            appendix.append(RenderedSection(section.title, section.blocks, 3))
            continue
        raw = [b for b in section.blocks if _raw(b)]
        kept = [b for b in section.blocks if not _raw(b)]
        if raw:
            title = f"{_parent_title(sections, section)}{section.title}: raw fields"
            appendix.append(RenderedSection(title, raw, 3))
            kept = kept or [Note(f"Only raw fields: see “{title}” in the {APPENDIX}.")]  # named, never hidden
        main.append(RenderedSection(section.title, kept, section.level))
    if not appendix:
        return main
    intro = Note("Raw detail kept for reference: every field of the summary blocks shown above, and where "
                 "the inputs came from. summary.json holds the same values.")
    return [*main, RenderedSection(APPENDIX, [intro], 2), *appendix]


def _parent_title(sections: list[RenderedSection], section: RenderedSection) -> str:
    """`<bench> · ` for a level-3 section (the nearest level-2 section before it), else empty."""
    if section.level < 3:
        return ""
    parent = ""
    for other in sections:
        if other is section:
            break
        if other.level == 2:
            parent = other.title
    return f"{parent} · " if parent else ""
