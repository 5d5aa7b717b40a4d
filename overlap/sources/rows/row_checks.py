"""What a task's own cells say is wrong with it, counted as problems: a repo that is missing or not a GitHub
`owner/name`, a PR number that is missing or not a number, an id that should carry the PR and does not, a base
commit that is missing or not a hex commit id. Each check names the first item it found and how many.

Per batch, `check_columns` keeps what the checks need as hidden columns (`_…`) of the items; once repeats are
set aside, `task_problems` counts them over the items kept (a repeated row is one problem, `duplicate_id`, not
two).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ...ids.id_arrays import id_strings
from ...model import Problem
from ..formats.json_rows import as_text

DETAILS = {
    "missing_repo": "no repo: the repo_pr keys come from the id when it names the repo, else none "
                    "(base_pr still joins)",
    "malformed_repo": "repo is not a GitHub owner/name",
    "malformed_id": "instance_id is not owner__repo-N: no PR number, only the base key is made",
    "missing_base_commit": "empty base commit: no base or base_pr key",
    "malformed_base_commit": "base commit is not a hex commit id: no base or base_pr key",
}
HIDDEN = ("_written", "_repo_ok", "_pr_cell", "_pr_blank", "_base_cell", "_base_blank", "_pr_from",
          "_other_scheme")
# Every check `problem_rows` may run, in a fixed order (a streamed side keeps each row's as bits).
CHECKS = ("missing_repo", "malformed_repo", "malformed_id", "missing_pr", "non_numeric_pr", "missing_base_commit",
          "malformed_base_commit")


def _blank(text) -> Any:
    return pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(text)), 0), True)


def _reprs(column, mask) -> Any:
    """Python's repr of the cells where `mask` holds (the problem examples), null elsewhere: computed for
    those few cells only. A number is shown as the text it reads as beside text (`-1` as `'-1'`): a JSON
    column that mixes numbers and text is text in one batch and numbers in the next, and the example must
    not depend on where batches split the file."""
    mask = pc.fill_null(mask, False)
    if not pc.any(mask).as_py():
        return pa.nulls(len(column), pa.string())
    values = column.filter(mask).to_pylist()
    shown = pa.array([repr(v if isinstance(v, str) else as_text(v)) for v in values], pa.string())
    where = pc.subtract(pc.cumulative_sum(mask.cast(pa.int64())), 1)
    return pc.if_else(mask, shown.take(pc.if_else(mask, where, 0)), pa.scalar(None, pa.string()))


def check_columns(column, spec, numbers, sha, pr_from, repo) -> dict[str, Any]:
    """The hidden columns of one batch: the repo cell as written and whether it is a GitHub owner/name (`repo`:
    the cell read as one, null where it is not; never the id's repo nor the project column), whether the PR and
    base cells are blank, the repr of the cells that are not blank yet give no PR number (`numbers`) or base
    commit (`sha`), and where the PR comes from (`pr_from`: the PR column's name, `id`, or None when the set has
    no PR numbers)."""
    n = len(numbers)
    out: dict[str, Any] = {}
    if spec.repo:
        text = id_strings(column(spec.repo))
        out["_written"] = pc.if_else(_blank(text), pa.scalar(None, pa.string()), text)
        out["_repo_ok"] = pc.is_valid(repo)
    if spec.pr:
        cell = column(spec.pr)
        if pa.types.is_floating(cell.type):
            blank = pc.fill_null(pc.is_nan(cell), True)
        elif pa.types.is_null(cell.type):
            blank = pa.repeat(pa.scalar(True), n)
        else:
            blank = _blank(id_strings(cell))
        out["_pr_blank"] = blank
        out["_pr_cell"] = _reprs(cell, pc.and_(pc.invert(blank), pc.is_null(numbers)))
    if spec.base:
        cell = column(spec.base)
        # A column of nulls only (a JSON batch whose rows all lack it) is blank cells, as for the PR column: the
        # count must not depend on where batches happen to split the file.
        blank = _blank(id_strings(cell))
        out["_base_blank"] = blank
        out["_base_cell"] = _reprs(cell, pc.and_(pc.invert(blank), pc.is_null(sha)))
    out["_pr_from"] = pr_from
    return out


def problem_rows(items) -> list[tuple[str, Any, Any, Any]]:
    """Per check, (what, the rows it holds for, each row's example, each row's detail) over `items` (an Arrow
    table with `item_id`, `project`, `pr`, `base_commit` and the hidden columns); the example and detail are
    null where the check does not hold. A streamed side keeps these per row; `task_problems` sums them."""
    names = items.column_names
    item_id = items.column("item_id")
    checks = []
    pr_task = pc.invert(items.column("_other_scheme"))  # a row of another scheme in a mix owes no PR cells
    if "_written" in names:
        written = items.column("_written")
        checks.append(("missing_repo", pc.and_(pr_task, pc.is_null(written)), None))
        malformed = pc.and_(pc.is_valid(written), pc.invert(items.column("_repo_ok")))
        checks.append(("malformed_repo", malformed,
                       pc.binary_join_element_wise(item_id, _reprs(written, malformed), ": ")))
    no_pr = pc.is_null(items.column("pr"))
    pr_from = items.column("_pr_from")
    from_id = pc.fill_null(pc.equal(pr_from, "id"), False)
    checks.append(("malformed_id", pc.and_(from_id, no_pr), None))
    if "_pr_blank" in names:
        from_column = pc.fill_null(pc.not_equal(pr_from, "id"), False)
        blank = items.column("_pr_blank")
        checks.append(("missing_pr", pc.and_(from_column, blank), None))
        checks.append(("non_numeric_pr", pc.and_(from_column, pc.is_valid(items.column("_pr_cell"))),
                       pc.binary_join_element_wise(item_id, items.column("_pr_cell"), ": ")))
    if "_base_blank" in names:
        blank = items.column("_base_blank")
        cell = items.column("_base_cell")
        checks.append(("missing_base_commit", pc.and_(pr_task, blank), None))
        checks.append(("malformed_base_commit", pc.is_valid(cell), pc.binary_join_element_wise(item_id, cell, ": ")))
    none = pa.scalar(None, pa.string())
    out = []
    for what, mask, example in checks:
        mask = pc.fill_null(mask, False)
        shown = pc.if_else(mask, example if example is not None else item_id, none)
        if what in DETAILS:
            detail = pc.if_else(mask, pa.scalar(DETAILS[what]), none)
        else:
            said = {"missing_pr": ("no PR number (", "): only the base key is made"),
                    "non_numeric_pr": ("", " is not a PR number: only the base key is made")}[what]
            text = pc.binary_join_element_wise(said[0], pc.cast(pr_from, pa.string()), said[1], "")
            detail = pc.if_else(mask, text, none)
        out.append((what, mask, shown, detail))
    return out


def task_problems(items) -> list[Problem]:
    """The problems of the kept items (`problem_rows`), in item order: each counted, with its first row's
    example and detail."""
    problems = []
    for what, mask, example, detail in problem_rows(items):
        count = pc.sum(mask).as_py() or 0
        if count:
            first = pc.index(mask, True).as_py()
            problems.append(Problem(what, count, example[first].as_py(), detail[first].as_py()))
    return problems
