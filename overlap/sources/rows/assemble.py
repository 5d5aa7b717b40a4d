"""A key scan made a Dataset: rows without an id and repeated ids set aside and counted, what the kept items'
cells say is wrong counted (`row_checks`), the keys of the kept items. The one place every dataset's problems
and repeats are counted, whoever read it."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ...errors import InputError
from ...ids import LABEL
from ...model import Dataset, Problem
from .row_checks import HIDDEN, task_problems


def assemble(scan, spec, label: str, *, allow_empty: bool = False,
             problems: list[Problem] | None = None) -> Dataset:
    """The Dataset of a key scan: rows without an id and repeated ids set aside and counted (the first row of a
    repeated id is the item, the others are `repeats`), what the kept items' cells say is wrong counted
    (`row_checks`), the keys of the kept items. `problems`: more, found while reading (e.g. by a transform)."""
    items = scan.items
    problems = list(problems or ())
    missing = pc.is_null(items.column("item_id"))
    if pc.any(missing).as_py():
        where = items.filter(missing).slice(0, 1).to_pylist()[0]
        problems.append(Problem("missing_id", pc.sum(missing).as_py(), f"{where['file']} row {where['file_row']}",
                                "rows without an id cannot be joined or listed"))
    valid = items.filter(pc.invert(missing))
    first = valid.group_by("item_id", use_threads=False).aggregate([("row", "min")]).column("row_min")
    is_first = pc.is_in(valid.column("row"), value_set=first)
    repeats = valid.filter(pc.invert(is_first))
    if repeats.num_rows:
        problems.append(Problem("duplicate_id", repeats.num_rows, repeats.column("item_id")[0].as_py(),
                                "a repeated id keeps its first row; `filter` drops or keeps every copy with it"))
    kept = valid.filter(is_first)
    if repeats.num_rows and spec.base:
        problems += other_base(kept, repeats)
    if not kept.num_rows and not allow_empty:
        reasons = "; ".join(f"{p.what}: {p.example}" for p in sorted(problems, key=lambda p: p.what))
        raise InputError(f"{label}: no usable rows (no row has an id in column '{spec.id}')"
                         + (f" ({reasons})" if reasons else "") + "; check the files and their columns")
    keys = scan.keys
    if spec.scheme != LABEL:
        problems += _unrecognised(kept, keys, spec.scheme)
    if "_pr_from" in kept.column_names:
        problems += task_problems(kept)
    kept = kept.drop_columns([c for c in (*HIDDEN, "_unrecognised") if c in kept.column_names])
    where = pc.index_in(keys.column("row"), value_set=kept.column("row"))
    keys = keys.filter(pc.is_valid(where))
    item_of_key = kept.column("item_id").take(pc.drop_null(where))
    key_frame = pa.table({"item_id": item_of_key, "kind": keys.column("kind"), "value": keys.column("value"),
                          "raw": keys.column("raw")}).to_pandas()
    provenance = scan.provenance
    provenance.name = label
    repeat_frame = repeats.select(["item_id", "file", "file_row", "row"]).to_pandas()
    dataset = Dataset(label, _item_frame(kept, spec), key_frame, provenance, sorted(problems, key=lambda p: p.what),
                      repeats=repeat_frame)
    dataset.recognition = scan.report  # type: ignore[attr-defined]
    dataset.generic_columns = spec  # type: ignore[attr-defined]  # a written split is read back by the same columns
    return dataset


def _item_frame(table, spec):
    """Items as pandas. A column no item has a value in is left out, unless the set declares it: a PR-task set
    (repo, PR or base columns) keeps repo, pr and base_commit, a set with a project column keeps project."""
    task_columns = bool(spec.repo or spec.pr or spec.base)
    import pandas as pd

    out = table.to_pandas()
    # Straight to Int64: through float64 (pandas' int column with nulls) a PR past 2**53 would lose digits.
    out["pr"] = table.column("pr").cast(pa.int64()).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    for column in out.columns:
        if column not in ("row", "file_row", "pr"):
            out[column] = out[column].astype("string")
    out = out[["item_id", *[c for c in out.columns if c != "item_id"]]]
    if out["project"].isna().all() and not spec.project:
        out = out.drop(columns=["project"])
    for column in () if task_columns else ("repo", "pr", "base_commit"):
        if out[column].isna().all():
            out = out.drop(columns=[column])
    return out.reset_index(drop=True)


def at_other_base(kept, repeats):
    """Which of the `repeats` rows (item_id, base_commit) is at another base commit than the first row of its
    id in `kept`: the same id names two tasks, and only the first row's keys are made."""
    first = kept.column("base_commit").take(pc.index_in(repeats.column("item_id"), value_set=kept.column("item_id")))
    mine = repeats.column("base_commit")
    same = pc.or_(pc.and_(pc.is_null(first), pc.is_null(mine)), pc.fill_null(pc.equal(first, mine), False))
    return pc.invert(same)


def other_base_problem(count: int, example: str) -> list[Problem]:
    if not count:
        return []
    return [Problem("duplicate_id_other_base", count, example,
                    "a repeated id at another base commit: its first row is kept, the others' keys are not")]


def other_base(kept, repeats) -> list[Problem]:
    """The problem of the repeats at another base commit than their id's first row (`at_other_base`)."""
    other = repeats.column("item_id").filter(at_other_base(kept, repeats))
    return other_base_problem(len(other), other[0].as_py() if len(other) else "")


def _unrecognised(kept, keys, scheme: str | None) -> list[Problem]:
    """Items whose id no recogniser takes and that have no key from their other columns either: nothing
    joins them by id; `malformed_id` when the set declares its scheme (the id is not one of its kind).
    (How ids were read is `dataset.recognition`, the summary's `id_recognition`.)"""
    keyed = pc.is_in(kept.column("row"), value_set=keys.column("row"))
    alone = pc.and_(kept.column("_unrecognised"), pc.invert(keyed))
    if "_pr_from" in kept.column_names:
        # A PR task's identity is its repo, PR and base cells (their problems are counted by `row_checks`), or an
        # id that should carry the PR (`malformed_id` when it does not): its id is no scheme's to recognise.
        alone = pc.and_(alone, pc.is_null(kept.column("_pr_from")))
    count = pc.sum(alone).as_py() or 0
    return unrecognised_problem(count, kept.column("item_id").filter(alone).slice(0, 3).to_pylist(), scheme)


def unrecognised_problem(count: int, examples: list[str], scheme: str | None) -> list[Problem]:
    """The problem of `count` items whose id no scheme takes and that have no key (first `examples`):
    `malformed_id` when the set declares its scheme, else `unrecognised_id`."""
    if not count:
        return []
    if scheme:
        return [Problem("malformed_id", count, examples[0], f"not a {scheme} id: kept without a key")]
    return [Problem("unrecognised_id", count, ", ".join(examples),
                    "ids no recogniser takes: kept as items without an id key; name the scheme (--id-scheme) if "
                    "they are ids of a known kind")]
