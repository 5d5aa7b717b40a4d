"""SWE rows → items, PR keys and problems column-wise (pyarrow.compute): what `swe_tasks.add_task` does row by
row, for a whole table of key columns at once.

Values the vectorised reading could read differently from the scalar parsers (ids and base commits that are
not ASCII text, ids that are floats, cells of any other type) go through the row path's own functions, so
every rule stays theirs; repos go through them once per distinct value. The result is the row path's, item
for item, key for key and problem for problem (`tests/swe/test_columnwise_scan.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..ids.github import canonical_repo, instance_id_for, normalize_base, parse_pr
from ..ids.recognise import base_commits, instance_prs, map_distinct, pr_numbers
from .builder import DatasetBuilder
from .swe_tasks import DETAILS, pr_details, pr_from_id, str_or_none

NONE = pa.scalar(None, pa.string())
OTHER_BASE = "a repeated id at another base commit: its first row is kept, the others' keys are not"
# Per row: the item id (after the repo + PR fallback), PR number, repo as written, trimmed and canonical, the
# base commit normalised and as written (trimmed), and whether the PR and base cells are blank.
DERIVED = pa.schema([("item_id", pa.string()), ("pr", pa.int64()), ("written", pa.string()),
                     ("repo", pa.string()), ("project", pa.string()), ("sha", pa.string()),
                     ("raw_sha", pa.string()), ("pr_blank", pa.bool_()), ("base_blank", pa.bool_())])


@dataclass
class RepoForms:
    """One distinct repo cell, read by the row path's functions."""

    written: str | None
    repo: str | None  # written, trimmed
    project: str | None
    id_prefix: str | None  # `owner__name-` of the fallback id (`instance_id_for`)


def _repo_forms(value: Any) -> RepoForms:
    written = str_or_none(value)
    project = canonical_repo(written) if written else None
    prefix = instance_id_for(written.strip(), 0)[:-1] if project else None
    return RepoForms(written, written.strip() if written else None, project, prefix)


def _column(table, name: str) -> Any:
    if name not in table.column_names:
        return pa.nulls(table.num_rows, pa.null())
    column = table.column(name)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _is_text(array) -> bool:
    kind = array.type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)


def _text(array):
    """A text column as string, null where `str_or_none` is None (blank text)."""
    text = array.cast(pa.string())
    blank = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(text)), 0), True)
    return pc.if_else(blank, NONE, text)


def _odd_rows(array, *, ints: bool = False, floats: bool = False, any_text: bool = False):
    """Rows the vectorised reading leaves to the scalar functions: non-null cells of another type than the
    ones named, and text that is not ASCII (unless `any_text`)."""
    kind = array.type
    if pa.types.is_null(kind) or (ints and pa.types.is_integer(kind)) or (floats and pa.types.is_floating(kind)):
        return pa.repeat(pa.scalar(False), len(array))
    if _is_text(array):
        return pa.repeat(pa.scalar(False), len(array)) if any_text else \
            pc.invert(pc.fill_null(pc.string_is_ascii(array.cast(pa.string())), True))
    return pc.is_valid(array)


def derive(table, pr_column: bool) -> Any:
    """The DERIVED columns of every row of `table` (key columns `instance_id`, `repo`, `pull_number`,
    `base_commit`, any of them absent). `pr_column`: the PR is `pull_number` when the table has it, else the
    number of an `owner__repo-N` id (SWE-rebench-V2)."""
    n = table.num_rows
    ids, repo, base = _column(table, "instance_id"), _column(table, "repo"), _column(table, "base_commit")
    use_pull = pr_column and "pull_number" in table.column_names
    pull = _column(table, "pull_number") if use_pull else pa.nulls(n, pa.null())
    odd = pc.or_(_odd_rows(ids, ints=True), _odd_rows(repo, any_text=True))
    odd = pc.or_(odd, pc.or_(_odd_rows(pull, ints=True, floats=True), _odd_rows(base)))

    # Cells of other types are odd rows: read by `scalar_row` below, null here.
    if _is_text(ids):
        item_id = _text(ids)
    else:
        item_id = ids.cast(pa.string()) if pa.types.is_integer(ids.type) else pa.nulls(n, pa.string())
    if use_pull:
        number = pr_numbers(pull)
        if _is_text(pull):
            pr_blank = pc.is_null(_text(pull))
        elif pa.types.is_floating(pull.type):
            pr_blank = pc.fill_null(pc.is_nan(pull), True)
        else:
            pr_blank = pc.is_null(pull)
    else:
        number = instance_prs(item_id)
        pr_blank = pc.is_null(number)
    forms = _distinct(repo if _is_text(repo) else pa.nulls(n, pa.null()), _repo_forms)
    written, trimmed, project, prefix = (forms(lambda f, a=a: getattr(f, a))
                                         for a in ("written", "repo", "project", "id_prefix"))
    fallback = pc.and_(pc.is_null(item_id), pc.and_(pc.is_valid(prefix), pc.is_valid(number)))
    item_id = pc.if_else(fallback, pc.binary_join_element_wise(prefix, number.cast(pa.string()), ""), item_id)
    if pa.types.is_null(base.type):
        sha = raw_sha = pa.nulls(n, pa.string())
        base_blank = pa.repeat(pa.scalar(True), n)
    else:
        sha, raw_sha = base_commits(base)
        base_blank = pc.is_null(_text(base)) if _is_text(base) else pc.is_null(base)
    derived = pa.table([item_id, number, written, trimmed, project, sha, raw_sha, pr_blank, base_blank],
                       schema=DERIVED)
    if pc.any(odd).as_py():
        derived = _scalar_rows(derived, table, odd, pr_column)
    return derived


def _distinct(array, read: Callable[[Any], RepoForms]) -> Callable[[Callable[[RepoForms], Any]], Any]:
    """`read` once per distinct value of `array`; returns a function giving a string column of one part."""
    if pa.types.is_null(array.type):
        return lambda part: pa.nulls(len(array), pa.string())
    memo: dict[Any, RepoForms] = {}

    def forms(value):
        if value not in memo:
            memo[value] = read(value)
        return memo[value]

    return lambda part: map_distinct(array, lambda v: part(forms(v)), pa.string())


def scalar_row(row: dict[str, Any], pr_column: bool) -> tuple:
    """The DERIVED values of one row by the row path's functions (`swe_rebench._rebench_identity`,
    `add_task`)."""
    item_id = str_or_none(row.get("instance_id"))
    pr = row.get("pull_number") if pr_column and "pull_number" in row else pr_from_id(item_id)
    forms = _repo_forms(row.get("repo"))
    number = parse_pr(pr)
    if item_id is None and forms.project and number is not None:
        item_id = forms.id_prefix + str(number)
    base = row.get("base_commit")
    sha = normalize_base(base)
    return (item_id, number, forms.written, forms.repo, forms.project, sha,
            str(base).strip() if sha else None, str_or_none(pr) is None, str_or_none(base) is None)


def _scalar_rows(derived, table, rows, pr_column: bool):
    positions = pc.indices_nonzero(rows)
    values = [scalar_row(row, pr_column) for row in table.take(positions).to_pylist()]
    columns = []
    for index, field in enumerate(DERIVED):
        replacement = pa.array([v[index] for v in values], field.type)
        columns.append(pc.replace_with_mask(derived.column(index).combine_chunks(), rows, replacement))
    return pa.table(columns, schema=DERIVED)


def locate(derived, label: str, first_row: int, pr_field: str):
    """`derived` (rows of one file) with where each row sits: `file`, `file_row`, `row` (after `first_row` rows
    of the files before), `where` (for problem reports, as `file_rows` names a parquet row) and `pr_field`."""
    n = derived.num_rows
    file_row = pa.array(np.arange(n, dtype=np.int64))
    where = pc.binary_join_element_wise(pa.repeat(pa.scalar(f"{label} row "), n), file_row.cast(pa.string()), "")
    return (derived.append_column("file", pa.repeat(pa.scalar(label), n)).append_column("file_row", file_row)
            .append_column("row", pc.add(file_row, first_row)).append_column("where", where)
            .append_column("pr_field", pa.repeat(pa.scalar(pr_field), n)))


LOCATED = locate(DERIVED.empty_table(), "", 0, "").schema


# --- items, keys and problems --------------------------------------------------------------------------


def add_rows(builder: DatasetBuilder, rows, cells: Callable[[str, list[int]], list], *,
             other_base: bool = False) -> None:
    """Fill `builder` (fresh: no item yet) with the items, keys, repeats and problems of `rows`: DERIVED
    columns plus `file`, `file_row`, `row`, `where` and `pr_field` (per row: where its PR came from), in
    read order. `cells(column, rows)`: those rows' cells as read (for problem examples). `other_base`: count a
    repeated id at another base commit (`duplicate_id_other_base`), as SWE-rebench does."""
    rows = rows.combine_chunks()
    item_id = rows.column("item_id")
    missing = pc.is_null(item_id)
    for where in rows.column("where").filter(missing).to_pylist():
        builder.problem("missing_id", where, "rows without an id cannot be joined or listed")
    valid = rows.filter(pc.invert(missing))
    firsts = valid.group_by("item_id", use_threads=False).aggregate([("row", "min")])
    is_first = pc.is_in(valid.column("row"), value_set=firsts.column("row_min"))
    repeats = valid.filter(pc.invert(is_first))
    items = valid.filter(is_first)
    for item in repeats.column("item_id").to_pylist():
        builder.problem("duplicate_id", item, "a repeated id keeps its first row; `filter` drops or keeps every "
                                              "copy with it")
    if other_base and repeats.num_rows:
        first = pc.index_in(repeats.column("item_id"), value_set=items.column("item_id"))
        first_sha = items.column("sha").take(first)
        same = pc.or_(pc.and_(pc.is_null(first_sha), pc.is_null(repeats.column("sha"))),
                      pc.fill_null(pc.equal(first_sha, repeats.column("sha")), False))
        for item in repeats.column("item_id").filter(pc.invert(same)).to_pylist():
            builder.problem("duplicate_id_other_base", item, OTHER_BASE)
    _problems(builder, items, cells)
    frame = items.select(["item_id", "file", "file_row", "row"]).to_pandas(types_mapper=_pandas_type)
    builder.items = {
        "item_id": frame["item_id"], "file": frame["file"], "file_row": frame["file_row"], "row": frame["row"],
        "subset": pd.Series(pd.NA, index=frame.index, dtype="string"),
        **{name: items.column(column).to_pandas(types_mapper=_pandas_type)
           for name, column in (("project", "project"), ("repo", "repo"), ("pr", "pr"), ("base_commit", "sha"))},
    }
    builder.keys = _keys(items).to_pandas(types_mapper=_pandas_type).to_dict("series")
    builder.repeats = repeats.select(["item_id", "file", "file_row", "row"]).to_pandas(
        types_mapper=_pandas_type).to_dict("series")


def _pandas_type(kind):
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pd.StringDtype()
    if pa.types.is_integer(kind):
        return pd.Int64Dtype()
    return None


def _problems(builder: DatasetBuilder, items, cells) -> None:
    """The problems `add_task` counts, in item order, each with its example as `add_task` writes it."""
    item_id = items.column("item_id")
    no_repo = pc.is_null(items.column("written"))
    checks = [("missing_repo", no_repo, None),
              ("malformed_repo", pc.and_(pc.invert(no_repo), pc.is_null(items.column("project"))), "written")]
    numbered = pc.is_null(items.column("pr"))
    from_id = pc.equal(items.column("pr_field"), "instance_id")
    from_column = pc.equal(items.column("pr_field"), "pull_number")
    checks.append(("malformed_id", pc.and_(from_id, numbered), None))
    checks.append(("missing_pr", pc.and_(from_column, items.column("pr_blank")), None))
    checks.append(("non_numeric_pr", pc.and_(from_column, pc.and_(pc.invert(items.column("pr_blank")), numbered)),
                   "pull_number"))
    checks.append(("missing_base_commit", items.column("base_blank"), None))
    checks.append(("malformed_base_commit", pc.and_(pc.invert(items.column("base_blank")),
                                                    pc.is_null(items.column("sha"))), "base_commit"))
    details = DETAILS | pr_details("pull_number")
    for what, mask, shown in checks:
        mask = pc.fill_null(mask, False)
        if not pc.any(mask).as_py():
            continue
        ids = item_id.filter(mask).to_pylist()
        if shown is None:
            examples = ids
        elif shown == "written":
            examples = [f"{i}: {v!r}" for i, v in zip(ids, items.column("written").filter(mask).to_pylist(),
                                                       strict=True)]
        else:
            shown_cells = cells(shown, items.column("row").filter(mask).to_pylist())
            examples = [f"{i}: {v!r}" for i, v in zip(ids, shown_cells, strict=True)]
        for example in examples:
            builder.problem(what, example, details[what])


def _keys(items):
    """`github.pr_keys` of every item, in item order then kind order (repo_pr, repo_pr_exact, base_pr, base)."""
    number = items.column("pr").cast(pa.string())
    repo = items.column("repo")
    exact = pc.binary_join_element_wise(repo, number, "#")
    with_repo = pc.and_(pc.is_valid(items.column("project")), pc.is_valid(number))
    with_base = pc.is_valid(items.column("sha"))
    parts = [
        (with_repo, "repo_pr", pc.binary_join_element_wise(items.column("project"), number, "#"), exact),
        (with_repo, "repo_pr_exact", exact, exact),
        (pc.and_(with_base, pc.is_valid(number)), "base_pr",
         pc.binary_join_element_wise(items.column("sha"), number, "#"),
         pc.binary_join_element_wise(items.column("raw_sha"), number, "#")),
        (with_base, "base", items.column("sha"), items.column("raw_sha")),
    ]
    items = items.combine_chunks()
    order = pa.array(np.arange(items.num_rows, dtype=np.int64))
    tables = []
    for rank, (mask, kind, value, raw) in enumerate(parts):
        mask = pc.fill_null(mask, False)
        count = pc.sum(mask).as_py() or 0
        tables.append(pa.table({"order": order.filter(mask), "rank": pa.repeat(pa.scalar(rank), count),
                                "item_id": items.column("item_id").filter(mask),
                                "kind": pa.repeat(pa.scalar(kind), count),
                                "value": value.filter(mask), "raw": raw.filter(mask)}))
    keys = pa.concat_tables(tables).sort_by([("order", "ascending"), ("rank", "ascending")])
    return keys.select(["item_id", "kind", "value", "raw"])
