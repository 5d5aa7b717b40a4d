"""MiMo-V2.6-RL-oss, config `code`: the one layout a `[columns]` table cannot read, because the task's id and
text are inside `extra_info.instance_json`, a JSON object written as a string.

The rows name no repository, pull request or commit (the tasks run in per-task images that already sit at the
start state), so the items carry no identity key: the atlas lists them, and only text evidence can relate
them to a benchmark.
"""

from __future__ import annotations

import json
from typing import Any

from ..model import Dataset
from .builder import DatasetBuilder
from .files import FileSource, read_records
from .spec import DatasetSpec


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def load_mimo_code(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    builder = DatasetBuilder(spec.name)
    label = relpath = spec.files[""]  # a single file given by the user stands for it (SingleFile.fetch)
    path = source.fetch(relpath)
    rows = read_records(path, ["extra_info"], required=["extra_info"])
    for index, row in builder.rows_of(label, rows):
        where = f"{label} row {index}"
        extra = row.get("extra_info")
        instance: Any = None
        if isinstance(extra, dict) and isinstance(extra.get("instance_json"), str):
            try:
                instance = json.loads(extra["instance_json"])
            except (ValueError, RecursionError):  # RecursionError: hostile nesting `[[[…`
                instance = None
        if not isinstance(instance, dict):
            builder.problem("malformed_instance_json", where, "extra_info.instance_json is not a JSON object")
            continue
        builder.add_item(_text(instance.get("instance_id")), where,
                         text_problem_statement=_text(instance.get("problem_statement")))
    source.record(label, path, len(rows))
    return builder.build(source)
