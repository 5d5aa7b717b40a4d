"""Benchmarks in SWE-bench's schema (`instance_id`, `repo`, `base_commit`, `problem_statement`, `patch`):
SWE-bench (+ Verified) and SWE-bench Multilingual (parquet, PR = the id's trailing number), SWE-PolyBench
(+ Verified; CSV with `pull_number`) and SWE-bench Pro (parquet configs merged; no PR numbers).

A benchmark whose spec names `member_of` gets a flag column (e.g. `in_verified`) from the subset's repo.
"""

from __future__ import annotations

from typing import Any

from ..model import Dataset
from .builder import DatasetBuilder
from .files import FileSource
from .spec import DatasetSpec
from .swe_files import file_rows, membership, selected
from .swe_tasks import BASE_FIELDS, TEXT, add_task, pr_from_id, str_or_none, texts_of

POLY_COLUMNS = ["instance_id", "repo", "pull_number", "base_commit", "problem_statement", "patch"]
SWEBENCH_COLUMNS = ["instance_id", "repo", "base_commit", "problem_statement", "patch"]


def _bench_builder(spec: DatasetSpec, flags: tuple[str, ...] = ()) -> DatasetBuilder:
    return DatasetBuilder(spec.name, (*BASE_FIELDS, TEXT, "patch", *flags))


def _member_flag(spec: DatasetSpec) -> str | None:
    """The flag column a subset of this benchmark fills (e.g. `in_verified`); None when it has none."""
    return spec.extra.get("member_of", (None,))[0]


def _flag_value(flag: str | None, members: set[str] | None, item_id: str | None) -> dict[str, bool | None]:
    """{flag: is the item in the subset} (null when the subset could not be read); {} without a flag."""
    if not flag:
        return {}
    return {flag: (item_id in members) if members is not None and item_id else None}


def _add_bench_row(builder: DatasetBuilder, row: dict[str, Any], where: str, *, pr: object, pr_field: str | None,
                   **fields: Any) -> bool:
    """Add a row in SWE-bench's schema, with its issue text and fix patch."""
    return add_task(builder, str_or_none(row.get("instance_id")), where, repo=row.get("repo"), pr=pr,
                    base=row.get("base_commit"), pr_field=pr_field, **texts_of(row), **fields)


# --- SWE-PolyBench (CSV) --------------------------------------------------------------------------------


def load_swe_polybench(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    flag = _member_flag(spec)
    builder = _bench_builder(spec, (flag,) if flag else ())
    members = membership(source, spec, builder) if flag else None
    for where, row in file_rows(source, builder, "" if single else spec.files[""], "csv", POLY_COLUMNS):
        item_id = str_or_none(row.get("instance_id"))
        pr, field = row.get("pull_number"), "pull_number"
        if "pull_number" not in row:  # column missing: the id's trailing number is the PR
            pr, field = pr_from_id(item_id), "instance_id"
        _add_bench_row(builder, row, where, pr=pr, pr_field=field, **_flag_value(flag, members, item_id))
    return builder.build(source)


# --- SWE-bench family (parquet) ------------------------------------------------------------------------


def load_swe_bench(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    """SWE-bench, SWE-bench Verified, SWE-bench Multilingual: one parquet per split; PR from the id."""
    flag = _member_flag(spec)
    builder = _bench_builder(spec, (flag,) if flag else ())
    chosen = [("", "")] if single else [(s, spec.files[s]) for s in selected(spec, subsets)]
    members = membership(source, spec, builder) if flag and not single else None
    if flag and single:
        builder.problem("subset_unavailable", flag, "a single file has no subset membership")
    for split, relpath in chosen:
        for where, row in file_rows(source, builder, relpath, "parquet", SWEBENCH_COLUMNS):
            item_id = str_or_none(row.get("instance_id"))
            _add_bench_row(builder, row, where, pr=pr_from_id(item_id), pr_field="instance_id",
                           subset=split or None, **_flag_value(flag, members, item_id))
    return builder.build(source)




def load_swe_bench_pro(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    """SWE-bench Pro: three configs holding overlapping task lists, merged and de-duplicated by instance_id
    (`subset` = the first config that lists a task, `in_<config>` = every config that does). No PR numbers:
    only the base key is made; pairs need the same fix (see overlap.evidence.swe_pairs)."""
    chosen = [("", "")] if single else [(s, spec.files[s]) for s in selected(spec, subsets)]
    flags = tuple(f"in_{s}" for s, _ in chosen if s)
    builder = _bench_builder(spec, flags)
    configs_of: dict[str, set[str]] = {}
    for config, relpath in chosen:
        listed: set[str] = set()
        for where, row in file_rows(source, builder, relpath, "parquet", SWEBENCH_COLUMNS):
            item_id = str_or_none(row.get("instance_id"))
            if item_id is None:
                builder.problem("missing_id", where, "rows without an id cannot be joined or listed")
                continue
            if item_id in listed:
                builder.problem("duplicate_id", item_id, "a repeated id keeps its first row")
                builder.note_repeat(item_id)
                continue
            listed.add(item_id)
            configs_of.setdefault(item_id, set()).add(config)
            if builder.has(item_id):
                builder.note_repeat(item_id)  # listed by an earlier config: the configs overlap by design
                continue
            _add_bench_row(builder, row, where, pr=None, pr_field=None, subset=config or None)
    for flag in flags:
        config = flag[3:]
        builder.items[flag] = [config in configs_of.get(i, ()) for i in builder.items["item_id"]]
    return builder.build(source)
