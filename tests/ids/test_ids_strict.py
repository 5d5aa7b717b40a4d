"""Ids: every hostile or careless id example is a named regression test.

A malformed or out-of-range id is None from its scheme's parser (the adapters count it as `malformed_id`
and keep the item without a key): never coerced to another number, never an exception.
"""

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fixtures import write_mimo, write_secbench

from overlap.errors import InputError
from overlap.ids.cve import find_cve, raw_cve
from overlap.ids.github import parse_instance_id, parse_pr, split_key
from overlap.ids.ossfuzz import issue_number, parse_mapping, trailing_int
from overlap.ids.values import id_text
from overlap.sources.load import load_dataset, load_pool
from overlap.sources.pools.arvo_records import file_id, meta_id

FULLWIDTH = "１０３４０"  # 10340 in fullwidth digits: str.isdigit() and int() accept it
ARABIC_INDIC = "١٠٣٤٠"  # 10340 in Arabic-Indic digits
TOO_BIG = "9" * 25  # past int64: int64 casts used to raise OverflowError


# --- OSS-Fuzz ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", [f"arvo:{FULLWIDTH}", f"arvo_{FULLWIDTH}", FULLWIDTH, "arvo:１２34"])
def test_fullwidth_digits_are_not_an_ossfuzz_id(task_id):
    assert trailing_int(task_id) is None
    assert issue_number(FULLWIDTH) is None


@pytest.mark.parametrize("task_id", [f"arvo:{ARABIC_INDIC}", f"php.ossfuzz-{ARABIC_INDIC}", "arvo:١٠34"])
def test_arabic_indic_digits_are_not_an_ossfuzz_id(task_id):
    assert trailing_int(task_id) is None


@pytest.mark.parametrize("task_id", ["arvo:1e5", "arvo:1E5", "arvo:1e-5", "arvo:1e+5", "1e5"])
def test_exponent_is_not_an_ossfuzz_id(task_id):
    assert trailing_int(task_id) is None


@pytest.mark.parametrize("task_id", ["arvo:-1", "arvo_-1", "-1", "+1", "oss-fuzz:+42537168", -1])
def test_sign_is_not_an_ossfuzz_id(task_id):
    assert trailing_int(task_id) is None


@pytest.mark.parametrize("task_id", ["arvo:10055.5", "arvo:10055.0", "10055.0", "arvo:1,5", "arvo:0x12", 10055.0])
def test_fraction_or_hex_is_not_an_ossfuzz_id(task_id):
    # `10055.0` as text used to be issue 0 (its trailing integer); a float is text only via id_text.
    assert trailing_int(task_id) is None


def test_cve_with_underscores_is_neither_a_cve_nor_an_ossfuzz_id():
    assert find_cve("cve_2023_1234") is None and raw_cve("cve_2023_1234") is None
    assert find_cve("jq.cve_2023_1234") is None
    assert trailing_int("cve_2023_1234") is None  # `overlap ids` showed it as OSS-Fuzz issue 1234


@pytest.mark.parametrize("task_id", [f"arvo:{TOO_BIG}", f"oss-fuzz:{TOO_BIG}", TOO_BIG, 10**25, "arvo:" + "1" * 13])
def test_id_too_large_is_malformed_not_an_overflow(task_id):
    assert trailing_int(task_id) is None


def test_id_of_twelve_digits_is_the_largest_accepted():
    assert trailing_int("arvo:" + "9" * 12) == 999_999_999_999
    assert issue_number("9" * 12) == 999_999_999_999 and issue_number("1" + "0" * 12) is None


def test_issue_zero_is_not_an_id():
    # No tracker has an issue 0; it is what every float id used to become.
    assert trailing_int("arvo:0") is None and trailing_int(0) is None and issue_number("000") is None


@pytest.mark.parametrize(("task_id", "number"), [
    ("arvo:10340", 10340), ("arvo_42470443", 42470443), ("oss-fuzz:42537168", 42537168),
    ("php.ossfuzz-42491394", 42491394), ("ARVO:10340", 10340), (" arvo:10340\n", 10340), ("10340", 10340),
    (10340, 10340), ("https://issues.oss-fuzz.com/issues/42470443", 42470443), ("arvo:0010340", 10340),
])
def test_documented_ossfuzz_forms_still_parse(task_id, number):
    assert trailing_int(task_id) == number


def test_large_text_is_parsed_in_linear_time():
    assert trailing_int("a-1" * 300_000) is None  # no catastrophic backtracking
    assert trailing_int("x" * 1_000_000 + ":12") == 12


# --- CVE ids -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "canonical", "raw"), [
    ("jq.cve-2023-50246", "CVE-2023-50246", "cve-2023-50246"),
    ("CVE-2023-50246", "CVE-2023-50246", "CVE-2023-50246"),
    ("Cve-2021-1234567", "CVE-2021-1234567", "Cve-2021-1234567"),
])
def test_cve_forms(text, canonical, raw):
    assert find_cve(text) == canonical and raw_cve(text) == raw


@pytest.mark.parametrize("text", [
    "cve-２０２３-50246", "cve-2023-５０２４６", "cve-2023-50246５", "cve-2023-123", "cve-2023-" + "1" * 13,
    "xcve-2023-50246", "cve-2023-50246x", "cve–2023–50246", "CVE-0000-1234", "cve 2023 50246", None, 2023,
])
def test_malformed_cves_are_not_cves(text):
    assert find_cve(text) is None and raw_cve(text) is None


# --- PR numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "number"), [
    (19284.0, 19284), ("19284.0", 19284), (np.float64(19284.0), 19284), ("19284", 19284), (2**63 - 1, 2**63 - 1),
])
def test_polybench_float_pull_numbers(value, number):
    assert parse_pr(value) == number


@pytest.mark.parametrize("value", [
    19284.5, "19284.5", -19284.0, "-19284", "+19284", True, np.bool_(True), math.nan, math.inf, -math.inf,
    2**63, 1e19, TOO_BIG, "9" * 5000, "1e5", "１９２８４", "١٩٢٨٤", "19284.", "0x12",
])
def test_bad_pull_numbers_are_none(value):
    assert parse_pr(value) is None  # "9" * 5000: int() would raise ValueError past 4300 digits


def test_pr_in_instance_ids_and_keys_is_strict():
    assert parse_instance_id("keras-team__keras-19284") == ("keras-team", "keras", 19284)
    assert parse_instance_id("keras-team__keras-１９２８４") is None
    assert parse_instance_id(f"keras-team__keras-{TOO_BIG}") is None
    assert parse_instance_id("keras-team__keras-19284\n-1") is None
    assert split_key("clap-rs/clap#941") == ("clap-rs/clap", 941)
    assert split_key("clap-rs/clap#９４１") == ("clap-rs/clap#９４１", None)
    assert split_key(f"clap-rs/clap#{TOO_BIG}") == (f"clap-rs/clap#{TOO_BIG}", None)


# --- id cells ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "text"), [
    (10055.0, "10055"), (np.float64(10055.0), "10055"), (10055, "10055"), (np.int64(10055), "10055"),
    ("arvo_10055", "arvo_10055"), (" arvo_10055 ", " arvo_10055 "), (-1, "-1"),
])
def test_id_text_of_id_cells(value, text):
    assert id_text(value) == text


def test_float_id_cell_is_its_whole_number_not_issue_0():
    assert trailing_int(id_text(10055.0)) == 10055


@pytest.mark.parametrize("value", [None, math.nan, np.nan, "", "   "])
def test_id_text_of_missing_cells(value):
    assert id_text(value) is None


def test_id_text_of_pandas_missing():
    pd = pytest.importorskip("pandas")
    assert id_text(pd.NA) is None and id_text(pd.NaT) is None


@pytest.mark.parametrize(("value", "fragment"), [
    (10055.5, "holds the number 10055.5, not an id; ids must be whole numbers or text"),
    (math.inf, "holds the number inf"), (-math.inf, "holds the number -inf"),
    (True, "boolean"), (np.bool_(False), "boolean"), (1e20, "too large"), ([1], "list"), ({"a": 1}, "dict"),
])
def test_id_text_refuses_values_that_are_not_ids(value, fragment):
    with pytest.raises(InputError) as info:
        id_text(value)
    assert fragment in str(info.value) and "\n" not in str(info.value)


# --- the ARVO mapping CSV ----------------------------------------------------------------------------


def test_mapping_csv_with_bom_keeps_its_first_row():
    mapping = parse_mapping("\ufeff10288,40643631\n10400,42470443\n".encode(), "m.csv")
    assert mapping.canonical(10288) == 40643631 and len(mapping) == 2 and mapping.skipped_rows == 0


def test_mapping_csv_unclosed_quote_is_an_error_naming_file_and_line():
    data = b'10288,40643631\n"10400,42470443\n11500,42470500\n'
    with pytest.raises(InputError) as info:
        parse_mapping(data, "m.csv")
    message = str(info.value)
    assert message.startswith("m.csv: line 2: malformed CSV") and "\n" not in message
    assert info.value.exit_code == 2


def test_mapping_csv_quote_closed_lines_later_does_not_swallow_rows():
    with pytest.raises(InputError, match="line 2"):
        parse_mapping(b'10288,40643631\n"10400,42470443\n11500",42470500\n', "m.csv")


def test_mapping_csv_skipped_rows_are_counted_with_an_example():
    data = f"old,new\n10288,40643631\n{FULLWIDTH},42470443\n-1,5\n1e5,42470500\n{TOO_BIG},1\n".encode()
    mapping = parse_mapping(data, "m.csv")
    assert len(mapping) == 1 and mapping.skipped_rows == 5
    assert mapping.skipped_example == "line 1: 'old,new'"


def test_mapping_csv_quoted_integers_and_crlf_are_fine():
    mapping = parse_mapping(b'"10288","40643631"\r\n10400 , 42470443\r\n', "m.csv")
    assert mapping.old_to_new == {10288: 40643631, 10400: 42470443}


# --- through the adapters: kept without a key, counted, no crash --------------------------------------


def test_hostile_task_ids_are_counted_and_kept_without_a_key(tmp_path):
    hostile = [f"arvo_{FULLWIDTH}", f"arvo_{ARABIC_INDIC}", "arvo_1e5", "arvo_-1", f"arvo_{TOO_BIG}", "arvo_10055.0"]
    root = write_mimo(tmp_path / "mimo", ids=["arvo_10288", *hostile])
    ds = load_dataset("mimo-cyber", {"mimo-cyber": root})
    assert set(ds.items["item_id"]) == {"arvo_10288", *hostile}
    assert ds.keys["item_id"].tolist() == ["arvo_10288"]
    assert {p.what: p.count for p in ds.problems} == {"malformed_id": len(hostile)}


def test_secbench_cve_with_underscores_is_malformed(tmp_path):
    root = write_secbench(tmp_path / "sb", oss=["php.ossfuzz-42491394"], cve=["jq.cve_2023_1234", "jq.cve-2023-50246"])
    ds = load_dataset("sec-bench", {"sec-bench": root})
    assert ds.keys["value"].tolist() == ["42491394", "CVE-2023-50246"]
    assert {p.what: p.example for p in ds.problems} == {"malformed_id": "jq.cve_2023_1234"}


# --- pool files and ARVO-Meta -------------------------------------------------------------------------


def test_pool_parquet_with_float_ids_reads_whole_numbers(tmp_path):
    path = tmp_path / "pool.parquet"
    pq.write_table(pa.table({"id": [10055.0, 42470443.0, None], "project": ["a", "b", "c"]}), path)
    pool = load_pool(path)
    assert pool.table["raw_id"].tolist() == [10055, 42470443]
    assert {p.what: p.count for p in pool.problems} == {"missing_id": 1}


def test_pool_parquet_with_a_fractional_id_is_refused_with_file_and_row(tmp_path):
    path = tmp_path / "pool.parquet"
    pq.write_table(pa.table({"id": [10055.0, 10055.5], "project": ["a", "b"]}), path)
    with pytest.raises(InputError) as info:
        load_pool(path)
    assert str(info.value) == (f"{path}: row 2 (id): id holds the number 10055.5, not an id; ids must be whole "
                               "numbers or text")


def test_pool_csv_with_hostile_ids_counts_them(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text(f"id,project\narvo:10288,a\narvo:{FULLWIDTH},b\narvo:-1,c\narvo:1e5,d\n{TOO_BIG},e\n"
                    "10055.0,f\n", encoding="utf-8")
    pool = load_pool(path)
    assert pool.table["raw_id"].tolist() == [10288]
    assert {p.what: p.count for p in pool.problems} == {"malformed_id": 5}


def test_arvo_projects_fractional_local_id_is_refused(tmp_path):
    root = tmp_path / "ARVO"
    path = root / "arvo" / "NewTracker" / "metadata.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"localId": 42470443.0, "project": "a"}\n{"localId": 42470443.5, "project": "b"}\n')
    with pytest.raises(InputError, match=r"line 2 \(localId\): id holds the number 42470443.5"):
        load_pool("arvo-projects", data={"arvo-projects": root})
    path.write_text('{"localId": 42470443.0, "project": "a"}\n{"localId": "１２", "project": "b"}\n'
                    '{"localId": "arvo:-1", "project": "c"}\n', encoding="utf-8")
    pool = load_pool("arvo-projects", data={"arvo-projects": root})
    assert pool.table["raw_id"].tolist() == [42470443]
    assert {p.what: p.count for p in pool.problems} == {"malformed_id": 2}


@pytest.mark.parametrize(("local", "problem"), [
    (10400, None), (10400.0, None), ("arvo:10400", None), (None, None),
    (10401, "id_mismatch"), (FULLWIDTH, "malformed_id"), (10400.5, "malformed_id"), (True, "malformed_id"),
    (-10400, "malformed_id"), (TOO_BIG, "malformed_id"),
])
def test_arvo_meta_local_id(local, problem):
    number, found = meta_id({"localId": local}, file_id("archive_data/meta/10400.json"))
    assert number == (10401 if problem == "id_mismatch" else 10400)
    assert (found[0] if found else None) == problem


def test_arvo_meta_file_names_are_strict():
    assert file_id("10400.json") == 10400
    assert file_id(f"{FULLWIDTH}.json") is None and file_id("-1.json") is None and file_id("1e5.json") is None
    assert meta_id({}, None) == (None, ("missing_id", "no localId and no numeric file name"))
    assert meta_id({"localId": "x"}, None)[1][0] == "malformed_id"


def test_arvo_meta_folder_counts_malformed_local_ids(tmp_path):
    folder = tmp_path / "meta"
    folder.mkdir()
    for name, local in [("10288", 10288), ("10400", FULLWIDTH), (FULLWIDTH, 11500), ("12001", 12001.5)]:
        (folder / f"{name}.json").write_text(json.dumps({"localId": local, "project": "p"}), encoding="utf-8")
    (folder / f"{ARABIC_INDIC}.json").write_text(json.dumps({"project": "p"}), encoding="utf-8")
    pool = load_pool(folder)
    assert sorted(pool.table["raw_id"].tolist()) == [10288, 10400, 11500, 12001]
    problems = {p.what: p.count for p in pool.problems}
    assert problems == {"malformed_id": 2, "missing_id": 1}
