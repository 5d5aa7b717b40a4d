"""The plain-text tables of a result folder: CSV with fixed columns, and the per-benchmark id lists.

CSV files always have the same columns in the same order, whatever stage ran: `PAIRS_CSV_COLUMNS` for
pairs.csv and related.csv (a stage that did not run leaves its columns empty; a column no stage declared
goes after them, sorted), `DUPLICATES_CSV_COLUMNS` for duplicates.csv. `bench_lists` gives the
`<bench>_clean_ids.txt` / `<bench>_contaminated_ids.txt` files that a compare folder and a filtered split
both hold.
"""

from __future__ import annotations

import pandas as pd

from ..model import PAIR_COLUMNS
from .published import safe_name

# Evidence columns the stages add to pairs, in the order pairs.csv shows them (SWE pair kinds, fix and
# crash evidence, text runs and names).
EVIDENCE_COLUMNS = ("pair_kind", "counted", "fix_relation", "fix_method", "fix_reason", "crash_grade",
                    "crash_reason", "longest_run", "names_function", "names_file")
PAIRS_CSV_COLUMNS = (*PAIR_COLUMNS, *EVIDENCE_COLUMNS)
DUPLICATES_CSV_COLUMNS = ("dataset", "kind", "value", "items", "item_ids", "raw_values", "identical_text")


def to_csv_text(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def with_columns(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """`frame` with exactly `columns` first, in order (missing ones empty), then any others sorted."""
    out = frame.copy()
    for column in columns:
        if column not in out.columns:
            out[column] = pd.Series([pd.NA] * len(out), index=out.index, dtype="object")
    return out[[*columns, *sorted(c for c in out.columns if c not in columns)]]


def bench_lists(result) -> dict[str, str]:
    """`<bench>_clean_ids.txt` and `<bench>_contaminated_ids.txt` for every benchmark (file name → text).

    The bench name is always in the file name, one benchmark or many, so lists from different runs never
    collide. Contaminated = in a pair of the normalised join; clean = the rest; both in source order.
    """
    out = {}
    for comp in result.benches:
        matched = set(comp.pairs["bench_id"])
        ordered = comp.bench.items.sort_values("row")["item_id"].tolist()
        name = safe_name(comp.bench.name)
        out[f"{name}_clean_ids.txt"] = "".join(f"{i}\n" for i in ordered if i not in matched)
        out[f"{name}_contaminated_ids.txt"] = "".join(f"{i}\n" for i in ordered if i in matched)
    return out
