"""The streamed side's `Dataset` and duplicates table, from what its scan gathered.

The counts of the items pass (`items_pass`), the input problems, the keys two items share (the side's
duplicate groups) and the matched items and keys, typed as `read_generic` types them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..ids.recognition import RecognitionReport
from ..join import duplicates
from ..model import Dataset, Problem, SideTotals
from ..sources.rows.assemble import LABEL, other_base_problem, unrecognised_problem
from ..sources.rows.columns import GenericColumns
from ..sources.rows.row_checks import CHECKS
from .batch import KIND_CODES, PRESENT_COLUMNS
from .hashing import shared_hashes
from .items_pass import _Firsts, _items_pass
from .row_bits import RowBits
from .scan_state import _State

DUPLICATE_DETAIL = "a repeated id keeps its first row; `filter` drops or keeps every copy with it"


def _check_problems(state: _State, firsts: _Firsts) -> list[Problem]:
    """The checks that hold for some item, counted over the items, each shown by its first item."""
    shown = state.problem_rows.select(firsts.check_rows[firsts.checks > 0])
    problems = []
    for bit, what in enumerate(CHECKS):
        if firsts.checks[bit]:
            row = shown.filter(pc.and_(pc.equal(shown.column("row"), int(firsts.check_rows[bit])),
                                       pc.equal(shown.column("what"), what)))
            problems.append(Problem(what, int(firsts.checks[bit]), row.column("example")[0].as_py(),
                                    row.column("detail")[0].as_py()))
    return problems


def _not_repeats(table: pa.Table, repeats: RowBits) -> pa.Table:
    if not len(repeats) or not table.num_rows:
        return table
    return table.filter(pa.array(~repeats.holds(table.column("row").to_numpy())))


def _duplicate_keys(state: _State, repeats: RowBits) -> pa.Table:
    """The task keys of items (first rows) whose (kind, value) another item also has: the rows whose key hash
    another item's key shares, read back as strings and grouped on them. A partition is read a piece at a
    time and its repeats' keys dropped from each piece: what is held is the items' keys, however often one id
    (and its keys) repeats."""
    candidates = []
    for pieces in state.task_keys.by_partition():
        rows, hashes = [], []
        for piece in pieces():
            row, hashed = piece.column("row").to_numpy(), piece.column("hash").to_numpy()
            kept = ~repeats.holds(row)
            rows.append(row[kept])
            hashes.append(hashed[kept])
        rows, hashes = np.concatenate(rows), np.concatenate(hashes)
        if not len(rows):
            continue
        candidates.append(rows[shared_hashes(hashes)])  # the rows whose key hash another key has
    rows = np.unique(np.concatenate(candidates)) if candidates else np.zeros(0, np.int64)
    keys = state.key_strings.select(rows)
    # an item is one row, and a row holds a (kind, value) once: its count is the count of items holding it
    counts = keys.group_by(["kind", "value"], use_threads=False).aggregate([("row", "count")])
    shared = counts.filter(pc.greater(counts.column("row_count"), 1)).select(["kind", "value"])
    keys = keys.join(shared, ["kind", "value"], join_type="inner", use_threads=False) if shared.num_rows \
        else keys.slice(0, 0)
    keys = keys.sort_by("row")
    ids = state.ids.select(keys.column("row").to_numpy())
    at = pc.index_in(keys.column("row"), value_set=ids.column("row"))
    project = _project_names(state, ids.column("project").take(at).to_numpy(zero_copy_only=False))
    item_ids = ids.column("item_id").take(at)
    return pa.table({"kind": KIND_CODES.take(keys.column("kind")), "value": keys.column("value"),
                     "raw": pc.coalesce(keys.column("raw"), keys.column("value")), "item_id": item_ids,
                     "row": keys.column("row"), "project": project})


def _project_names(state: _State, codes: np.ndarray) -> pa.Array:
    names = pa.array(state.projects, pa.string())
    return names.take(pa.array(codes, pa.int32(), mask=codes < 0)) if len(codes) else pa.array([], pa.string())


def _finish(state: _State, label: str, provenance, columns: GenericColumns, report: RecognitionReport):
    firsts, found = _items_pass(state)
    repeats = found.rows
    if not firsts.items:  # worded as `assemble` words it: every row lacks an id, so that is the reason
        reason = f" (missing_id: {state.first_missing[0]} row {state.first_missing[1]})" if state.missing else ""
        raise InputError(f"{label}: no usable rows (no row has an id in column '{columns.id}'){reason}; check the "
                         "files and their columns")
    alone_ids = state.ids.select(firsts.alone_rows).column("item_id").to_pylist()
    problems = [] if columns.scheme == LABEL else unrecognised_problem(firsts.alone, alone_ids, columns.scheme)
    if state.missing:
        file, file_row = state.first_missing
        problems.append(Problem("missing_id", state.missing, f"{file} row {file_row}",
                                "rows without an id cannot be joined or listed"))
    if len(repeats):
        problems.append(Problem("duplicate_id", int(len(repeats)), found.first[1], DUPLICATE_DETAIL))
        if columns.base:
            problems += other_base_problem(found.other_base, found.other_base_first[1] if found.other_base else "")
    problems += _check_problems(state, firsts)
    provenance.name = label
    dups, same_pr, grouped = _duplicates(label, provenance, _duplicate_keys(state, repeats))
    state.ossfuzz.finish(repeats)
    matched = _not_repeats(state.matched.table(), repeats)
    keys = state.matched.followed()
    projects = {state.projects[code]: int(count) for code, count in enumerate(firsts.projects) if count}
    pr_repos = {state.pr_repos[code]: int(count) for code, count in enumerate(firsts.pr_repos) if count}
    totals = SideTotals(items=firsts.items, keys_by_kind=dict(firsts.packed), projects=projects,
                        pr_repos=pr_repos, same_pr=same_pr,
                        ossfuzz_keys=state.ossfuzz, grouped_items=grouped, repeat_rows=repeats)
    dataset = Dataset(label, _items_frame(matched, firsts.present, columns), _matched_keys(matched, keys),
                      provenance, sorted(problems, key=lambda p: p.what), totals=totals)
    return dataset, dups


def _key_frame(item_id, kind, value, raw) -> pd.DataFrame:
    return pa.table({"item_id": item_id, "kind": kind, "value": value, "raw": raw}).to_pandas().astype("string")


def _matched_keys(matched: pa.Table, keys: pa.Table | None) -> pd.DataFrame:
    """Every key of the matched items, named by item id (as `read_generic` builds its key frame)."""
    if keys is None or not matched.num_rows:
        empty = pa.array([], pa.string())
        return _key_frame(empty, empty, empty, empty)
    where = pc.index_in(keys.column("row"), value_set=matched.column("row"))
    keys = keys.filter(pc.is_valid(where))
    item = matched.column("item_id").take(pc.drop_null(where))
    return _key_frame(item, keys.column("kind"), keys.column("value"), keys.column("raw"))


def _items_frame(matched: pa.Table, present: int, columns: GenericColumns) -> pd.DataFrame:
    """The matched items as `read_generic` types them, with the columns the whole side has: a column no item
    of the side fills is left out (however the matched ones fill it), unless the side declares it."""
    out = matched.drop_columns([c for c in matched.column_names if c.startswith("_")]).to_pandas()
    # Straight to Int64, as `assemble` does: through float64 (pandas' int column with nulls) a PR past 2**53
    # would lose digits
    out["pr"] = matched.column("pr").cast(pa.int64()).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    for column in out.columns:
        if column not in ("row", "file_row", "pr"):
            out[column] = out[column].astype("string")
    out = out[["item_id", *[c for c in out.columns if c != "item_id"]]]
    declared = ({"project"} if columns.project else set()) | (
        {"repo", "pr", "base_commit"} if columns.repo or columns.pr or columns.base else set())
    absent = [c for bit, c in enumerate(PRESENT_COLUMNS) if not present & (1 << bit) and c not in declared]
    return out.drop(columns=absent).reset_index(drop=True)


def _duplicates(label: str, provenance, keys: pa.Table) -> tuple[pd.DataFrame, dict[str, int], pd.DataFrame]:
    """`overlap.join.duplicates` of the side, from the keys that two items share (the same function on the
    items and keys that can be in a group, so the table is the one a Dataset of every row gives), the same-PR
    counts of the SWE section, and the grouped items (item_id, row, project: what the report shows of them)."""
    frame = keys.to_pandas()
    items = frame[["item_id", "row", "project"]].drop_duplicates("item_id").astype({"item_id": "string",
                                                                                     "project": "string"})
    mini = Dataset(label, items, frame[["item_id", "kind", "value", "raw"]].astype("string"), provenance)
    dups = duplicates(mini)
    same = dups[dups["kind"] == "repo_pr"] if len(dups) else dups
    grouped = items.sort_values("row").reset_index(drop=True)
    return dups, {"groups": int(len(same)), "items": int(same["items"].sum()) if len(same) else 0}, grouped
