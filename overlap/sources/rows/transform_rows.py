"""The row transforms declarations name (`extra.transform`), each a few lines: see `transforms`."""

from __future__ import annotations

import json
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from ...errors import InputError
from ...ids.id_arrays import id_strings
from ...ids.pr_columns import pr_numbers
from ...model import Problem
from ..spec import DatasetSpec
from .transforms import Transform


def _text_or_none(value) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _blank_to_null(text):
    blank = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(text)), 0), True)
    return pc.if_else(blank, pa.scalar(None, pa.string()), pc.utf8_trim_whitespace(text))


def _replace(batch, name: str, values):
    names = batch.schema.names
    if name in names:
        return batch.set_column(names.index(name), name, values)
    return batch.append_column(name, values)


# --- Multi-SWE-bench's schema: the repo in two cells, the issue text in a list of issues --------------------


def _issues_text(issues) -> str | None:
    """Every resolved issue's title and body, in order."""
    if not isinstance(issues, list):
        return None
    parts = []
    for issue in issues:
        if isinstance(issue, dict):
            text = "\n".join(t for t in (_text_or_none(issue.get("title")), _text_or_none(issue.get("body"))) if t)
            if text:
                parts.append(text)
    return "\n\n".join(parts) or None


def multi_swe_bench(spec: DatasetSpec) -> Transform:
    """`org` + `repo` → `repo` (`org/repo`), `resolved_issues` → `problem_statement`, and a missing id made
    from them and `number`."""

    def rows(batch, *_where):
        table = pa.Table.from_batches([batch])
        org, name = (_blank_to_null(id_strings(table.column(c).combine_chunks())) for c in ("org", "repo"))
        number = pr_numbers(table.column("number").combine_chunks())
        # A row without an id is the documented `{org}__{repo}-{number}`.
        made = pc.binary_join_element_wise(org, "__", name, "-", number.cast(pa.string()), "")
        ids = _blank_to_null(id_strings(table.column("instance_id").combine_chunks()))
        batch = _replace(batch, "instance_id", pc.coalesce(ids, made))
        batch = _replace(batch, "repo", pc.binary_join_element_wise(org, name, "/"))
        issues = table.column("resolved_issues").to_pylist()
        return _replace(batch, "problem_statement", pa.array([_issues_text(i) for i in issues], pa.string()))

    return Transform(rows=rows)


# --- CyberGym: the subset is the kind before the task id's colon ------------------------------------------


def cybergym(spec: DatasetSpec) -> Transform:
    """`subset` = the task id's kind, lowercased like its key (`ARVO:10340` is in subset `arvo`)."""

    def rows(batch, *_where):
        ids = pc.utf8_trim_whitespace(id_strings(batch.column("task_id")))
        kind = pc.utf8_lower(pc.utf8_trim_whitespace(pc.list_element(pc.split_pattern(ids, ":", max_splits=1), 0)))
        has_kind = pc.fill_null(pc.and_(pc.match_substring(ids, ":"), pc.not_equal(kind, "")), False)
        return _replace(batch, "subset", pc.if_else(has_kind, kind, pa.scalar(None, pa.string())))

    return Transform(rows=rows)


# --- SEC-bench: the project and subset are parts of the id -------------------------------------------------


def sec_bench(spec: DatasetSpec) -> Transform:
    """`project` = the id before its first `.`; `subset` = `oss` or `cve` by the id's form (a file of a subset
    says it instead); `base_commit` lowercased (kept as written otherwise: it makes no key here)."""

    def rows(batch, *_where):
        ids = id_strings(batch.column("instance_id"))
        halves = pc.split_pattern(ids, ".", max_splits=1)
        dotted = pc.fill_null(pc.match_substring(ids, "."), False)
        batch = _replace(batch, "project", pc.if_else(dotted, pc.list_element(halves, 0), pa.scalar(None, pa.string())))
        oss = pc.fill_null(pc.match_substring(ids, ".ossfuzz-"), False)
        cve = pc.fill_null(pc.match_substring(pc.utf8_lower(ids), ".cve-"), False)
        subset = pc.if_else(oss, "oss", pc.if_else(cve, "cve", pa.scalar(None, pa.string())))
        batch = _replace(batch, "subset", subset)
        return _replace(batch, "base_commit", pc.utf8_lower(_blank_to_null(id_strings(batch.column("base_commit")))))

    return Transform(rows=rows)


# --- MiMo-V2.6-RL-oss: the task inside a JSON string -----------------------------------------------------


def _instance(value):
    """The JSON object `extra_info.instance_json` holds, or None when it holds none."""
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):  # RecursionError: hostile nesting `[[[…`
        return None
    return parsed if isinstance(parsed, dict) else None


def _mimo(spec: DatasetSpec, *, id_inside: bool) -> Transform:
    """`extra_info.instance_json` → `problem_statement`, `project` and (`id_inside`: the config whose rows have
    no other id) `instance_id`. A row whose JSON is not an object is counted; without `id_inside` it stays an
    item (its id is outside the JSON)."""
    done = Transform(unread_as="malformed_instance_json",
                     unread_detail="extra_info.instance_json is not a JSON object")

    def rows(batch, file_name, first_row):
        cells = batch.column("extra_info.instance_json").to_pylist()
        found = [_instance(c) for c in cells]
        for index, (cell, instance) in enumerate(zip(cells, found, strict=True)):
            if instance is None and (id_inside or cell):
                where = f"{file_name} row {first_row + index}"
                if id_inside:
                    done.unread.append(where)
                else:
                    done.problems.note("malformed_instance_json", where, "instance_json is not a JSON object")
        texts = pa.array([_text_or_none((i or {}).get("problem_statement")) for i in found], pa.string())
        projects = pa.array([_text_or_none((i or {}).get("project_name") or (i or {}).get("project"))
                             for i in found], pa.string())
        batch = _replace(_replace(batch, "problem_statement", texts), "project", projects)
        if id_inside:
            ids = pa.array([_text_or_none((i or {}).get("instance_id")) for i in found], pa.string())
            batch = _replace(batch, "instance_id", ids)
        return batch

    done.rows = rows
    return done


# --- SWE-bench Pro: configs that list the same tasks -------------------------------------------------------


def swe_bench_pro(spec: DatasetSpec) -> Transform:
    """Pro's configs list overlapping tasks: a task is one item (`subset` = the first config listing it) with
    an `in_<config>` flag for every config read; its rows in later configs go with it (`repeats`) and are no
    problem; a task listed twice in one config is a `duplicate_id`."""
    config_of = {path: config for config, path in spec.files.items() if config}

    def finish(dataset):
        repeats = dataset.repeats
        items = dataset.items
        listed = [(i, s) for i, s in zip(items["item_id"], items["subset"], strict=True)]
        listed += [(i, config_of.get(f)) for i, f in zip(repeats["item_id"], repeats["file"], strict=True)]
        configs = sorted({c for _, c in listed if c}, key=list(config_of.values()).index)
        for config in configs:
            members = {i for i, c in listed if c == config}
            items[f"in_{config}"] = items["item_id"].isin(members)
        seen: set = set()
        twice = []
        for pair in listed:
            if pair in seen:
                twice.append(pair[0])
            seen.add(pair)
        problems = [p for p in dataset.problems if p.what != "duplicate_id"]
        if twice:
            problems.append(Problem("duplicate_id", len(twice), twice[0], "a repeated id keeps its first row"))
        dataset.problems = sorted(problems, key=lambda p: p.what)

    return Transform(finish=finish)


TRANSFORMS: dict[str, Callable[[DatasetSpec], Transform]] = {
    "cybergym": cybergym,
    "mimo-code": lambda spec: _mimo(spec, id_inside=True),
    "mimo-cyber": lambda spec: _mimo(spec, id_inside=False),
    "multi-swe-bench": multi_swe_bench,
    "sec-bench": sec_bench,
    "swe-bench-pro": swe_bench_pro,
}


def transform_of(spec: DatasetSpec) -> Transform | None:
    """A fresh Transform for one read of `spec` (None when it names none); an unknown name lists the known."""
    name = spec.extra.get("transform")
    if name is None:
        return None
    if name not in TRANSFORMS:
        raise InputError(f"{spec.origin or spec.name}: extra.transform names {name!r}, which overlap does not know; "
                         f"known: {', '.join(sorted(TRANSFORMS))}")
    return TRANSFORMS[name](spec)
