"""Loading a result folder, assembling the report's sections and rendering report.md.

The report model (`ResultView`, the blocks, `Section` and the `register_section` extension point, the
registered baselines builders) lives in `sections.py`; its public names stay importable from here. This
module reads a saved folder (`load_result`) or views an in-memory result (`view_of`), writes the extras
of a result folder (`write_report_extras`), assembles the sections in reading order (`build_report`) and
renders them as Markdown. Evidence columns that later stages add to pairs.csv get count tables
(`evidence_blocks`) without any registration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ..model import PAIR_COLUMNS
from . import more_sections  # noqa: F401 - registers the evidence, text and SWE sections
from .cells import count, part_of, plural, share, title_of
from .sections import (  # noqa: F401 - Section, register_section, SECTIONS, null_models... re-exported
    NULL_FIELDS,
    SECTIONS,
    Block,
    Examples,
    Note,
    Plot,
    RenderedSection,
    ResultView,
    Section,
    Table,
    baselines_blocks,
    fmt,
    generic_blocks,
    null_models,
    register_section,
    registered_sections,
    stage_ran,
    top_baselines_blocks,
)

PAIR_ITEMS_FILE = "pair_items.parquet"
MAX_TEXT_CHARS = 1500  # example texts are cut here in pair_items.parquet (said in the report)
MAX_EXAMPLES = 6  # matched pairs shown side by side per benchmark


# --- reading a result -------------------------------------------------------------------------------------


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def load_result(folder: Path, command: str = "report") -> ResultView:
    """Read a result folder written by `overlap compare` (summary.json, pairs.csv, duplicates.csv and,
    when present, pair_items.parquet for the side-by-side examples). Any other folder (a matrix, ngram or
    filter result, an empty folder, a summary.json that is not JSON or of another schema_version) is
    refused with one line naming what it is and which command reads it (`folders.require_kind`)."""
    from .folders import require_kind

    folder = Path(folder)
    summary = require_kind(folder, "compare", command)
    try:
        pairs = _read_csv(folder / "pairs.csv") if (folder / "pairs.csv").is_file() else pd.DataFrame()
        dups = _read_csv(folder / "duplicates.csv") if (folder / "duplicates.csv").is_file() else pd.DataFrame()
        items = pd.read_parquet(folder / PAIR_ITEMS_FILE) if (folder / PAIR_ITEMS_FILE).is_file() else None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{folder}: cannot read its tables ({type(exc).__name__}); re-run `overlap compare "
                         "--out`") from None
    if len(pairs) and not {"bench", "train_id", "bench_id"} <= set(pairs.columns):
        raise InputError(f"{folder}/pairs.csv: not the pairs of a compare (no bench/train_id/bench_id columns)")
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


def _paired_ids(result, dataset) -> set[str]:
    if dataset is result.train:
        return set(result.pairs["train_id"].astype(str)) if len(result.pairs) else set()
    comp = next(c for c in result.benches if c.bench is dataset)
    return set(comp.pairs["bench_id"].astype(str)) if len(comp.pairs) else set()


def fetch_paired_columns(result) -> None:
    """Fetch the lazily loaded texts and patches (SWE-rebench-V2: the key scan leaves them for later) of the
    paired items only, so the side-by-side view shows the train text and the fix relation sees both
    patches. Pairs whose fix relation was not worked out because a lazy side had no patch yet are related
    again now (pairs.csv and the evidence counts then agree). A no-op for sets that load everything."""
    from ..sources.swe import TEXT, ensure_columns

    datasets = [result.train, *[c.bench for c in result.benches]]
    for dataset in datasets:
        ids = _paired_ids(result, dataset)
        for column in (TEXT, "patch") if ids else ():  # one at a time: an item with its patch still lacks its text
            ensure_columns(dataset, ids, (column,))
    from ..evidence.patches import PatchBook, relate_patches

    for comp in result.benches:
        pairs = comp.pairs
        if not len(pairs) or "fix_reason" not in pairs.columns:
            continue
        redo = pairs["fix_reason"].astype("string").str.contains("has no patch", regex=False).fillna(False)
        if not redo.any():
            continue
        books = [PatchBook.from_items(d.items) if "patch" in d.items.columns else None
                 for d in (result.train, comp.bench)]
        if None in books:
            continue
        for index in pairs.index[redo.to_numpy(dtype=bool)]:
            rel = relate_patches(books[0].get(str(pairs.at[index, "train_id"])),
                                 books[1].get(str(pairs.at[index, "bench_id"])), sides=("train", "bench"))
            if rel.reason and "has no patch" in str(rel.reason):
                continue
            pairs.at[index, "fix_relation"], pairs.at[index, "fix_reason"] = rel.relation, rel.reason
            if "fix_method" in pairs.columns:
                pairs.at[index, "fix_method"] = rel.method
        fix = (comp.sections.get("evidence") or {}).get("fix")
        if isinstance(fix, dict) and "by_relation" in fix:
            fix["by_relation"] = dict(sorted(pairs["fix_relation"].dropna().astype(str).value_counts().items()))
            if "by_method" in fix and "fix_method" in pairs.columns:
                fix["by_method"] = dict(sorted(pairs["fix_method"].dropna().astype(str).value_counts().items()))


def pair_items(result) -> pd.DataFrame:
    """Items in a pair or a duplicate group, with their texts and patches (cut) and crash lines, for the
    examples."""
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
        texts = [*dataset.text_columns, *(["patch"] if "patch" in chosen.columns else [])]
        frame = chosen[keep + texts].copy()
        for column in texts:
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
    from .published import safe_name
    from .splits import bench_lists

    folder = Path(folder)
    view = view_of(result)
    view.items.to_parquet(folder / PAIR_ITEMS_FILE, index=False, compression="zstd")
    for name, text in bench_lists(result).items():
        (folder / safe_name(name)).write_text(text, encoding="utf-8")  # a bench name never leaves the folder
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


# --- evidence and examples ----------------------------------------------------------------------------


def _bench_pairs(view: ResultView, name: str) -> pd.DataFrame:
    if view.pairs.empty or "bench" not in view.pairs.columns:
        return view.pairs
    return view.pairs[view.pairs["bench"].astype(str) == name]


def evidence_columns(pairs: pd.DataFrame) -> list[str]:
    """Columns later stages added to pairs (fix relation, crash grade, text scores...); the free-text
    `*_reason` columns are left to pairs.csv and the examples (one row per distinct sentence is noise)."""
    return [c for c in pairs.columns if c not in PAIR_COLUMNS and not c.endswith("_reason")]


def evidence_blocks(pairs: pd.DataFrame) -> list[Block]:
    """One count table per categorical evidence column (grades, relations); numeric columns summarised."""
    blocks: list[Block] = []
    for column in evidence_columns(pairs):
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
        extra = {k: fmt(v) for k, v in record.items() if k not in PAIR_COLUMNS and fmt(v)}
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


CORE_BENCH_KEYS = {"bench", "bench_items", "bench_items_matched", "bench_share", "by_subset", "dataset",
                   "found_only_by_normalisation", "pairs", "pairs_by_match_type", "plain_join", "shared_keys",
                   "shared_keys_by_kind", "train_by_subset", "train_items_matched"}
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
    from .console import summary_rows

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
