"""`overlap filter` on a user's own JSONL read by `--id-column`, over generated training sets: no row whose id
names a benchmark task survives, every kept line is an input line (byte for byte, in order), removed + kept =
rows read, the input is unchanged, and nothing is written outside `out`. The oracle is independent of the
tool: it parses the few id forms it generates and applies the demo's old→new OSS-Fuzz mapping itself."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from overlap.api import filter_train
from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError

DATA = {name: DEMO_ROOT / name for name in ("cybergym", "arvo")}
MAPPING = {int(a): int(b) for a, b, *_ in csv.reader((DEMO_ROOT / "arvo" / "arvo" / "oss_fuzz_mappings.csv")
                                                      .read_text().splitlines()) if a.isdigit() and b.isdigit()}
BENCH_NUMBERS = [int(t["task_id"].split(":")[1]) for t in json.loads((DEMO_ROOT / "cybergym" / "tasks.json")
                                                                      .read_text())]
BENCH = {MAPPING.get(n, n) for n in BENCH_NUMBERS}
PREFIXES = ("arvo:", "arvo_", "oss-fuzz:", "ARVO:")
NUMBERS = st.one_of(st.sampled_from(BENCH_NUMBERS), st.sampled_from(sorted(MAPPING)),
                    st.sampled_from(sorted(MAPPING.values())), st.integers(1, 10**12 - 1))
OSSFUZZ = st.tuples(st.sampled_from(PREFIXES), NUMBERS).map(lambda p: (f"{p[0]}{p[1]}", p[1]))
JUNK = st.text(alphabet="abcxyz-_. ", min_size=1, max_size=12).map(lambda t: (t, None))
ROW = st.tuples(st.one_of(OSSFUZZ, JUNK, st.just((None, None))), st.text(max_size=20))  # None: a row without an id


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example([(("arvo:10055", 10055), "")])  # every row removed: the empty split is still verified
@example([((None, None), ""), (("oss-fuzz:42471120", 42471120), "x")])  # kept: only a row without an id
@example([((" ", None), "")])  # an id that is only blanks is no id (counted as missing_id), as a missing one
@given(st.lists(ROW, min_size=1, max_size=20))
def test_filtered_jsonl_keeps_exactly_the_clean_input_lines(tmp_path_factory, rows):
    folder = tmp_path_factory.mktemp("filter")
    train = folder / "in" / "mine.jsonl"
    train.parent.mkdir()
    lines = [json.dumps({"meta": {"task": task}, "note": note}) for (task, _), note in rows]
    train.write_text("".join(line + "\n" for line in lines))
    before = hashlib.sha256(train.read_bytes()).hexdigest()
    contaminated = [number is not None and MAPPING.get(number, number) in BENCH for (_, number), _ in rows]

    # A blank id is no id (the reader counts it as missing_id): no row has an id → one clear error, nothing written.
    if all(task is None or not task.strip() for (task, _), _ in rows):
        with pytest.raises(InputError, match="no usable rows"):
            filter_train(str(train), ["cybergym"], folder / "out", reasons=("id",), data=DATA, id_column="meta.task")
        assert not (folder / "out").exists()
        return
    _, filtered, written = filter_train(str(train), ["cybergym"], folder / "out", reasons=("id",), data=DATA,
                                        id_column="meta.task")

    kept = (folder / "out" / "data" / "mine.jsonl").read_text().splitlines()
    assert kept == [line for line, bad in zip(lines, contaminated, strict=True) if not bad]
    summary = filtered.summary()
    assert summary["removed_rows"] == sum(contaminated) and summary["kept_rows"] + summary["removed_rows"] == len(rows)
    assert written.verification["rows_matching"] == 0
    assert hashlib.sha256(train.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in folder.iterdir()) == ["in", "out"]  # nothing written beside --out
    assert [p.name for p in (folder / "in").iterdir()] == ["mine.jsonl"]
