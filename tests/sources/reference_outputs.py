"""What a registered dataset's reader gives on the fixtures, as plain JSON: items (every column), keys,
problems and repeats, each sorted, with the location-free fields only. `python tests/sources/reference_outputs.py`
writes `reference/*.json`, recorded once from the per-dataset adapters the one reader replaced; the test
`test_one_reader.py` checks the reader against them, so the old adapters' outputs stay the reference."""

from __future__ import annotations

import json
import math
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "swe")]

import fixtures as cyber_fixtures  # noqa: E402
import swe_fixtures  # noqa: E402
from coverage_fixtures import write_coverage  # noqa: E402
from generated_inputs import write_generated  # noqa: E402

from overlap.sources.load import load_dataset  # noqa: E402


def _plain(value):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        import pandas as pd
        if value is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    if hasattr(value, "item"):
        value = value.item()
    return value if isinstance(value, (bool, int, str)) else str(value)


def snapshot(dataset) -> dict:
    """The reader's promise on one dataset, as sorted plain values."""
    items = [{k: _plain(v) for k, v in row.items()} for row in dataset.items.to_dict("records")]
    keys = sorted(tuple(_plain(v) for v in row) for row in
                  dataset.keys[["item_id", "kind", "value", "raw"]].itertuples(index=False))
    repeats = dataset.repeats if dataset.repeats is not None else None
    repeat_rows = [] if repeats is None else sorted(
        tuple(_plain(v) for v in row) for row in repeats[["item_id", "file", "file_row", "row"]]
        .itertuples(index=False))
    return {
        "columns": sorted(dataset.items.columns),
        "items": sorted(items, key=lambda r: json.dumps(r, sort_keys=True)),
        "keys": [list(k) for k in keys],
        "problems": sorted([p.what, p.count, p.example] for p in dataset.problems),
        "repeats": [list(r) for r in repeat_rows],
        "files": [f.path for f in dataset.provenance.files],
    }


def normalised(shot: dict) -> dict:
    """`shot` with null item fields left out, and the columns that are null everywhere: an absent column and an
    all-null one say the same (no item has a value)."""
    items = [{k: v for k, v in item.items() if v is not None} for item in shot["items"]]
    present = {k for item in items for k in item}
    # Examples that name a temporary folder name it as <root>; where a row without an id is (`line 7` of a JSON
    # lines file, or `row 6`) is left out.
    folder = r"\S*/(?=(generated|swe|cyber|coverage|prs|swe2|cyber2)/)"
    problems = [[what, count, "" if what == "missing_id" else re.sub(folder, "<root>/", example)]
                for what, count, example in shot["problems"]]
    return {**shot, "items": items, "columns": sorted(c for c in shot["columns"] if c in present),
            "problems": problems}


def cases(root: Path) -> dict[str, tuple[str, dict[str, Path]]]:
    """{case name: (dataset argument, data=)} for every registered dataset with a fixture."""
    out: dict[str, tuple[str, dict[str, Path]]] = {}
    for name, path in cyber_fixtures.write_all(root / "cyber").items():
        if name != "arvo":
            out[name] = (name, {name: path})
    for name, path in swe_fixtures.write_all(root / "swe").items():
        out[name] = (name, {name: path})
    out["swe-rebench-v2-prs"] = ("swe-rebench-v2-prs", {"swe-rebench-v2-prs": swe_fixtures.write_prs(root / "prs")})
    for name, path in write_coverage(root / "coverage").items():
        out[f"coverage:{name}" if name in out else name] = (name, {name: path})
    # Selections: subsets and single files.
    swe = swe_fixtures.write_all(root / "swe2")
    out["swe-bench:dev"] = ("swe-bench:dev", {"swe-bench": swe["swe-bench"]})
    out["swe-bench-pro:hard"] = ("swe-bench-pro:hard", {"swe-bench-pro": swe["swe-bench-pro"]})
    out["multi-swe-bench:rust"] = ("multi-swe-bench:rust", {"multi-swe-bench": swe["multi-swe-bench"]})
    cyber = cyber_fixtures.write_all(root / "cyber2")
    out["cybergym:arvo"] = ("cybergym:arvo", {"cybergym": cyber["cybergym"]})
    out["sec-bench:cve"] = ("sec-bench:cve", {"sec-bench": cyber["sec-bench"]})
    out.update(write_generated(root / "generated"))
    return out


def main(only: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for case, (argument, data) in sorted(cases(Path(folder)).items()):
            if only and not any(case.startswith(o) for o in only):
                continue
            shot = snapshot(load_dataset(argument, data))
            name = case.replace(":", "--")
            (HERE / "reference" / f"{name}.json").write_text(json.dumps(shot, indent=1, sort_keys=True) + "\n")
            print(case, len(shot["items"]), "items", len(shot["keys"]), "keys")


if __name__ == "__main__":
    main(sys.argv[1:])
