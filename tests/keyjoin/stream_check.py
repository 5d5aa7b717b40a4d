"""Helpers of the streamed-join tests: a compare run both ways (the training set streamed against the
benchmarks, and held row by row as a Dataset) and every file of their result folders compared."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from overlap.api import compare
from overlap.outputs.report.result_folders import write_compare_report


def both_ways(train: str, benches: list[str], out: Path, **options):
    """(streamed result, in-memory result); each written to OUT/streamed and OUT/held."""
    results = {}
    for name, stream in (("streamed", True), ("held", False)):
        result = compare(train, benches, stream=stream, **options)
        write_compare_report(result, out / name, reports=False)
        results[name] = result
    return results["streamed"], results["held"]


def differences(out: Path) -> list[str]:
    """Files of OUT/streamed and OUT/held that differ (summary.json: the keys that differ)."""
    a, b = out / "streamed", out / "held"
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    found = []
    for name in names:
        if name == ".overlap-output":  # names the folder it is in
            continue
        left, right = a / name, b / name
        if not left.exists() or not right.exists():
            found.append(f"{name}: only in {'held' if not left.exists() else 'streamed'}")
        elif left.read_bytes() != right.read_bytes():
            if name == "summary.json":
                sa, sb = json.loads(left.read_text()), json.loads(right.read_text())
                found.append(f"summary.json: {_diff(sa, sb)}")
            elif name.endswith(".parquet"):
                ta, tb = pq.read_table(left), pq.read_table(right)
                found.append(f"{name}:\n{ta.schema}\n{ta.to_pandas()}\n---\n{tb.schema}\n{tb.to_pandas()}")
            else:
                found.append(f"{name}:\n{left.read_text()[:2000]}\n---\n{right.read_text()[:2000]}")
    return found


def _diff(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def assert_whole_side(streamed, expected: dict, shown) -> None:
    """A streamed result's whole-side counts (items, repeats, rows without an id, duplicate groups) are the
    oracle's (`mix_oracle.whole_side_counts`)."""
    summary = streamed.summary()["train"]
    problems = {p["what"]: p["count"] for p in summary["problems"]}
    assert summary["items"] == expected["items"], shown
    assert problems.get("duplicate_id", 0) == expected["repeats"], shown
    assert problems.get("missing_id", 0) == expected["missing"], shown
    groups = {(r.kind, r.value): set(r.item_ids.split(";")) for r in streamed.train_duplicates.itertuples()}
    assert groups == expected["groups"], shown
