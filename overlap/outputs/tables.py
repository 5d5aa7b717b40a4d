"""The plain-text tables of a result folder: CSV with fixed columns, and the per-benchmark id lists.

CSV files always have the same columns in the same order, whatever stage ran: `PAIRS_CSV_COLUMNS` for
pairs.csv and related.csv (a stage that did not run leaves its columns empty; a column no stage declared
goes after them, sorted), `DUPLICATES_CSV_COLUMNS` for duplicates.csv. `bench_lists` gives the
`<bench>_clean_ids.txt` / `<bench>_contaminated_ids.txt` files that a compare folder and a filtered split
both hold.
"""

from __future__ import annotations

import csv
import json

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
    """CSV lines ending in `\n`. The csv module quotes a cell holding `\n` but not a bare `\r` (not part of that
    line ending), which every reader takes for a line break: a frame with such a cell (an id scraped with its
    carriage return) has every text cell quoted, so each row reads back as one."""
    quoting = csv.QUOTE_NONNUMERIC if _holds(frame, "\r") else csv.QUOTE_MINIMAL
    return frame.to_csv(index=False, lineterminator="\n", quoting=quoting)


def _holds(frame: pd.DataFrame, text: str) -> bool:
    return any(bool(frame[c].astype("string").str.contains(text, regex=False).fillna(False).any())
               for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c]))


# What splits a line for some reader (`str.splitlines`; a file read line by line splits on the first two): an id
# holding one is written as a JSON string in the id lists, so one line is always one id.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK_PATTERN = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in LINE_BREAKS) + "]"


def id_line(item_id: str) -> str:
    """One line of an id list: the id as written, or as a JSON string when it holds a line break."""
    return (json.dumps(item_id) if any(c in item_id for c in LINE_BREAKS) else item_id) + "\n"


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
        out[f"{name}_clean_ids.txt"] = "".join(id_line(i) for i in ordered if i not in matched)
        out[f"{name}_contaminated_ids.txt"] = "".join(id_line(i) for i in ordered if i in matched)
    return out
