"""The embedded demo: hand-made datasets in the real MiMo / CyberGym / ARVO layouts, used offline."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

from ..model import Provenance
from ..outputs.report.cell_text import count, plural, word_for
from ..resources import demo_root

DEMO_ROOT = demo_root()  # data/demo/ in the repository, overlap/_data/demo/ in an installed wheel


def demo_data() -> dict[str, Path]:
    """`--data` overrides that point the registered names at the demo folders."""
    return {name: DEMO_ROOT / name for name in ("mimo-cyber", "cybergym", "arvo", "arvo-meta")}


def portable_locations(result: Any) -> Any:
    """Record the demo folders as `data/demo/<name>` (their place in the repository) instead of this
    machine's absolute path, so the demo report is the same file on every machine (reports/demo/ is committed
    and a test compares it byte for byte)."""
    root = str(DEMO_ROOT)

    def relocate(location: Any) -> Any:
        if isinstance(location, str) and (location == root or location.startswith(root + os.sep)):
            return "data/demo" + location[len(root):].replace(os.sep, "/")
        return location

    def walk(value: Any) -> None:
        if isinstance(value, Provenance):
            value.location = relocate(value.location)
        elif isinstance(value, dict):
            for key, inner in value.items():
                if key == "location":
                    value[key] = relocate(inner)
                else:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    datasets = [result.train, *(b.bench for b in result.benches)]
    walk([d.provenance for d in datasets] + [result.mapping_provenance, result.sections]
         + [b.sections for b in result.benches] + [getattr(result.pool, "provenance", None)])
    return result


def explain(summary: dict[str, Any], width: int | None = None) -> str:
    """A short plain-language reading of the demo result, each paragraph wrapped to `width` columns."""
    bench = summary["benches"][0]
    train = summary["train"]
    plain = bench["plain_join"]["bench_items_matched"]
    found = bench["bench_items_matched"]
    extra = bench["found_only_by_normalisation"]["bench_items"]
    ids = train.get("ossfuzz_ids", {})
    groups = train["duplicates"]["groups"]
    lines = [
        "",
        f"What happened: {train['name']} lists OSS-Fuzz bugs under old Monorail ids and new tracker ids "
        f"({count(ids.get('old_ids', 0))} old, {count(ids.get('new_ids', 0))} new); {bench['bench']} uses "
        "`arvo:<old id>` and `oss-fuzz:<new id>`.",
        f"A plain join on the numbers finds {count(plain)} of {plural(bench['bench_items'], 'benchmark task')}; "
        f"translating old ids to new ones with the mapping finds {count(found)} ({count(extra)} more).",
        f"{plural(groups, 'bug')} {word_for(groups, 'appears', 'appear')} twice inside {train['name']} under "
        "both ids (see duplicates.csv).",
        "The report folder holds report.html and report.md, pairs.csv (with fix and crash evidence), "
        "related.csv, duplicates.csv, summary.json, the clean/contaminated id lists and train_clean_ids.txt.",
    ]
    if width:
        lines = [textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False) for line in lines]
    return "\n".join(lines)
