"""OSS-Fuzz task sets: MiMo-V2.6-RL-oss (cyber), CyberGym, SEC-bench.

Each adapter reads only the columns it needs. The id column is required; texts, patches and reports
are optional evidence and stay null when absent.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..ids.cve import find_cve, raw_cve
from ..ids.ossfuzz import issue_number, trailing_int
from ..model import Dataset
from .builder import DatasetBuilder
from .files import FileSource, read_records
from .spec import DatasetSpec


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None


def _add_ossfuzz_key(builder: DatasetBuilder, item_id: str, text: str) -> None:
    number = trailing_int(text)
    if number is None:
        builder.problem("malformed_id", item_id, "no OSS-Fuzz issue number at the end of the id; kept without key")
        return
    # Canonical (old→new) values are filled in later by the mapping; until then value == raw.
    builder.add_key(item_id, "ossfuzz", number, number)


def _files_for(spec: DatasetSpec, subsets: tuple[str, ...]) -> list[tuple[str, str]]:
    chosen = subsets or tuple(spec.files)
    return [(subset, spec.files[subset]) for subset in chosen]


# --- MiMo-V2.6-RL-oss, config cyber ------------------------------------------------------------------


def load_mimo_cyber(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    builder = DatasetBuilder(spec.name)
    relpath = spec.files[""]
    path = source.fetch(relpath)
    rows = read_records(path, ["extra_info", "prompt"], required=["extra_info"])
    for index, row in builder.rows_of(relpath, rows):
        where = f"{relpath} row {index}"
        extra = row.get("extra_info") or {}
        if not isinstance(extra, dict):
            builder.problem("malformed_row", where, "extra_info is not an object")
            continue
        item_id = extra.get("instance_id")
        prompt_text = _first_message(row.get("prompt"))
        statement, project = None, None
        instance_json = extra.get("instance_json")
        if instance_json:
            try:
                instance = json.loads(instance_json) if isinstance(instance_json, str) else instance_json
                statement = _str_or_none(instance.get("problem_statement"))
                project = _str_or_none(instance.get("project_name") or instance.get("project"))
            except (ValueError, AttributeError, RecursionError):  # RecursionError: hostile nesting `[[[…`
                builder.problem("malformed_instance_json", where, "instance_json is not a JSON object")
        # The prompt is the task's crash spec (one line naming type, function and file): it is both the
        # text the model sees and the crash evidence compared with the benchmark's sanitizer report.
        item_id = builder.add_item(item_id, where, project=project, text_prompt=prompt_text,
                                   text_problem_statement=statement, crash_report=prompt_text)
        if item_id is not None:
            _add_ossfuzz_key(builder, item_id, item_id)
    source.record(relpath, path, len(rows))
    return builder.build(source)


def _first_message(prompt: Any) -> str | None:
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict):
        return _str_or_none(prompt[0].get("content"))
    return None


# --- CyberGym ---------------------------------------------------------------------------------------


def load_cybergym(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    builder = DatasetBuilder(spec.name)
    relpath = spec.files[""]
    path = source.fetch(relpath)
    columns = ["task_id", "project_name", "project_main_repo", "vulnerability_description"]
    rows = read_records(path, columns, required=["task_id"])
    wanted = set(subsets)
    for index, row in builder.rows_of(relpath, rows):
        item_id = row.get("task_id")
        kind = task_kind(item_id)
        if wanted and kind not in wanted:
            continue
        added = builder.add_item(
            item_id,
            f"{relpath} row {index}",
            subset=kind,
            project=_str_or_none(row.get("project_name")),
            repo=_str_or_none(row.get("project_main_repo")),
            text_description=_str_or_none(row.get("vulnerability_description")),
        )
        if added:
            _add_ossfuzz_key(builder, added, added)
    source.record(relpath, path, len(rows))
    return builder.build(source)


def task_kind(task_id: object) -> str | None:
    """The kind of a CyberGym task id, lowercased like its key (`ARVO:10340` is in subset `arvo`)."""
    text = _str_or_none(task_id) if isinstance(task_id, str) else None
    kind = text.split(":", 1)[0].strip().lower() if text and ":" in text else None
    return kind or None


def cybergym_task_path(task_id: str, name: str) -> str | None:
    """Repo-relative path of a per-task file: `arvo:1065` → `data/arvo/1065/<name>`."""
    kind, sep, number = task_id.partition(":")
    kind = kind.strip().lower()
    # Both parts become a path: a kind other than a plain name (`../../etc`) or a number that is not an
    # issue number names no task file.
    if not sep or not _TASK_KIND.fullmatch(kind) or issue_number(number) is None:
        return None
    return f"data/{kind}/{number}/{name}"


_TASK_KIND = re.compile(r"[a-z0-9][a-z0-9-]*", re.ASCII)


# --- SEC-bench --------------------------------------------------------------------------------------


def _secbench_subset(item_id: str) -> str | None:
    if ".ossfuzz-" in item_id:
        return "oss"
    if ".cve-" in item_id.lower():
        return "cve"
    return None


def load_sec_bench(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    builder = DatasetBuilder(spec.name)
    columns = ["instance_id", "repo", "base_commit", "patch", "sanitizer_report", "bug_description", "bug_report"]
    files = [("", "")] if single else _files_for(spec, subsets)
    for file_subset, relpath in files:
        path = source.fetch(relpath)
        rows = read_records(path, columns, required=["instance_id"])
        label = relpath or path.name
        for index, row in builder.rows_of(label, rows):
            item_id = row.get("instance_id")
            subset = file_subset or (_secbench_subset(item_id) if isinstance(item_id, str) else None)
            if single and subsets and subset not in subsets:
                continue
            added = builder.add_item(
                item_id,
                f"{label} row {index}",
                subset=subset,
                project=item_id.split(".", 1)[0] if isinstance(item_id, str) and "." in item_id else None,
                repo=_str_or_none(row.get("repo")),
                base_commit=(_str_or_none(row.get("base_commit")) or "").lower() or None,
                patch=_str_or_none(row.get("patch")),
                crash_report=_str_or_none(row.get("sanitizer_report")),
                text_bug_description=_str_or_none(row.get("bug_description")),
                text_bug_report=_str_or_none(row.get("bug_report")),
            )
            if added:
                _add_secbench_keys(builder, added)
        source.record(label, path, len(rows))
    return builder.build(source)


def _add_secbench_keys(builder: DatasetBuilder, item_id: str) -> None:
    if ".ossfuzz-" in item_id:
        _add_ossfuzz_key(builder, item_id, item_id)
    elif find_cve(item_id):
        builder.add_key(item_id, "cve", find_cve(item_id), raw_cve(item_id))
    else:
        builder.problem("malformed_id", item_id, "neither `<project>.ossfuzz-<id>` nor `<project>.cve-<year>-<n>`")


