"""The report model (what a saved result folder holds) and the Markdown report.

A report is a list of sections; a section is a title and blocks (`Table`, `Note`, `Plot`, `Examples`) that
both renderers (this module for `report.md`, `html.py` for `report.html`) know how to draw. Sections come
from the summary: the core counts, then one section per extra summary key.

Extension point: `register_section(Section(key, title, build, scope))`. `scope="bench"` sections are
built from `summary["benches"][i][key]`, `scope="top"` from `summary[key]`; `build(value, view, bench)`
returns blocks and must read keys defensively (`.get`), since producers add fields over time. A key with
no registered section is still shown, by `generic_blocks` (scalars as a table, lists of records as
tables), so nothing a producer adds is silently hidden. `baselines` is registered below (chance table,
null plot with the observed count, per-project observed vs expected); register new ones next to it.
Evidence columns that later stages add to pairs.csv get count tables (`evidence_blocks`) without any
registration.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ..model import PAIR_COLUMNS

PAIR_ITEMS_FILE = "pair_items.parquet"
MAX_TEXT_CHARS = 1500  # example texts are cut here in pair_items.parquet (said in the report)
MAX_EXAMPLES = 6  # matched pairs shown side by side per benchmark


# --- the result as the renderers see it ---------------------------------------------------------------


@dataclass
class ResultView:
    summary: dict[str, Any]
    pairs: pd.DataFrame
    duplicates: pd.DataFrame
    items: pd.DataFrame | None = None  # texts of paired / duplicated items (dataset, item_id, text_*...)
    folder: Path | None = None


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def load_result(folder: Path) -> ResultView:
    """Read a result folder written by `overlap compare` (summary.json, pairs.csv, duplicates.csv and,
    when present, pair_items.parquet for the side-by-side examples)."""
    folder = Path(folder)
    summary_path = folder / "summary.json"
    if not summary_path.is_file():
        raise InputError(f"{folder}: no summary.json; give a folder written by `overlap compare --out`")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{summary_path}: line {exc.lineno}: invalid JSON; re-run the compare") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("benches"), list):
        raise InputError(f"{summary_path}: not an overlap summary (no 'benches' list)")
    pairs = _read_csv(folder / "pairs.csv") if (folder / "pairs.csv").is_file() else pd.DataFrame()
    dups = _read_csv(folder / "duplicates.csv") if (folder / "duplicates.csv").is_file() else pd.DataFrame()
    items = pd.read_parquet(folder / PAIR_ITEMS_FILE) if (folder / PAIR_ITEMS_FILE).is_file() else None
    return ResultView(summary, pairs, dups, items, folder)


def crash_lines(text: str | None, limit: int = 6) -> str:
    """The lines of a sanitizer report a reader compares: the error, the top frames, the summary."""
    if not text:
        return ""
    picked, frames = [], 0
    for line in str(text).splitlines():
        stripped = line.strip()
        if "Sanitizer" in stripped and ("ERROR" in stripped or stripped.startswith(("SUMMARY", "AddressSan"))):
            picked.append(stripped)
        elif stripped.startswith("#") and " in " in stripped and frames < 3:
            picked.append(stripped)
            frames += 1
        if len(picked) >= limit:
            break
    return "\n".join(picked)


def _crash_texts(dataset, ids: list[str]) -> dict[str, str]:
    """Crash reports of the given items: the `crash_report` column, else CyberGym's per-task error.txt."""
    items = dataset.items.set_index("item_id")
    if "crash_report" in items.columns:
        return {i: items.at[i, "crash_report"] for i in ids if pd.notna(items.at[i, "crash_report"])}
    if getattr(dataset.provenance, "adapter", None) == "cybergym":
        from ..sources.cyber import cybergym_task_path
        from ..sources.taskfiles import fetch_item_files

        files = fetch_item_files(dataset, ids, "error.txt", cybergym_task_path)
        return {i: f.text for i, f in files.items() if f.text}
    return {}


def pair_items(result) -> pd.DataFrame:
    """Items in a pair or a duplicate group, with their texts (cut) and crash lines, for the examples."""
    frames = []
    datasets = [result.train, *[c.bench for c in result.benches]]
    dups = [result.train_duplicates, *[c.duplicates for c in result.benches]]
    for dataset, dup in zip(datasets, dups, strict=True):
        side = "train_id" if dataset is result.train else "bench_id"
        ids = set(result.pairs[side]) if len(result.pairs) else set()
        for joined in dup.get("item_ids", pd.Series([], dtype=str)):
            ids |= set(str(joined).split(";"))
        chosen = dataset.items[dataset.items["item_id"].isin(ids)].sort_values("row")
        keep = [c for c in ("item_id", "row", "subset", "project") if c in chosen.columns]
        frame = chosen[keep + dataset.text_columns].copy()
        for column in dataset.text_columns:
            frame[column] = frame[column].map(lambda t: t if pd.isna(t) else str(t)[:MAX_TEXT_CHARS])
        crashes = _crash_texts(dataset, frame["item_id"].tolist())
        frame["crash_lines"] = frame["item_id"].map(lambda i, c=crashes: crash_lines(c.get(i)) or None)
        frame.insert(0, "dataset", dataset.name)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    return out.astype({c: "string" for c in out.columns if c != "row"}).astype({"row": "int64"})


def write_report_extras(result, folder: Path, reports: bool = True) -> None:
    """Write into a result folder being written (the lead calls this from `write_compare_report`, inside
    its atomic folder): pair_items.parquet (texts for the examples, so `overlap report DIR` can re-render),
    the `<bench>_clean_ids.txt` / `<bench>_contaminated_ids.txt` lists and, with `reports`, report.md and
    report.html."""
    from .splits import bench_lists

    folder = Path(folder)
    view = view_of(result)
    view.items.to_parquet(folder / PAIR_ITEMS_FILE, index=False, compression="zstd")
    for name, text in bench_lists(result).items():
        (folder / name).write_text(text, encoding="utf-8")
    if reports:
        from .html import render_html

        (folder / "report.md").write_text(render_markdown(view), encoding="utf-8")
        (folder / "report.html").write_text(render_html(view), encoding="utf-8")


def view_of(result) -> ResultView:
    """The in-memory view of a `CompareResult`, exactly as a saved folder reads back (the summary goes
    through the same JSON as summary.json, so key order and number types match)."""
    from .report import dumps_json

    dups = pd.concat([result.train_duplicates, *[b.duplicates for b in result.benches]], ignore_index=True)
    return ResultView(json.loads(dumps_json(result.summary())), result.pairs, dups, pair_items(result))


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


CORE_BENCH_KEYS = {"bench", "bench_items", "bench_items_matched", "bench_share", "by_subset", "dataset",
                   "found_only_by_normalisation", "pairs", "pairs_by_match_type", "plain_join", "shared_keys",
                   "shared_keys_by_kind", "train_by_subset", "train_items_matched"}
CORE_TOP_KEYS = {"tool", "parameters", "train", "benches", "train_items_in_any_pair", "train_items_clean",
                 "mapping"}


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
        top = sorted(drawn, key=lambda r: (_num(r.get("expected")) - _num(r.get(observed)), str(r.get(name))))[:15]
        blocks.append(Plot("strata", {"labels": [str(r.get(name)) for r in top],
                                      "observed": [_num(r.get(observed)) for r in top],
                                      "expected": [_num(r.get("expected")) for r in top]},
                           f"observed vs expected per stratum ({label}), largest excess first"))
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
    rows = [[label, fmt(m.get("observed")), fmt(m.get("expected")), fmt(m.get("sd")), _range(m), fmt(m.get("z")),
             fmt(_p(m))] for label, m in models]
    blocks: list[Block] = [
        Table(["null", "observed", "expected", "sd", "95% range", "z", "P(X ≥ observed)"], rows,
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


register_section(Section("baselines", "Chance baselines", baselines_blocks))
register_section(Section("inclusion", "SWE inclusion test", baselines_blocks))
register_section(Section("baselines", "Chance baselines: pool", top_baselines_blocks, scope="top"))


def _bench_pairs(view: ResultView, name: str) -> pd.DataFrame:
    if view.pairs.empty or "bench" not in view.pairs.columns:
        return view.pairs
    return view.pairs[view.pairs["bench"].astype(str) == name]


def evidence_columns(pairs: pd.DataFrame) -> list[str]:
    """Columns later stages added to pairs (fix relation, crash grade, text scores...)."""
    return [c for c in pairs.columns if c not in PAIR_COLUMNS]


def evidence_blocks(pairs: pd.DataFrame) -> list[Block]:
    """One count table per categorical evidence column (grades, relations); numeric columns summarised."""
    blocks: list[Block] = []
    for column in evidence_columns(pairs):
        values = pairs[column].astype("string").fillna("(empty)").replace("", "(empty)")
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
    fields = [f for f in (*EXAMPLE_FIELDS, *texts, "crash_lines") if f in train or f in bench]
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
        extra = {k: fmt(v) for k, v in record.items() if k not in PAIR_COLUMNS and fmt(v)}
        rows = _side_by_side(_item_record(view, train, str(record["train_id"])),
                             _item_record(view, str(bench.get("bench")), str(record["bench_id"])))
        chosen.append({"pair": record, "evidence": extra, "rows": rows})
    blocks: list[Block] = [Examples(chosen)]
    if view.items is None:
        blocks.insert(0, Note("Item texts are not in this result folder (no pair_items.parquet): ids only.", "warn"))
    elif len(pairs) > MAX_EXAMPLES:
        blocks.insert(0, Note(f"{MAX_EXAMPLES} of {len(pairs)} pairs; texts cut at {MAX_TEXT_CHARS} characters."))
    return blocks


# --- assembling the report ------------------------------------------------------------------------------


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
    return Note(f"{bench.get('bench_items_matched', 0)} of {bench.get('bench_items', 0)} {bench.get('bench')} "
                f"items ({bench.get('bench_share', 0):.1%}) share a source identity with {train} items "
                f"({bench.get('train_items_matched', 0)} train items). A plain join on ids as written finds "
                f"{plain.get('bench_items_matched', 0)} ({plain.get('bench_share', 0):.1%}).")


def _provenance_rows(block: dict | None, name: str) -> list[list[str]]:
    prov = (block or {}).get("provenance") or {}
    where = f"{prov.get('repo_id') or prov.get('location') or ''}@{prov.get('revision') or 'local copy'}"
    files = prov.get("files") or [{}]
    return [[name, prov.get("origin", ""), where, prov.get("adapter") or "", f.get("path", ""),
             f.get("sha256", ""), fmt(f.get("rows"))] for f in files]


def provenance_blocks(summary: dict) -> list[Block]:
    rows = _provenance_rows(summary.get("train"), f"train: {summary.get('train', {}).get('name')}")
    for b in summary.get("benches", []):
        rows += _provenance_rows(b.get("dataset"), f"bench: {b.get('bench')}")
    if summary.get("mapping"):
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
    registered = {s.key: s for s in SECTIONS if s.scope == scope}
    known = [k for k in registered if k in container]
    unknown = sorted(k for k in container if k not in core and k not in registered)
    out = []
    for key in known + unknown:
        section = registered.get(key)
        title = section.title if section else key.replace("_", " ").capitalize()
        blocks = (section.build if section else generic_blocks)(container[key], view, bench)
        out.append(RenderedSection(title, blocks, level))
    return out


def build_report(view: ResultView) -> list[RenderedSection]:
    """The report's sections in reading order, from a result view."""
    from .console import summary_rows

    summary = view.summary
    train = str((summary.get("train") or {}).get("name", "train"))
    header, rows = summary_rows(summary)
    sections = [RenderedSection("Summary by benchmark", [Table(header, rows), _shares_plot(summary["benches"])])]
    for bench in summary["benches"]:
        sections.append(RenderedSection(f"{bench.get('bench')}", [_headline(bench, train)]))
        sections += _extra_sections(bench, CORE_BENCH_KEYS, "bench", view, bench, 3)
        evidence = evidence_blocks(_bench_pairs(view, str(bench.get("bench"))))
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
    return sections


def title_of(summary: dict) -> str:
    benches = ", ".join(str(b.get("bench")) for b in summary.get("benches", []))
    return f"overlap: {(summary.get('train') or {}).get('name', 'train')} vs {benches}"


def _md_cell(value: Any) -> str:
    return fmt(value).replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def render_markdown(view: ResultView) -> str:
    """report.md: the same sections as report.html; plots are named and left to the HTML report."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("overlap.outputs", "templates"), undefined=StrictUndefined,
                      keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["cell"] = _md_cell
    text = env.get_template("report.md.j2").render(title=title_of(view.summary), sections=build_report(view),
                                                   kind=lambda b: type(b).__name__)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"
