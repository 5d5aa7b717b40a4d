"""Id columns as Arrow string arrays, and the vectorised steps the recognisers share over them.

An id column of any type as strings (`id_strings`), a regex group of each value (`extract`, `_groups_where`:
the regex on the rows a cheap literal test picks, `_holds`), digit strings as int64 (`_numbers`), the rows
recomputed by a scalar parser (`_scalar_fill`: the rare non-ASCII or over-long values), and a value cut for a
report (`_example`, `_display`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_SAFE_DIGITS = 18  # digit strings this long or shorter are below 2**63 and cast to int64 in Arrow


def id_strings(values: Any) -> Any:
    """An id column as a string array: text as is, integers as digits, whole floats as their integer; a
    fraction, inf, NaN or any other type is null in the result (and listed as unrecognised by the caller)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kind = values.type
    if pa.types.is_string(kind):
        return values
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind) or pa.types.is_dictionary(kind):
        return values.cast(pa.string())
    if pa.types.is_integer(kind):
        return values.cast(pa.string())
    if pa.types.is_floating(kind):
        whole = pc.and_(pc.is_finite(values), pc.equal(pc.floor(values), values))
        whole = pc.and_(whole, pc.less_equal(pc.abs(values), 2.0**53))
        return pc.if_else(whole, pc.cast(pc.if_else(whole, values, 0.0), pa.int64()).cast(pa.string()),
                          pa.scalar(None, pa.string()))
    return pa.nulls(len(values), pa.string())


EXAMPLE_CHARS = 80  # an example in a report is cut here: a hostile 20 MB id must not become a 20 MB line


def _example(value: str) -> str:
    return value if len(value) <= EXAMPLE_CHARS else value[:EXAMPLE_CHARS] + "…"


def _display(values: Any) -> list[str | None]:
    if pa.types.is_floating(values.type):  # a whole float as the integer it is read as
        return [None if v is None else _example(str(int(v)) if v.is_integer() and abs(v) <= 2.0**53 else repr(v))
                for v in values.to_pylist()]
    if pa.types.is_boolean(values.type):
        return [None if v is None else _example(repr(v)) for v in values.to_pylist()]
    return [None if v is None else _example(str(v)) for v in values.to_pylist()]


def _named(pattern: str) -> str:
    """`pattern` with its first unnamed capturing group named `g`."""
    index = 0
    while True:
        index = pattern.index("(", index)
        if pattern[index + 1] != "?" and (index == 0 or pattern[index - 1] != "\\"):
            return pattern[:index + 1] + "?P<g>" + pattern[index + 1:]
        index += 1


def extract(values: Any, pattern: str, group: str = "g") -> Any:
    """Group `group` (a name; `g` = the first unnamed group) of `pattern` (RE2) in each value; null where
    the value does not match."""
    if "(?P<" not in pattern:
        pattern = _named(pattern)
    found = pc.extract_regex(values, pattern)
    field_of = pc.struct_field(found, [group])
    return pc.if_else(pc.is_valid(found), field_of, pa.scalar(None, pa.string()))


def _groups_where(values: Any, candidate: Any, pattern: str, groups: list[str]) -> list[Any]:
    """The named `groups` of `pattern` (RE2) in each value where `candidate` holds (null elsewhere and where
    the value does not match): a cheap literal test picks the rows, the regex runs on those alone."""
    candidate = pc.fill_null(candidate, False)
    count = pc.sum(candidate).as_py() or 0
    if "(?P<" not in pattern:
        pattern = _named(pattern)
    if not count:
        return [pa.nulls(len(values), pa.string()) for _ in groups]
    chosen = values if count == len(values) else values.filter(candidate)
    found = pc.extract_regex(chosen, pattern)
    matched = pc.is_valid(found)
    none = pa.scalar(None, pa.string())
    out = [pc.if_else(matched, pc.struct_field(found, [group]), none) for group in groups]
    if count == len(values):
        return out
    return [pc.replace_with_mask(pa.nulls(len(values), pa.string()), candidate, part) for part in out]


# Literals the recognisers test values for before their regexes run (`_holds`): a large batch has them all
# found in one compiled pass (`compiled.literal_bits`), carried beside the values as the context's `_literals`.
LITERALS = ("arvo", "fuzz", "cve-", "ghsa-", "/commit/", "#", "github.com")


def _holds(values: Any, context: dict[str, Any], *needles: str) -> Any:
    """Whether each value, ASCII letters lowered, holds any of `needles` (lowercase, in LITERALS); False for a
    null: the cheap literal test that picks the rows a recogniser's regex runs on."""
    if "_literals" in context:
        wanted = sum(1 << LITERALS.index(needle) for needle in needles)
        return pa.array((context["_literals"].to_numpy(zero_copy_only=False) & wanted) != 0)
    lowered = pc.ascii_lower(values)
    found = pc.match_substring(lowered, needles[0])
    for needle in needles[1:]:
        found = pc.or_(found, pc.match_substring(lowered, needle))
    return pc.fill_null(found, False)


def _numbers(digits: Any, limit: int) -> Any:
    """ASCII digit strings as int64 (null: empty, 0, longer than the safe length, or over `limit`)."""
    safe = pc.and_(pc.is_valid(digits), pc.less_equal(pc.utf8_length(digits), _SAFE_DIGITS))
    safe = pc.fill_null(safe, False)
    numbers = pc.cast(pc.if_else(safe, digits, "0"), pa.int64())
    ok = pc.and_(safe, pc.and_(pc.greater(numbers, 0), pc.less_equal(numbers, limit)))
    return pc.if_else(ok, numbers, pa.scalar(None, pa.int64()))


def _long_digits(digits: Any) -> Any:
    """Rows whose digit string is too long for the vectorised cast (they go to the scalar parser)."""
    return pc.fill_null(pc.greater(pc.utf8_length(digits), _SAFE_DIGITS), False)


def _str(array: Any) -> Any:
    return array.cast(pa.string())


def _scalar_fill(result: Any, rows: Any, values: Any, parse: Callable[[Any], Any], out_type: Any) -> Any:
    """`result` with the given rows recomputed by a scalar parser (the rare non-ASCII or over-long values)."""
    rows = pc.fill_null(rows, False)
    if not pc.any(rows).as_py():
        return result
    positions = pc.indices_nonzero(rows).to_pylist()
    texts = values.take(pa.array(positions, pa.int64())).to_pylist()
    out = result.to_pylist()
    for position, text in zip(positions, texts, strict=True):
        out[position] = parse(text) if text is not None else None
    return pa.array(out, out_type)
