"""One SWE row → one item and its PR keys: the column-wise builder and `add_task`, shared by all SWE adapters.

Every item gets `project` = canonical repo, `repo` = repo as written, `pr`, `base_commit` (lowercased),
and the keys of `overlap.ids.github.pr_keys`. Bad rows are counted, never silently dropped.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import InputError
from ..ids.github import canonical_repo, normalize_base, parse_instance_id, parse_pr, pr_keys
from ..model import Dataset
from .builder import DatasetBuilder
from .files import FileSource

TEXT = "text_problem_statement"
BASE_FIELDS = ("subset", "project", "repo", "pr", "base_commit")


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


class ColumnBuilder(DatasetBuilder):
    """A DatasetBuilder that keeps items and keys as columns (lists) instead of one dict per row.

    Same rules as DatasetBuilder (rows without an id are counted, a repeated id keeps its first row), a few
    times less memory for the 100k-row training sets.
    """

    def __init__(self, name: str, fields: tuple[str, ...]) -> None:
        super().__init__(name)
        self.fields = fields
        self.items: dict[str, list] = {c: [] for c in ("item_id", "row", *fields)}  # type: ignore[assignment]
        self.keys: dict[str, list] = {c: [] for c in ("item_id", "kind", "value", "raw")}  # type: ignore[assignment]
        self.count = 0

    def add_item(self, item_id: object, where: str, **fields: Any) -> bool:
        unknown = set(fields) - set(self.fields)
        if unknown:  # pragma: no cover - a programming error in an adapter
            raise ValueError(f"{self.name}: unknown item field(s) {sorted(unknown)}")
        item_id = self._claim_id(item_id, where)
        if item_id is None:
            return False
        self.items["item_id"].append(item_id)
        self.items["row"].append(self.count)
        for name in self.fields:
            self.items[name].append(fields.get(name))
        self.count += 1
        return True

    def add_key(self, item_id: str, kind: str, value: object, raw: object) -> None:
        if value is None or str(value) == "":
            return
        self.keys["item_id"].append(str(item_id))
        self.keys["kind"].append(kind)
        self.keys["value"].append(str(value))
        self.keys["raw"].append(str(raw))

    def has(self, item_id: str) -> bool:
        return item_id in self._ids

    def build(self, source: FileSource, what: str = "") -> Dataset:
        if not self.count:
            reasons = "; ".join(f"{k}: {v[0]}" for k, v in sorted(self._problems.items()))
            where = source.location or source.repo_id or self.name
            raise InputError(f"{self.name}: no usable rows in {where}{what}"
                             + (f" ({reasons})" if reasons else "") + "; check the files and their columns")
        for name in [c for c in self.fields if c.startswith(("text_", "in_")) or c == "patch"]:
            if all(v is None for v in self.items[name]):
                del self.items[name]  # a column the source does not have stays absent, not all-null
        return super().build(source, what)


def add_task(
    builder: ColumnBuilder,
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
    added = builder.add_item(
        item_id, where, project=project, repo=written.strip() if written else None, pr=number, base_commit=sha,
        **fields,
    )
    if not added:
        return False
    item_id = str(item_id)
    if written is None:
        builder.problem("missing_repo", item_id, "no repo: no repo_pr keys (base_pr still joins)")
    elif project is None:
        builder.problem("malformed_repo", f"{item_id}: {written!r}", "repo is not a GitHub owner/name")
    if pr_field == "instance_id":
        if number is None:
            builder.problem("malformed_id", item_id,
                            "instance_id is not owner__repo-N: no PR number, only the base key is made")
    elif pr_field is not None:
        if str_or_none(pr) is None:
            builder.problem("missing_pr", item_id, f"no PR number ({pr_field}): only the base key is made")
        elif number is None:
            builder.problem("non_numeric_pr", f"{item_id}: {pr!r}",
                            f"{pr_field} is not a PR number: only the base key is made")
    if str_or_none(base) is None:
        if base_expected:
            builder.problem("missing_base_commit", item_id, "empty base commit: no base or base_pr key")
    elif sha is None:
        builder.problem("malformed_base_commit", f"{item_id}: {base!r}",
                        "base commit is not a hex commit id: no base or base_pr key")
    for kind, value, raw in pr_keys(written if project else None, number, sha and str(base)):
        builder.add_key(item_id, kind, value, raw)
    return True
