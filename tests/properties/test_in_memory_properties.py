"""Every in-memory form of a training mix gives the result folders the same rows written as parquet give, byte
for byte: the compare's (summary.json, pairs.csv, duplicates.csv, id lists, pair_items.parquet, report.md/html)
and the filter's (the kept shard, removed.csv, filter.json, the id lists, the loading card). The one thing
normalised is the training set's provenance, which legitimately differs: a file has a path and a sha256, an
in-memory input has a type, columns and a fingerprint instead (`in_memory_forms.normalised_folder`). The
in-memory input is named as the file is (`overlap.named`), so labels are compared as written.

Hypothesis draws the rows: ids a benchmark holds in several spellings, ids it does not, repeats, blanks and
missing ids, beside a text column and a nested one, and the form they are held in."""

from __future__ import annotations

import json

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sources.in_memory_forms import FORMS, build, normalised_folder, quiet_datasets

import overlap
from overlap.api.demo import demo_data
from overlap.errors import InputError
from overlap.outputs.report.result_folders import write_compare_report

# CyberGym's ids (data/demo/cybergym) as training sets write them, ids it lacks, and cells with no id
BENCH_HELD = ["arvo:10055", "arvo_10102", "oss-fuzz:386128948", "arvo:12007", "libxml2.ossfuzz-42471120",
              "arvo_13555"]
ID = st.one_of(st.sampled_from(BENCH_HELD), st.sampled_from(["arvo:777", "arvo_31337", "CVE-2021-44228",
                                                            "astropy__astropy-12907", "plain-name"]),
               st.sampled_from(["", " ", None]), st.text(max_size=8))
ROW = st.fixed_dictionaries({"id": ID, "note": st.one_of(st.none(), st.text(max_size=12)),
                             "extra": st.fixed_dictionaries({"n": st.integers(-5, 5)})})
SETTINGS = settings(max_examples=16, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _table(rows: list[dict]) -> pa.Table:
    schema = pa.schema([("id", pa.string()), ("note", pa.string()), ("extra", pa.struct([("n", pa.int64())]))])
    return pa.Table.from_pylist(rows, schema=schema)


def _outcome(run) -> str | None:
    """None when `run()` worked, else its InputError's message (both forms must say the same)."""
    try:
        run()
    except InputError as exc:
        return str(exc)
    return None


@SETTINGS
@given(rows=st.lists(ROW, min_size=1, max_size=30), form=st.sampled_from(FORMS),
       reasons=st.sampled_from([("id", "fix", "dup"), ("id",), ("id:ossfuzz", "dup")]))
def test_in_memory_result_folders_are_the_parquet_ones(tmp_path_factory, rows, form, reasons):
    quiet_datasets()
    data = {k: v for k, v in demo_data().items() if k in ("cybergym", "arvo")}
    root = tmp_path_factory.mktemp("forms")
    table = _table(rows)
    options = {"id_column": "id", "data": data}

    def given_as(name: str):
        """The rows as `form`, named as the file (built afresh: a stream given once is read)."""
        value, path, split = build(form, table, root / "in")
        return overlap.named(value, path.name, split=split) if name == "memory" else str(path)

    def compare(name: str) -> None:
        write_compare_report(overlap.compare(given_as(name), "cybergym", pool=None, **options), root / f"c-{name}")

    def filter_split(name: str) -> None:
        overlap.filter_train(given_as(name), "cybergym", root / f"f-{name}", reasons=reasons, **options)

    label = f"{form}.parquet"
    for step, folder in ((compare, "c"), (filter_split, "f")):
        failed = _outcome(lambda step=step: step("file"))
        assert _outcome(lambda step=step: step("memory")) == failed  # an InputError says the same of both
        if failed is None:
            assert normalised_folder(root / f"{folder}-memory", label) == normalised_folder(root / f"{folder}-file",
                                                                                           label)
            summary = json.loads((root / f"{folder}-memory" / ("summary.json" if folder == "c" else "filter.json"))
                                 .read_text())
            provenance = summary["train"]["provenance"] if folder == "c" else summary["provenance"]
            # what was given stands where the file's hash is
            assert provenance["in_memory"]["type"] == form and provenance["in_memory"]["rows"] == len(rows)
