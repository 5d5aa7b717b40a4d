import pytest

from overlap.errors import InputError
from overlap.ids.cve import find_cve, raw_cve
from overlap.ids.ossfuzz import OssFuzzMapping, parse_mapping, scheme, trailing_int


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("arvo:10400", 10400),
        ("arvo_42470443", 42470443),
        ("oss-fuzz:42537168", 42537168),
        ("php.ossfuzz-42491394", 42491394),
        ("arvo_386128948", 386128948),
        (54839, 54839),
        ("arvo_badid", None),
        ("", None),
        (None, None),
    ],
)
def test_trailing_int_reads_every_id_form(text, number):
    assert trailing_int(text) == number


def test_scheme_splits_at_one_million():
    assert scheme(54839) == "old"
    assert scheme(999_999) == "old"
    assert scheme(42519792) == "new"
    assert scheme(386128948) == "new"


def test_mapping_canonical_prefers_new_id_and_keeps_unknown_ids():
    mapping = parse_mapping(b"10288,40643631\n10400,42470443\n", "m.csv")
    assert mapping.canonical(10288) == 40643631
    assert mapping.canonical(40643631) == 40643631  # a new id stays itself
    assert mapping.canonical(19999) == 19999  # unknown old id: as given
    assert mapping.is_known(42470443) and not mapping.is_known(19999)


def test_mapping_skips_and_counts_rows_that_are_not_two_integers():
    mapping = parse_mapping(b"old,new\n10288,40643631\n\nx,1\n10400,42470443\n", "m.csv")
    assert len(mapping) == 2
    assert mapping.skipped_rows == 3  # the header, the blank line and `x,1`


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"1,100\n1,200\n", "old id 1 maps to both 100 and 200"),
        (b"1,100\n2,100\n", "new id 100 is the target of both 1 and 2"),
        (b"", "no 'old id,new id' rows"),
        (b"\xff\xfe1,2\n", "not UTF-8"),
    ],
)
def test_mapping_rejects_bad_tables_with_one_line(data, fragment):
    with pytest.raises(InputError) as info:
        parse_mapping(data, "m.csv")
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_repeated_identical_row_is_fine():
    assert len(parse_mapping(b"1,100\n1,100\n", "m.csv")) == 1


def test_cve_normalised_to_upper_case():
    assert find_cve("jq.cve-2023-50246") == "CVE-2023-50246"
    assert raw_cve("jq.cve-2023-50246") == "cve-2023-50246"
    assert find_cve("CVE-2021-1234567") == "CVE-2021-1234567"
    assert find_cve("php.ossfuzz-42491394") is None


def test_mapping_object_reverse_index():
    mapping = OssFuzzMapping({1: 100, 2: 200})
    assert mapping.new_to_old == {100: 1, 200: 2}
