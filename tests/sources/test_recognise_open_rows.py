"""The recognisers run on the values no earlier recogniser took (`overlap.ids.recognise`): on mixed columns the
keys are those of each value recognised alone, and an OSS-Fuzz number has at most 12 digits, leading zeros
included, as `overlap.ids.ossfuzz.trailing_int` reads it."""

from __future__ import annotations

import random

import pyarrow as pa

from overlap.ids.ossfuzz import trailing_int
from overlap.ids.recognise import recognise

FORMS = ["arvo:10340", "jq.cve-2023-50246", "kbknapp__clap-rs-941", "Owner/Repo#12", "github.com/a/b/pull/7",
         "github.com/jqlang/jq/commit/c9a51565", "GHSA-7rjr-3q55-vv33", "nothing", "", None, "x.ossfuzz-42",
         "a___b-3", "a__b-12-34", "a_b__c-1", "arvo:0000000000001", "Ａrvo:1"]


def _alone(value, context_row):
    context = {k: pa.array([v]) for k, v in context_row.items()}
    result = recognise(pa.array([value], pa.string()), context=context)
    return [(k["kind"], k["value"], k["raw"]) for k in result.keys.to_pylist()], result.recogniser[0].as_py()


def test_mixed_column_gives_the_keys_of_each_value_alone():
    rng = random.Random(3)
    for _ in range(20):
        values = [rng.choice(FORMS) for _ in range(rng.randint(1, 25))]
        context_rows = [{"cve": rng.choice(["CVE-2021-1234", None]), "base": rng.choice(["ABCDEF1", None])}
                        for _ in values]
        context = {k: pa.array([r[k] for r in context_rows], pa.string()) for k in ("cve", "base")}
        result = recognise(pa.array(values, pa.string()), context=context)
        keys = result.keys.to_pylist()
        for row, (value, context_row) in enumerate(zip(values, context_rows, strict=True)):
            expected, name = _alone(value, context_row)
            assert [(k["kind"], k["value"], k["raw"]) for k in keys if k["row"] == row] == expected, value
            assert result.recogniser[row].as_py() == name


def test_ossfuzz_numbers_longer_than_twelve_digits_are_refused():
    values = ["arvo:0000000000001", "00000000000012", "arvo:000000000001", "issue 123456789012"]
    forced = recognise(pa.array(values), scheme="ossfuzz").keys.to_pylist()
    assert {k["row"]: int(k["value"]) for k in forced} == {
        row: trailing_int(v) for row, v in enumerate(values) if trailing_int(v) is not None}
    assert recognise(pa.array(values[:1])).report.unrecognised == 1
