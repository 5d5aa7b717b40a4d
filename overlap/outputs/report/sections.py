"""The report model: the result view, the blocks and sections a report is made of, and the section registry.

A report is a list of sections; a section is a title and blocks (`Table`, `Note`, `Plot`, `Examples`) that
both renderers (`markdown.py` for `report.md`, `html.py` for `report.html`) know how to draw. Sections come
from the summary: the core counts (assembled in `assemble.build_report`), then one section per extra
summary key.

Extension point: `register_section(Section(key, title, build, scope))`. `scope="bench"` sections are
built from `summary["benches"][i][key]`, `scope="top"` from `summary[key]`; `build(value, view, bench)`
returns blocks and must read keys defensively (`.get`), since producers add fields over time. A key with
no registered section is still shown, by `generic_blocks` (scalars as a table, lists of records as
tables), so nothing a producer adds is silently hidden. `baselines` and `inclusion` are registered below
(chance table, null plot with the observed count, per-stratum observed vs expected); register new ones
next to them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .cell_text import count, tail

MAX_TEXT_CHARS = 1500  # example texts are cut here in pair_items.parquet (said in the report)

# --- the result as the renderers see it ---------------------------------------------------------------


@dataclass
class ResultView:
    summary: dict[str, Any]
    pairs: pd.DataFrame
    duplicates: pd.DataFrame
    items: pd.DataFrame | None = None  # texts of paired / duplicated items (dataset, item_id, text_*...)
    folder: Path | None = None


# --- blocks and sections --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


@dataclass(frozen=True)
class Note:
    text: str
    tone: str = "plain"  # plain | warn (the HTML highlights warnings)


@dataclass(frozen=True)
class Plot:
    """A figure drawn by `html.draw_plot(kind, data)`; Markdown names it and points at report.html."""

    kind: str  # "shares" | "null" | "strata"
    data: dict[str, Any]
    alt: str


@dataclass(frozen=True)
class Examples:
    pairs: list[dict[str, Any]]  # {"pair": pairs.csv row, "evidence": {column: value}, "rows": [[field, train, bench]]}


Block = Table | Note | Plot | Examples
Builder = Callable[[Any, ResultView, dict[str, Any] | None], list[Block]]


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    build: Builder
    scope: str = "bench"  # bench | top


@dataclass
class RenderedSection:
    title: str
    blocks: list[Block] = field(default_factory=list)
    level: int = 2


SECTIONS: list[Section] = []


def register_section(section: Section) -> Section:
    """Add (or replace, by scope and key) the renderer of one summary key."""
    SECTIONS[:] = [s for s in SECTIONS if (s.scope, s.key) != (section.scope, section.key)] + [section]
    return section


def registered_sections(scope: str) -> dict[str, Section]:
    """The registered sections of one scope by key, in registration order (read at call time, so a
    registration made after import, or a test's replacement of `SECTIONS`, is seen)."""
    return {s.key: s for s in SECTIONS if s.scope == scope}


def fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 and value else f"{value:,.4g}"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return str(value)


def generic_blocks(value: Any, view: ResultView, bench: dict | None = None, caption: str = "") -> list[Block]:
    """Any JSON value as tables: its scalars in one table, each sub-object in its own (nested keys dotted),
    each list of records in its own."""
    blocks: list[Block] = []
    scalars: list[list[Any]] = []

    def walk(prefix: str, node: Any, depth: int, rows: list[list[Any]]) -> None:
        if isinstance(node, dict) and depth < 4:
            for key in sorted(node):
                child = node[key]
                if depth == 0 and isinstance(child, dict) and child:
                    sub: list[list[Any]] = []
                    blocks.append(Table(["field", "value"], sub, str(key)))
                    walk("", child, depth + 1, sub)
                else:
                    walk(f"{prefix}.{key}" if prefix else str(key), child, depth + 1, rows)
        elif isinstance(node, list) and node and all(isinstance(r, dict) for r in node):
            columns = list(dict.fromkeys(k for r in node for k in r))
            blocks.append(Table(columns, [[fmt(r.get(c)) for c in columns] for r in node[:50]],
                                prefix + (f" (first 50 of {len(node)})" if len(node) > 50 else "")))
        else:
            rows.append([prefix or "value", fmt(node)])

    walk("", value, 0, scalars)
    return ([Table(["field", "value"], scalars, caption)] if scalars else []) + [b for b in blocks if b.rows]



# --- section builders -------------------------------------------------------------------------------------


NULL_FIELDS = ("observed", "expected", "sd", "expected_interval", "pool", "bench_in_pool", "train_in_pool")


def null_models(value: Any) -> list[tuple[str, dict[str, Any]]]:
    """(label, null) for every chance null in a baselines block: any sub-dict with `expected` and an observed
    count or a p-value (`uniform`, `stratified` → "within <by>", `inclusion`...), in a stable order."""
    if not isinstance(value, dict):
        return []
    out = []
    for name, block in sorted(value.items(), key=lambda kv: (kv[0] != "uniform", kv[0])):
        if isinstance(block, dict) and "expected" in block and ({"observed", "p_upper", "p"} & set(block)):
            label = f"within {block['by']}" if block.get("by") else str(block.get("null") or name)
            out.append((label, block))
    return out


def _p(model: dict[str, Any]) -> Any:
    return model.get("p_upper", model.get("p"))


def _range(model: dict[str, Any]) -> str:
    interval = model.get("expected_interval")
    return f"{interval[0]}–{interval[1]}" if isinstance(interval, list) and len(interval) == 2 else ""


def _strata_blocks(strata: list[dict], label: str) -> list[Block]:
    name = next((k for k in ("stratum", "project", "name") if k in strata[0]), "stratum")
    observed = next((k for k in ("shared", "observed") if k in strata[0]), None)
    present = list(dict.fromkeys(k for r in strata for k in r))
    preferred = [name, "pool", "bench", "train", "shared", "observed", "expected", "sd"]
    columns = [c for c in preferred if c in present] + [c for c in present if c not in preferred]
    blocks: list[Block] = []
    if observed and "expected" in strata[0]:
        drawn = [r for r in strata if _num(r.get(observed)) or _num(r.get("expected"))]
        gap = {id(r): _num(r.get(observed)) - _num(r.get("expected")) for r in drawn}  # both signs
        top = sorted(sorted(drawn, key=lambda r: (-abs(gap[id(r)]), str(r.get(name))))[:15],
                     key=lambda r: (-gap[id(r)], str(r.get(name))))
        blocks.append(Plot("strata", {"labels": [str(r.get(name)) for r in top],
                                      "observed": [_num(r.get(observed)) for r in top],
                                      "expected": [_num(r.get("expected")) for r in top],
                                      "title": f"Observed minus expected overlap per stratum ({label})"},
                           f"observed minus expected overlapping items per stratum ({label}): bars to the right "
                           "are above chance, to the left below; the largest gaps of either sign"))
    blocks.append(Table(columns, [[fmt(r.get(c)) for c in columns] for r in strata[:40]],
                        f"{label}: per stratum" + (f" (first 40 of {len(strata)})" if len(strata) > 40 else "")))
    return blocks


def baselines_blocks(value: Any, view: ResultView, bench: dict | None) -> list[Block]:
    """Chance baselines of one benchmark: a row per null (observed, expected, sd, 95 % range, z, exact
    P(X ≥ observed)), the nulls drawn with the observed count marked, the per-stratum table, and the rest
    (in-pool counts, permutation check) as plain tables. Every field is optional."""
    models = null_models(value)
    if not models:
        return generic_blocks(value, view, bench)
    rows = [[label, count(m.get("observed")), fmt(m.get("expected")), fmt(m.get("sd")), _range(m),
             fmt(m.get("z")), tail(m.get("observed"), _p(m))] for label, m in models]
    blocks: list[Block] = [
        Table(["null", "observed", "expected", "sd", "95% range", "z", "exact chance of at least the observed"],
              rows,
              "observed overlap vs what independent draws from the pool would share by chance"),
        Plot("null", {"models": {label: {k: m.get(k) for k in NULL_FIELDS} | {
            "strata": [{k: r.get(k) for k in ("pool", "bench", "train")} for r in m.get("strata") or []
                       if isinstance(r, dict)]} for label, m in models}},
             "chance distribution of the overlap count; the red line is the observed count"),
    ]
    for label, model in models:
        blocks += [Note(f"{label}: {note}") for note in model.get("notes") or []]
        strata = [r for r in model.get("strata") or [] if isinstance(r, dict)]
        if strata:
            blocks += _strata_blocks(strata, label)
    used = {id(m) for _, m in models}
    rest = {k: v for k, v in value.items() if id(v) not in used}
    return blocks + (generic_blocks(rest, view, bench) if rest else [])


def top_baselines_blocks(value: Any, view: ResultView, bench: dict | None) -> list[Block]:
    """The pool the baselines used (summary-level), or why they were not run."""
    if isinstance(value, dict) and value.get("status") == "not_run":
        return [Note(f"Chance baselines not run: {value.get('reason', 'no reason given')}", "warn")]
    return generic_blocks(value, view, bench)


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def stage_ran(value: Any) -> bool:
    """True when a stage section of a summary holds results (not a `status: not_run` placeholder)."""
    return isinstance(value, dict) and value.get("status") not in ("not_run", "not_applicable")


register_section(Section("baselines", "Chance baselines", baselines_blocks))
register_section(Section("inclusion", "SWE inclusion test", baselines_blocks))
register_section(Section("baselines", "Chance baselines: pool", top_baselines_blocks, scope="top"))
