"""Properties of the id parsers: whatever the text, a parser returns None or a number written
verbatim in ASCII digits in it; every documented form of a number parses back to that number; a float id
with a fraction never becomes text."""

import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.errors import InputError
from overlap.ids.cve import find_cve, raw_cve
from overlap.ids.github import parse_instance_id, parse_pr, split_key
from overlap.ids.ossfuzz import issue_number, parse_mapping, trailing_int
from overlap.ids.values import id_text

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ISSUES = st.integers(min_value=1, max_value=10**12 - 1)  # 12 digits at most; no tracker has an issue 0
PRS = st.integers(min_value=1, max_value=2**63 - 1)

# Text that looks like ids: ASCII and other-script digits, signs, dots, exponents, separators, letters.
ID_ALPHABET = "0123456789０１２３٠١٢٣۴߁-+._:#/= eExXarvocfuzsCVE\n\t,"
id_like = st.text(alphabet=ID_ALPHABET, max_size=30)
any_text = st.one_of(id_like, st.text(max_size=40))


def ascii_numbers(text: str) -> set[int]:
    """Every number written with ASCII digits in `text` (any run of them, any sub-run)."""
    runs = re.findall(r"[0-9]+", text, re.ASCII)
    return {int(run[i:j]) for run in runs for i in range(len(run)) for j in range(i + 1, len(run) + 1)}


@SETTINGS
@given(any_text)
def test_ossfuzz_parser_returns_none_or_a_number_written_in_the_text(text):
    number = trailing_int(text)
    assert number is None or (isinstance(number, int) and 0 < number < 10**12 and str(number) in text)
    assert number is None or number in ascii_numbers(text)


@SETTINGS
@given(any_text)
def test_issue_number_is_the_whole_text_or_none(text):
    number = issue_number(text)
    assert number is None or (text.isascii() and text.isdigit() and int(text) == number)


@SETTINGS
@given(any_text)
def test_pr_parser_returns_none_or_a_number_written_in_the_text(text):
    number = parse_pr(text)
    assert number is None or (0 < number <= 2**63 - 1 and number in ascii_numbers(text))
    parsed = parse_instance_id(text)
    assert parsed is None or parsed[2] in ascii_numbers(text)
    head, tail = split_key(text)
    assert tail is None or tail in ascii_numbers(text)


@SETTINGS
@given(any_text)
def test_cve_parser_returns_none_or_the_id_written_in_the_text(text):
    raw, canonical = raw_cve(text), find_cve(text)
    assert (raw is None) == (canonical is None)
    if raw is not None:
        assert raw in text and raw.isascii() and canonical == raw.upper()
        assert re.fullmatch(r"CVE-[0-9]{4}-[0-9]{4,12}", canonical, re.ASCII)


@SETTINGS
@given(ISSUES)
def test_every_documented_ossfuzz_form_parses_back(number):
    forms = [number, str(number), f"arvo:{number}", f"ARVO:{number}", f"arvo_{number}", f"oss-fuzz:{number}",
             f"php.ossfuzz-{number}", f" arvo:{number}\n", id_text(number), id_text(float(number))]
    assert [trailing_int(form) for form in forms] == [number] * len(forms)
    assert issue_number(str(number)) == number


@SETTINGS
@given(ISSUES, ISSUES)
def test_mapping_rows_parse_back(old, new):
    mapping = parse_mapping(f"\ufeff{old},{new}\r\n".encode(), "m.csv")
    assert mapping.old_to_new == {old: new} and mapping.skipped_rows == 0


@SETTINGS
@given(ISSUES)
def test_number_with_sign_fraction_or_exponent_is_not_an_ossfuzz_id(number):
    for form in (f"arvo:-{number}", f"arvo:+{number}", f"arvo:{number}.5", f"arvo:{number}.0", f"arvo:1e{number}",
                 f"arvo:{number}e5", f"arvo:{number}".translate(str.maketrans("0123456789", "０１２３４５６７８９"))):
        assert trailing_int(form) is None, form


@SETTINGS
@given(PRS)
def test_every_documented_pr_form_parses_back(number):
    forms = [number, str(number), f"{number}.0", f" {number} "]
    if number <= 2**53:  # a float holds every integer up to 2**53 exactly
        forms.append(float(number))
    assert [parse_pr(form) for form in forms] == [number] * len(forms)
    assert parse_instance_id(f"keras-team__keras-{number}") == ("keras-team", "keras", number)
    assert split_key(f"clap-rs/clap#{number}") == ("clap-rs/clap", number)


@SETTINGS
@given(st.integers(min_value=1999, max_value=9999), st.integers(min_value=0, max_value=10**12 - 1))
def test_every_documented_cve_form_parses_back(year, number):
    canonical = f"CVE-{year}-{number:04d}"
    for form in (canonical, canonical.lower(), f"jq.{canonical.lower()}", f"see {canonical}."):
        assert find_cve(form) == canonical
        assert raw_cve(form).upper() == canonical
    assert find_cve(canonical.replace("-", "_")) is None


@SETTINGS
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_id_text_never_gives_text_for_a_fractional_float(value):
    try:
        text = id_text(value)
    except InputError:
        assert not (math.isfinite(value) and value.is_integer()) or abs(value) > 2**53
        return
    if text is None:
        assert math.isnan(value)
    else:
        assert value.is_integer() and int(text) == value


@SETTINGS
@given(st.one_of(st.none(), st.integers(), st.text(), st.booleans(), st.floats(),
                 st.lists(st.integers(), max_size=2)))
def test_id_text_gives_text_none_or_one_line_error(value):
    try:
        text = id_text(value)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert text is None or isinstance(text, str)


@pytest.mark.parametrize("value", [0.5, 10055.5, -1.25, 1e-300])
def test_id_text_examples_of_fractions(value):
    with pytest.raises(InputError, match="not an id"):
        id_text(value)
