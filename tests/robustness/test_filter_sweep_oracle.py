"""`overlap filter` with its default reasons (id, fix, dup) against a plain-Python oracle, over generated
training sets in JSON lines, CSV and parquet (the id in a struct): every OSS-Fuzz spelling the docs list
(prefixes in any case, `<project>.ossfuzz-N`, both trackers' URLs, padded with blanks), old and new tracker
numbers, rows without an id, unrecognised ids, duplicates anywhere. The oracle applies the documented rules
itself (the demo's old→new mapping; a benchmark key drops the row; of the rest, the first copy of a bug or of
an unrecognised id in source order is kept) and never calls the tool's parsers."""

from __future__ import annotations

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.api import filter_train
from overlap.api.demo import DEMO_ROOT

DATA = {name: DEMO_ROOT / name for name in ("cybergym", "arvo")}
MAPPING = {int(a): int(b) for a, b, *_ in csv.reader((DEMO_ROOT / "arvo" / "arvo" / "oss_fuzz_mappings.csv")
                                                      .read_text().splitlines()) if a.isdigit() and b.isdigit()}
BENCH_NUMBERS = [int(t["task_id"].split(":")[1]) for t in json.loads((DEMO_ROOT / "cybergym" / "tasks.json")
                                                                      .read_text())]
BENCH = {MAPPING.get(n, n) for n in BENCH_NUMBERS}
FORMS = ("arvo:{}", "ARVO_{}", "arvo_{}", "oss-fuzz:{}", "OSS-Fuzz:{}", "libxml2.ossfuzz-{}",
         "https://issues.oss-fuzz.com/issues/{}", "https://bugs.chromium.org/p/oss-fuzz/issues/detail?id={}")
NUMBERS = st.sampled_from(sorted(set(BENCH_NUMBERS) | set(MAPPING) | set(MAPPING.values()) | {99999, 42471999}))
PAD = st.sampled_from(["", " ", "\t"])
OSSFUZZ = st.builds(lambda form, n, a, b: (a + form.format(n) + b, n), st.sampled_from(FORMS), NUMBERS, PAD, PAD)
UNRECOGNISED = st.sampled_from(["foo", "é中", "task", "x-y"]).map(lambda t: (t, "unrecognised"))
NO_ID = st.sampled_from([None, "", "  "]).map(lambda t: (t, None))
ROWS = st.lists(st.one_of(OSSFUZZ, OSSFUZZ, UNRECOGNISED, NO_ID), min_size=1, max_size=25)


def expected_drops(rows) -> dict[int, str]:
    drops, bugs, names = {}, set(), set()
    for position, (raw, number) in enumerate(rows):
        if isinstance(number, int):
            bug = MAPPING.get(number, number)
            if bug in BENCH:
                drops[position] = "id"
            elif bug in bugs:
                drops[position] = "dup"
            bugs.add(bug)
        elif number == "unrecognised":
            if raw in names:
                drops[position] = "dup"
            names.add(raw)
    return drops


def write(folder, kind, rows):
    path = folder / f"mine.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps({"id": raw, "i": i}) + "\n" for i, (raw, _) in enumerate(rows)))
    elif kind == "csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(["id", "i"])
            out.writerows([raw or "", i] for i, (raw, _) in enumerate(rows))
    else:
        pq.write_table(pa.table({"i": list(range(len(rows))),
                                 "extra_info": [{"instance_id": raw} for raw, _ in rows]}), path)
    return path


def kept_positions(path, kind) -> list[int]:
    if kind == "parquet":
        return pq.read_table(path).column("i").to_pylist()
    if kind == "jsonl":
        return [json.loads(line)["i"] for line in path.read_text().splitlines()]
    return [int(r["i"]) for r in csv.DictReader(path.open(newline="", encoding="utf-8"))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ROWS, st.sampled_from(["jsonl", "csv", "parquet"]))
def test_filter_drops_exactly_what_the_oracle_drops(tmp_path_factory, rows, kind):
    if all(number is None for _, number in rows):
        return  # no row has an id: an error (tests/properties/test_filter_generic_properties.py)
    folder = tmp_path_factory.mktemp("sweep")
    train = write(folder, kind, rows)
    column = "extra_info.instance_id" if kind == "parquet" else "id"
    _, filtered, _ = filter_train(str(train), ["cybergym"], folder / "out", data=DATA, id_column=column)
    drops = expected_drops(rows)
    removed = {int(r["row"]): r["reasons"] for r in csv.DictReader((folder / "out" / "removed.csv")
                                                                   .open(newline="", encoding="utf-8"))}
    assert set(removed) == set(drops)
    assert all(("id:" in removed[p]) == (why == "id") for p, why in drops.items())
    assert kept_positions(folder / "out" / "data" / train.name, kind) == [
        p for p in range(len(rows)) if p not in drops]
    assert filtered.summary()["kept_rows"] == len(rows) - len(drops)
