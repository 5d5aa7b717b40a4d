"""One SWE row → one item and its PR keys: the column-wise builder and `add_task`, shared by all SWE adapters.

Every item gets `project` = canonical repo, `repo` = repo as written, `pr`, `base_commit` (lowercased),
and the keys of `overlap.ids.github.pr_keys`. Bad rows are counted, never silently dropped.
"""

from __future__ import annotations

import math
from typing import Any

from ..ids.github import canonical_repo, normalize_base, parse_instance_id, parse_pr, pr_keys
from .builder import DatasetBuilder

TEXT = "text_problem_statement"
BASE_FIELDS = ("subset", "project", "repo", "pr", "base_commit")
# What each problem of a PR task means (the column-wise scan, `swe_columns`, reports the same).
DETAILS = {
    "missing_repo": "no repo: no repo_pr keys (base_pr still joins)",
    "malformed_repo": "repo is not a GitHub owner/name",
    "malformed_id": "instance_id is not owner__repo-N: no PR number, only the base key is made",
    "missing_base_commit": "empty base commit: no base or base_pr key",
    "malformed_base_commit": "base commit is not a hex commit id: no base or base_pr key",
}


def pr_details(pr_field: str) -> dict[str, str]:
    """The problems of a PR number read from column `pr_field`."""
    return {"missing_pr": f"no PR number ({pr_field}): only the base key is made",
            "non_numeric_pr": f"{pr_field} is not a PR number: only the base key is made"}


def str_or_none(value: Any) -> str | None:
    """The value as text; None for None, NaN (pandas' empty cell) and blank text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return text if text.strip() else None


def pr_from_id(item_id: str | None) -> int | None:
    """The PR number of an `owner__repo-N` instance id (the number after the last `-`); None otherwise."""
    parsed = parse_instance_id(item_id) if item_id else None
    return parsed[2] if parsed else None


def texts_of(row: dict[str, Any]) -> dict[str, str | None]:
    """The issue text and fix patch of a row in the SWE-bench schema (`problem_statement`, `patch`)."""
    return {TEXT: str_or_none(row.get("problem_statement")), "patch": str_or_none(row.get("patch"))}


def add_task(
    builder: DatasetBuilder,
    item_id: object,
    where: str,
    *,
    repo: object,
    pr: object,
    base: object,
    pr_field: str | None = "pr",
    base_expected: bool = True,
    **fields: Any,
) -> bool:
    """Add one PR task: its item (project, repo, pr, base_commit + `fields`) and its keys.

    `pr_field` names where the PR number came from, for the problem report; None when the set has no PR
    numbers (SWE-bench Pro), so a missing PR is not a problem there; `base_expected=False` likewise for a
    row whose schema has no base commit at all (Multi-SWE-RL's discarded PRs).
    """
    number = parse_pr(pr)
    written = str_or_none(repo)
    project = canonical_repo(written) if written else None
    sha = normalize_base(base)
    item_id = builder.add_item(
        item_id, where, project=project, repo=written.strip() if written else None, pr=number, base_commit=sha,
        **fields,
    )
    if item_id is None:
        return False
    if written is None:
        builder.problem("missing_repo", item_id, DETAILS["missing_repo"])
    elif project is None:
        builder.problem("malformed_repo", f"{item_id}: {written!r}", DETAILS["malformed_repo"])
    if pr_field == "instance_id":
        if number is None:
            builder.problem("malformed_id", item_id, DETAILS["malformed_id"])
    elif pr_field is not None:
        if str_or_none(pr) is None:
            builder.problem("missing_pr", item_id, pr_details(pr_field)["missing_pr"])
        elif number is None:
            builder.problem("non_numeric_pr", f"{item_id}: {pr!r}", pr_details(pr_field)["non_numeric_pr"])
    if str_or_none(base) is None:
        if base_expected:
            builder.problem("missing_base_commit", item_id, DETAILS["missing_base_commit"])
    elif sha is None:
        builder.problem("malformed_base_commit", f"{item_id}: {base!r}", DETAILS["malformed_base_commit"])
    for kind, value, raw in pr_keys(written if project else None, number, sha and str(base)):
        builder.add_key(item_id, kind, value, raw)
    return True
