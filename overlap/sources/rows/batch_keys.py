"""One batch of rows into items and keys, column-wise (pyarrow.compute): the id scheme recognised in the id
values, the PR keys the repo / PR / base columns give, the fix commit, each row's item id, repo and PR."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...ids import LABEL, compiled
from ...ids.id_arrays import id_strings
from ...ids.pr_columns import canonical_repos, pr_key_parts, pr_numbers, repo_as_written
from ...ids.recognise import recognise
from ...ids.recognition import RecognitionReport
from ..formats.json_rows import as_text
from ..formats.projection import absent
from .columns import GenericColumns, text_field
from .row_checks import check_columns


def _batch_items(batch, spec: GenericColumns, report: RecognitionReport):
    """(items, keys) of one batch as Arrow tables; the report takes this batch's counts."""
    n = batch.num_rows

    def column(name):
        return _cells(batch.column(name))

    context = {name: column(col) for name, col in spec.context().items() if name != "fix"}
    ids = column(spec.id)
    if spec.scheme == LABEL:
        recognition = recognise(pa.nulls(n, pa.string()), context={})
    else:
        recognition = recognise(ids, scheme=spec.scheme, context=context)
    report.merge(recognition.report)
    report.found_columns |= {name for name in spec.wanted() if name != spec.id and not absent(batch.schema.field(name))}
    if not spec.id_fills_blanks:
        recognition.keys = _without_id_fill(recognition.keys, column, spec)
    key_tables = [recognition.keys]
    not_pr = pc.fill_null(pc.not_equal(recognition.recogniser, "github_pr"), True)
    written = repo_as_written(column(spec.repo)) if spec.repo else pa.nulls(n, pa.string())
    numbers = pr_numbers(column(spec.pr)) if spec.pr else pa.nulls(n, pa.int64())
    cell_numbers = numbers
    if (spec.repo or spec.pr or spec.base) and pc.any(not_pr).as_py():
        # Rows whose id is not a PR form still have the PR keys their columns give (as `add_task`).
        parts = pr_key_parts(not_pr, written, numbers, column(spec.base) if spec.base else None)
        key_tables.append(_parts_table(parts, n))
    if spec.fix:
        fixes = recognise(column(spec.fix), scheme="fix_commit").keys
        key_tables.append(fixes)
    keys = pa.concat_tables([t.select(["row", "kind", "value", "raw"]) for t in key_tables])
    item_ids = item_ids_of(ids, written if spec.repo and spec.pr else None, numbers)
    # The PR and repo of a row: its columns' cells where they have one, else what its id says
    # (`owner__repo-N`, `owner/repo#N`, …), as the keys were made.
    if recognition.pr_fields is not None and spec.id_fills_blanks:
        pr_of_keys, repo_of_keys = recognition.pr_fields
    else:  # keys were dropped (a blank repo or PR cell) or parsed one by one: read back from what is left
        pr_of_keys, repo_of_keys = _from_pr_keys(recognition.keys, n)
    numbers = pc.coalesce(numbers, pr_of_keys)
    if spec.pr:  # a PR cell that is there but not a number gives no PR (counted), not the id's
        junk = pc.and_(pc.is_valid(id_strings(column(spec.pr))), pc.is_null(cell_numbers))
        junk = pc.and_(pc.fill_null(junk, False), pc.invert(_blank_cells(column(spec.pr))))
        numbers = pc.if_else(junk, pa.scalar(None, pa.int64()), numbers)
    repo = pc.utf8_trim_whitespace(_text(column(spec.repo))) if spec.repo else pa.nulls(n, pa.string())
    # the row's repo: its repo cell's where that is a GitHub owner/name, else its keys' (what its id says)
    repo_found = pc.coalesce(canonical_repos(written), repo_of_keys) if spec.repo else repo_of_keys
    project = _text(column(spec.project)) if spec.project else repo_found
    # The repo of a pull-request task, whatever the project column says: a row of another scheme (an OSS-Fuzz
    # id or a CVE without a PR cell) is no PR task, though its repo cell names where the bug lives.
    other = other_scheme(column, spec, recognition) if spec.repo or spec.pr or spec.base else None
    pr_repo = _with_id_repos(repo_found, ids, recognition) if spec.id_fills_blanks else repo_found
    if other is not None:
        pr_repo = pc.if_else(other, pa.scalar(None, pa.string()), pr_repo)
    table = {"item_id": item_ids, "project": project, "repo": repo, "pr_repo": pr_repo, "pr": numbers,
             "base_commit": _base_from_keys(keys, n) if spec.base else pa.nulls(n, pa.string())}
    if spec.text:
        table[text_field(spec.text)] = _text(column(spec.text))
    if spec.patch:
        table["patch"] = _text(column(spec.patch))
    for name, source in spec.item_fields:
        table[name] = _text(column(source))
    table["_unrecognised"] = pc.is_null(recognition.recogniser)
    if spec.repo or spec.pr or spec.base:
        pr_from = _pr_from(column, spec, recognition)
        table.update(check_columns(column, spec, cell_numbers, table["base_commit"], pr_from, written))
        table["_other_scheme"] = other
    return pa.table(table), keys


def _with_id_repos(repos, ids, recognition):
    """`repos` with, for a PR id whose keys name no repo (its PR cell is no number, so it has no PR key), the
    canonical repo its id names: the task is in that repo whatever its PR cell says."""
    lacking = pc.and_(pc.is_null(repos), pc.fill_null(pc.equal(recognition.recogniser, "github_pr"), False))
    if not pc.any(lacking).as_py():
        return repos
    again = recognise(ids.filter(lacking), scheme="github_pr")  # the ids alone, without the row's cells
    found = again.pr_fields[1] if again.pr_fields is not None else \
        _from_pr_keys(again.keys, pc.sum(lacking).as_py())[1]
    return pc.replace_with_mask(repos, lacking, pa.array(found, pa.string()) if not isinstance(found, pa.Array)
                                else found.cast(pa.string()))


def _cells(array):
    """A column's cells as scalars: a list or object cell as its JSON text. The JSON reader gives a batch of such
    cells alone as a list or struct column (no text: a missing PR, repo or base) and beside text as their JSON
    text (a cell that is no PR, repo or base): read alike, where batches split a file changes no count."""
    if not pa.types.is_nested(array.type):
        return array
    return pa.array([as_text(v) for v in array.to_pylist()], pa.string())


def item_ids_of(ids, written=None, numbers=None):
    """Each row's item id: its id cell as text, null where missing or blank; given its repo as written and its
    PR number (a set with repo and PR columns), a row without one has its PR's conventional id, `owner__name-N`.
    The one definition: the scan and the streamed join's clean-id list both read ids through it."""
    item_ids = id_strings(ids)
    # blank: empty or only whitespace, as `utf8_trim_whitespace` sees it (the same over every code point), found
    # without a trimmed copy of every id; ids with no blank among them are kept as they are
    blank = pc.or_(pc.utf8_is_space(item_ids), pc.equal(pc.binary_length(item_ids), 0))
    if pc.any(blank).as_py():
        item_ids = pc.if_else(pc.fill_null(blank, True), pa.scalar(None, pa.string()), item_ids)
    if written is not None:
        made = pc.binary_join_element_wise(pc.replace_substring(written, "/", "__", max_replacements=1),
                                           numbers.cast(pa.string()), "-")
        item_ids = pc.coalesce(item_ids, made)
    return item_ids


def clean_id_columns(spec: GenericColumns) -> list[str]:
    """The columns `item_ids_of` reads: the id, and the repo and PR columns when the set has both."""
    return [spec.id, *((spec.repo, spec.pr) if spec.repo and spec.pr else ())]


def item_ids_of_batch(batch, spec: GenericColumns):
    """`item_ids_of` a batch read with (at least) `clean_id_columns(spec)`."""
    if spec.repo and spec.pr:
        return item_ids_of(batch.column(spec.id), repo_as_written(batch.column(spec.repo)),
                           pr_numbers(batch.column(spec.pr)))
    return item_ids_of(batch.column(spec.id))


def _without_id_fill(keys, column, spec: GenericColumns):
    """`keys` without what a row's id gave in place of its blank repo or PR cell: for a set whose repo and PR
    columns are the task's identity, a blank cell means no repo (PR) key, as its own harness reads it."""
    rows = keys.column("row")
    for name, kinds in ((spec.repo, ("repo_pr", "repo_pr_exact")), (spec.pr, ("repo_pr", "repo_pr_exact", "base_pr"))):
        if not name:
            continue
        blank_rows = pc.indices_nonzero(_blank_cells(column(name)))
        hit = pc.and_(pc.is_in(rows, value_set=blank_rows), pc.is_in(keys.column("kind"), value_set=pa.array(kinds)))
        keys = keys.filter(pc.invert(hit))
        rows = keys.column("row")
    return keys


def _blank_cells(cell):
    if pa.types.is_floating(cell.type):
        return pc.fill_null(pc.is_nan(cell), True)
    text = id_strings(cell)
    return pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(text)), 0), True)


def _pr_from(column, spec: GenericColumns, recognition) -> Any:
    """Per row, where its PR number comes from: the PR column when the set has one, else its id
    (`owner__repo-N`); null for a row that owes no PR number: one whose id is of another scheme (an OSS-Fuzz
    id in a mix; with a PR column, when its PR cell is blank too: `other_scheme`). (A batch whose PR cells are
    all empty still has the column: where batches split a file must not change what is counted.)"""
    other = other_scheme(column, spec, recognition)
    if spec.pr:
        return pc.if_else(other, pa.scalar(None, pa.string()), pa.scalar(spec.pr))
    if spec.scheme == LABEL:  # ids that only name the row owe no PR number
        return pa.nulls(len(recognition.recogniser), pa.string())
    return pc.if_else(other, pa.scalar(None, pa.string()), pa.scalar("id"))


def other_scheme(column, spec: GenericColumns, recognition) -> Any:
    """Rows that are no PR task: their id is of another scheme (an OSS-Fuzz id or a CVE in a mix of PR tasks)
    and, when the set has a PR column, their PR cell is blank. They owe no repo, PR or base cell, so none is
    counted missing for them."""
    other = pc.fill_null(pc.not_equal(recognition.recogniser, "github_pr"), False)
    return pc.and_(other, _blank_cells(column(spec.pr))) if spec.pr else other


def _text(array):
    """A text column as string; a blank cell is no text (null)."""
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        text = array.cast(pa.string())
    else:
        text = id_strings(array)
    return pc.if_else(_blank_cells(text), pa.scalar(None, pa.string()), text)


def _from_pr_keys(keys, n: int, want_repo: bool = True):
    """(each row's PR number, its canonical repo or None when not `want_repo`) from its keys: one compiled pass
    over the key values for a large batch (placing each row's last value, no copy of the keys), else (and when
    the pass cannot read a value) `_pr_from_keys` and `_repo_from_keys`, its reference."""
    module = compiled.kernels(keys.num_rows)
    if module is not None and keys.num_rows:
        kind = keys.column("kind")
        number_from = pc.fill_null(pc.is_in(kind, value_set=PR_NUMBER_KINDS), False).to_numpy(zero_copy_only=False)
        head_from = pc.fill_null(pc.equal(kind, "repo_pr"), False).to_numpy(zero_copy_only=False) if want_repo \
            else np.zeros(keys.num_rows, bool)
        found = compiled.by_row_after_last(keys.column("value").combine_chunks(), keys.column("row").to_numpy(),
                                           number_from, head_from, "#", n, module)
        if found is not None:
            return found[0], (found[1] if want_repo else None)
    return _pr_from_keys(keys, n), (_repo_from_keys(keys, n) if want_repo else None)


PR_NUMBER_KINDS = pa.array(["base_pr", "repo_pr_exact"])


def _pr_from_keys(keys, n: int):
    """Each row's PR number from its `repo_pr_exact` or `base_pr` key (int64, null: none): both end in the
    same `#<N>`."""
    chosen = keys.filter(pc.is_in(keys.column("kind"), value_set=PR_NUMBER_KINDS))
    halves = pc.split_pattern(chosen.column("value"), "#", max_splits=1, reverse=True)
    return _by_row(chosen.column("row"), pc.cast(pc.list_element(halves, 1), pa.int64()), n)


def _repo_from_keys(keys, n: int):
    """Each row's canonical repo from its `repo_pr` key (string, null: none)."""
    chosen = keys.filter(pc.equal(keys.column("kind"), "repo_pr"))
    halves = pc.split_pattern(chosen.column("value"), "#", max_splits=1, reverse=True)
    return _by_row(chosen.column("row"), pc.list_element(halves, 0), n)


def _base_from_keys(keys, n: int):
    """Each row's base commit (normalised) from its `base` key: every row with a base commit has one (from
    its PR id, or from the columns when the id is not a PR)."""
    chosen = keys.filter(pc.equal(keys.column("kind"), "base"))
    return _by_row(chosen.column("row"), chosen.column("value"), n)


def _by_row(rows, values, n: int):
    """`values` placed at their `rows` of an n-row column (null elsewhere; a later value wins)."""
    where = np.full(n, -1, np.int64)
    where[rows.to_numpy()] = np.arange(len(rows), dtype=np.int64)
    return values.take(pa.array(where, mask=where < 0))


def _parts_table(parts, n: int):
    rows = pa.array(np.arange(n, dtype=np.int64))
    tables = []
    for mask, kind, value, raw in parts:
        mask = pc.fill_null(pc.and_(mask, pc.is_valid(value)), False)
        count = pc.sum(mask).as_py() or 0
        if count:
            tables.append(pa.table({"row": rows.filter(mask), "kind": pa.array([kind] * count, pa.string()),
                                    "value": value.filter(mask), "raw": raw.filter(mask)}))
    schema = pa.schema([("row", pa.int64()), ("kind", pa.string()), ("value", pa.string()), ("raw", pa.string())])
    return pa.concat_tables(tables) if tables else schema.empty_table()
