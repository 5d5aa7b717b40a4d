"""Multi-SWE-bench (one JSON-lines file per language folder) and Multi-SWE-RL's discarded PRs (one file),
both in Multi-SWE-bench's schema: `org`, `repo`, `number`, `base.sha`, `resolved_issues`, `fix_patch`."""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..ids.github import parse_pr
from ..model import Dataset
from .builder import DatasetBuilder
from .files import FileSource
from .spec import DatasetSpec
from .swe_files import file_rows, list_files
from .swe_tasks import BASE_FIELDS, TEXT, add_task, str_or_none

MSB_COLUMNS = ["instance_id", "org", "repo", "number", "base", "resolved_issues", "fix_patch"]
MSB_LANGUAGES = ("c", "cpp", "go", "java", "js", "rust", "ts")
MSB_FIELDS = (*BASE_FIELDS, TEXT, "patch")


def _issues_text(issues: Any) -> str | None:
    if not isinstance(issues, list):
        return None
    parts = []
    for issue in issues:
        if isinstance(issue, dict):
            text = "\n".join(t for t in (str_or_none(issue.get("title")), str_or_none(issue.get("body"))) if t)
            if text:
                parts.append(text)
    return "\n\n".join(parts) or None


def _add_msb_row(builder: DatasetBuilder, row: dict[str, Any], where: str, subset: str | None) -> None:
    org, name = str_or_none(row.get("org")), str_or_none(row.get("repo"))
    repo = f"{org.strip()}/{name.strip()}" if org and name else None
    number = row.get("number")
    item_id = str_or_none(row.get("instance_id"))
    if item_id is None and org and name and parse_pr(number) is not None:
        item_id = f"{org.strip()}__{name.strip()}-{parse_pr(number)}"  # the documented `{org}__{repo}-{number}`
    base = row.get("base")
    sha = base.get("sha") if isinstance(base, dict) else None
    add_task(builder, item_id, where, repo=repo, pr=number, base=sha, pr_field="number", subset=subset,
             base_expected="base" in row,
             text_problem_statement=_issues_text(row.get("resolved_issues")),
             patch=str_or_none(row.get("fix_patch")))


def _read_msb(source: FileSource, spec: DatasetSpec, files: list[tuple[str, str | None]]) -> Dataset:
    """Items of the (relpath, subset) files, in order."""
    builder = DatasetBuilder(spec.name, MSB_FIELDS)
    for relpath, subset in files:
        for where, row in file_rows(source, builder, relpath, "jsonl", MSB_COLUMNS):
            _add_msb_row(builder, row, where, subset)
    return builder.build(source)


def _under_root(relpath: str, spec: DatasetSpec) -> str:
    """The path below `extra.root` (the folder that holds the language folders: Multi-SWE-RL keeps them in a
    dated folder beside files of its own), or the path itself when the declaration names no root."""
    root = spec.extra.get("root")
    return relpath[len(root) + 1:] if root and relpath.startswith(root + "/") else relpath


def _msb_subset(relpath: str, spec: DatasetSpec) -> str | None:
    relpath = _under_root(relpath, spec)
    folder = relpath.split("/", 1)[0] if "/" in relpath else None
    return spec.extra.get("folder_subsets", {}).get(folder, folder)


def _language_files(source: FileSource, spec: DatasetSpec) -> list[str]:
    """`<language>/*.jsonl` under the root: a file directly in the root (Multi-SWE-RL's list of discarded
    PRs) is no language folder's and is left out, as are the excluded folders."""
    root = spec.extra.get("root")
    excluded = tuple(spec.extra.get("exclude_folders", ()))
    listed = list_files(source, ".jsonl")
    if root:
        listed = [f for f in listed if f.startswith(root + "/")]
    below = [(f, _under_root(f, spec)) for f in listed]
    return [f for f, rel in below if "/" in rel and rel.split("/", 1)[0] not in excluded]


def load_multi_swe_bench(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    if single:
        return _read_msb(source, spec, [("", None)])
    files = _language_files(source, spec)
    if subsets:
        files = [f for f in files if _msb_subset(f, spec) in subsets]
    if not files:
        raise InputError(f"{source.location or source.repo_id}: no <language>/*.jsonl files found"
                         + (f" for subset(s) {', '.join(subsets)}" if subsets else ""))
    return _read_msb(source, spec, [(f, _msb_subset(f, spec)) for f in files])


def load_multi_swe_rl_discarded(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...],
                                single: bool) -> Dataset:
    return _read_msb(source, spec, [("" if single else spec.files[""], None)])
