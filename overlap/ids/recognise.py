"""Id schemes recognised from the values of an id column, vectorised over Arrow string arrays.

Over 400 lines on purpose: the recognisers are one table, so a new id scheme is one entry in one file.

A table of recognisers (`RECOGNISERS`), each with a name, an example and a vectorised extraction: a value a
recogniser takes becomes keys in the project's key vocabulary (`ossfuzz`, `cve`, `repo_pr`, `repo_pr_exact`,
`base_pr`, `base`, `fix_commit`), exactly the keys the registered adapters make from the same value:

- `ossfuzz`: `arvo:N`, `arvo_N`, `oss-fuzz:N`, `<project>.ossfuzz-N`, Monorail and issue-tracker URLs
  (`bugs.chromium.org/p/oss-fuzz/issues/detail?id=N`, `issues.oss-fuzz.com/issues/N`); forced
  (`scheme="ossfuzz"`), any id whose trailing integer is the issue (`overlap.ids.ossfuzz.trailing_int`).
- `cve`: a CVE id anywhere in the value (`CVE-2023-50246`, `jq.cve-2023-50246`), as `overlap.ids.cve`.
- `ghsa`: a GitHub advisory id (`GHSA-xxxx-xxxx-xxxx`), through the row's CVE column when it has one.
- `github_pr`: `owner__repo-N`, `owner/repo#N`, `github.com/owner/repo/pull/N`; keys as
  `overlap.ids.github.pr_keys` (repo and PR from their columns when given, base commit from its column).
- `fix_commit`: `github.com/owner/repo/commit/<sha>` (forced: a bare commit sha); value = the sha lowercased.

The first recogniser (in table order) that takes a value wins. A forced scheme (`--id-scheme`) adds its
looser form for the values no recogniser's specific form takes: a PR URL stays a PR and a CVE a CVE under
`--id-scheme ossfuzz`, while a bare `task-10055` becomes OSS-Fuzz issue 10055. A value none takes is
unrecognised: counted and listed (first five), never dropped silently. Rows whose value is not ASCII go
through the scalar parsers (`trailing_int`, `find_cve`, `parse_instance_id`), so every Unicode rule
(fullwidth digits refused, letters of any script bounding a CVE id) is theirs, unchanged; so are numbers
too long for int64. Floats are ids only when whole (`10055.0` is 10055, as `overlap.ids.values.id_text`); in a
number column a fraction, inf or NaN is no id (missing, as the items count it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from . import SCHEMES, compiled
from .cve import find_cve, raw_cve
from .github import MAX_PR, canonical_repo, normalize_repo, parse_instance_id, parse_pr, pr_keys
from .ossfuzz import MAX_DIGITS, trailing_int

KEY_FIELDS = ("row", "kind", "value", "raw")
CONTEXT = ("repo", "pr", "base", "cve", "fix")  # columns a recogniser may read beside the id

_OWNER_REPO = r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+"
_OSSFUZZ_SPECIFIC = (
    r"(?i)^(?:arvo|oss-?fuzz)[:_-]([0-9]+)$",
    r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\.ossfuzz-([0-9]+)$",
    r"(?i)^(?:https?://)?bugs\.chromium\.org/p/oss-fuzz/issues/detail\?id=([0-9]+)(?:&[^#]*)?(?:#.*)?$",
    r"(?i)^(?:https?://)?issues\.oss-fuzz\.com/issues/([0-9]+)/?(?:[?#].*)?$",
)
# overlap.ids.ossfuzz._TASK_ID (the trailing integer after a word and one separator), in RE2 syntax.
_OSSFUZZ_TRAILING = r"(?s)^(?:(?:.*[^A-Za-z0-9])?[A-Za-z][A-Za-z0-9]*[-_:#/= ])?([0-9]+)$"
_CVE = r"(?:^|[^A-Za-z0-9])([Cc][Vv][Ee]-(?:1999|[2-9][0-9]{3})-[0-9]{4,12})(?:[^A-Za-z0-9]|$)"
_GHSA = r"(?i)^(?:https?://github\.com/advisories/)?(GHSA(?:-[23456789cfghjmpqrvwx]{4}){3})$"
_PR_FORMS = (
    r"(?s)^(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)__(?P<name>.+)-(?P<pr>[0-9]+)$",
    rf"^(?P<repo>{_OWNER_REPO})#(?P<pr>[0-9]+)$",
    rf"(?i)^(?:https?://)?(?:www\.)?github\.com/(?P<repo>{_OWNER_REPO})/pull/(?P<pr>[0-9]+)(?:[/?#].*)?$",
)
_COMMIT_URL = rf"(?i)^(?:https?://)?(?:www\.)?github\.com/{_OWNER_REPO}/commit/(?P<sha>[0-9a-f]{{7,40}})(?:[/?#].*)?$"
_BARE_SHA = r"(?i)^(?P<sha>[0-9a-f]{7,40})$"
_REPO_NAME = r"^[A-Za-z0-9._-]+$"
_OWNER_FORM = r"^[A-Za-z0-9][A-Za-z0-9-]*__[A-Za-z0-9._-]+-[0-9]+$"  # _PR_FORMS[0] with a repo name
_SAFE_DIGITS = 18  # digit strings this long or shorter are below 2**63 and cast to int64 in Arrow


# --- results -------------------------------------------------------------------------------------------


@dataclass
class RecogniserCount:
    count: int = 0
    example: str | None = None


@dataclass
class RecognitionReport:
    """How many values each recogniser took (with one example), and the values none took."""

    taken: dict[str, RecogniserCount] = field(default_factory=dict)
    unrecognised: int = 0
    unrecognised_examples: list[str] = field(default_factory=list)
    missing: int = 0  # rows with no id at all (null or blank)
    scheme: str | None = None
    # the columns read beside the id that some file has (a named column no file has is likely misspelt:
    # `overlap.api.compare` says so)
    found_columns: set[str] = field(default_factory=set)

    @property
    def values(self) -> int:
        return sum(c.count for c in self.taken.values()) + self.unrecognised + self.missing

    def merge(self, other: RecognitionReport) -> None:
        for name, counted in other.taken.items():
            mine = self.taken.setdefault(name, RecogniserCount())
            mine.count += counted.count
            mine.example = mine.example or counted.example
        self.unrecognised += other.unrecognised
        self.found_columns |= other.found_columns
        room = 5 - len(self.unrecognised_examples)
        self.unrecognised_examples += other.unrecognised_examples[:max(room, 0)]
        self.missing += other.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme or "auto",
            "recognised": {name: {"count": c.count, "example": c.example} for name, c in sorted(self.taken.items())},
            "unrecognised": {"count": self.unrecognised, "examples": list(self.unrecognised_examples)},
            "missing": self.missing,
        }

    def summary(self) -> str:
        """One line for a report: `ossfuzz 812 (e.g. arvo:1065); unrecognised 3 (e.g. 'x', 'y')`."""
        parts = [f"{name} {c.count} (e.g. {c.example})" for name, c in sorted(self.taken.items()) if c.count]
        if self.unrecognised:
            shown = ", ".join(repr(v) for v in self.unrecognised_examples)
            parts.append(f"unrecognised {self.unrecognised} (e.g. {shown})")
        if self.missing:
            parts.append(f"no id {self.missing}")
        return "; ".join(parts) or "no values"


@dataclass
class Recognition:
    """Keys found in one batch of values (`keys`: a pyarrow Table row, kind, value, raw) and the report.
    `recogniser` holds, per row, the name of the recogniser that took its value (null: none)."""

    keys: Any
    report: RecognitionReport
    recogniser: Any
    # (each row's PR number, canonical repo) as its PR keys carry them (null: no such key), so a reader need
    # not parse them back out of the key strings; None when the scalar parsers made keys
    pr_fields: tuple[Any, Any] | None = None


@dataclass(frozen=True)
class Recogniser:
    name: str
    example: str
    description: str
    # (values, rows still open, context, forced) → (mask of rows taken, key parts)
    extract: Callable[..., tuple[Any, list[tuple[Any, str, Any, Any]]]]
    # literals (LITERALS) of which every value its specific forms take holds one: with none among the open
    # values, it takes none of them (and is not run)
    literals: tuple[str, ...] = ()


# --- Arrow helpers -------------------------------------------------------------------------------------


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


# --- recognisers ---------------------------------------------------------------------------------------


def _ossfuzz(values, open_rows, context, forced):
    if forced:  # any trailing issue number, but never in a GitHub URL (`trailing_int`)
        numbers = _issue_numbers(extract(values, _OSSFUZZ_TRAILING))
        numbers = pc.if_else(_holds(values, context, "github.com"), pa.scalar(None, pa.int64()), numbers)
    else:  # every specific form holds `arvo` or `fuzz`: the regexes run only on the values that do
        candidate = _holds(values, context, "arvo", "fuzz")
        count = pc.sum(candidate).as_py() or 0
        chosen = values if count == len(values) else values.filter(candidate)
        digits = pa.nulls(len(chosen), pa.string())
        for pattern in _OSSFUZZ_SPECIFIC if count else ():
            digits = pc.coalesce(digits, extract(chosen, pattern))
        numbers = _issue_numbers(digits)
        if count != len(values):
            numbers = pc.replace_with_mask(pa.nulls(len(values), pa.int64()), candidate, numbers)
    taken = pc.and_(open_rows, pc.is_valid(numbers))
    # as numbers: written as text only for the rows that have one (`recognise` casts what it keeps)
    return taken, [(taken, "ossfuzz", numbers, numbers)]


def _issue_numbers(digits):
    """OSS-Fuzz issue numbers of digit strings: at most MAX_DIGITS digits, leading zeros included
    (`overlap.ids.ossfuzz.issue_number`); null otherwise."""
    short = pc.fill_null(pc.less_equal(pc.utf8_length(digits), MAX_DIGITS), False)
    return _numbers(pc.if_else(short, digits, pa.scalar(None, pa.string())), 10**MAX_DIGITS - 1)


def _cve(values, open_rows, context, forced):
    raw = _groups_where(values, _holds(values, context, "cve-"), _CVE, ["g"])[0]
    value = pc.utf8_upper(raw)
    taken = pc.and_(open_rows, pc.is_valid(raw))
    return taken, [(taken, "cve", value, raw)]


def _ghsa(values, open_rows, context, forced):
    ghsa = _groups_where(values, _holds(values, context, "ghsa-"), _GHSA, ["g"])[0]
    cve_column = context.get("cve")
    if cve_column is None or not pc.any(pc.is_valid(ghsa)).as_py():
        return pc.and_(open_rows, pa.repeat(pa.scalar(False), len(values))), []
    cve_text = id_strings(cve_column)
    raw = extract(cve_text, _CVE)
    raw = _scalar_fill(raw, pc.invert(pc.fill_null(pc.string_is_ascii(cve_text), True)), cve_text, raw_cve,
                       pa.string())
    taken = pc.and_(open_rows, pc.and_(pc.is_valid(ghsa), pc.is_valid(raw)))
    return taken, [(taken, "cve", pc.utf8_upper(raw), raw)]


def _fix_commit(values, open_rows, context, forced):
    raw = _groups_where(values, _holds(values, context, "/commit/"), _COMMIT_URL, ["sha"])[0]
    if forced:
        raw = pc.coalesce(raw, extract(values, _BARE_SHA, "sha"))
    taken = pc.and_(open_rows, pc.is_valid(raw))
    return taken, [(taken, "fix_commit", pc.utf8_lower(raw), raw)]


def _owner_form(values):
    """(ok, repo, PR number, key `repo#N`) of `owner__name-N` values (`_PR_FORMS[0]` with the name a repo
    name): repo null where a value is not of that form, number and key null where it is not or its digits are
    no PR number. One compiled pass over the bytes for a large batch; else one capture-free match picks the
    values, then a split at the first `__` (an owner has no `_`) and at the last `-` (the digits have none)
    reads them, several times cheaper than capture groups."""
    module = compiled.kernels(len(values))
    found = compiled.owner_form_keys(values, module) if module is not None else None
    if found is not None:
        ok, repo, numbers, keys = found
        return pa.array(ok), repo, numbers, keys
    ok = pc.fill_null(pc.match_substring_regex(values, _OWNER_FORM), False)
    count = pc.sum(ok).as_py() or 0
    if not count:
        return ok, pa.nulls(len(values), pa.string()), pa.nulls(len(values), pa.int64()), \
            pa.nulls(len(values), pa.string())
    chosen = values if count == len(values) else values.filter(ok)
    halves = pc.split_pattern(chosen, "__", max_splits=1)
    tail = pc.split_pattern(pc.list_element(halves, 1), "-", max_splits=1, reverse=True)
    repo = pc.binary_join_element_wise(pc.list_element(halves, 0), pc.list_element(tail, 0), "/")
    digits = pc.list_element(tail, 1)
    if count != len(values):
        repo = pc.replace_with_mask(pa.nulls(len(values), pa.string()), ok, repo)
        digits = pc.replace_with_mask(pa.nulls(len(values), pa.string()), ok, digits)
    numbers = _instance_numbers(values, digits)
    return ok, repo, numbers, _joined(repo, _str(numbers))


def _instance_numbers(values, digits):
    """PR numbers of the digits of `owner__name-N` values; digits too long for the vectorised cast go through
    the scalar parser of the whole value."""
    return _scalar_fill(_numbers(digits, MAX_PR), _long_digits(digits), values,
                        lambda v: (parse_instance_id(v) or (None, None, None))[2], pa.int64())


def _github_pr(values, open_rows, context, forced):
    ok, repo, numbers, exact = _owner_form(values)
    for pattern, literal in zip(_PR_FORMS[1:], ("#", "github.com"), strict=True):
        candidate = pc.and_(pc.invert(ok), _holds(values, context, literal))
        found_repo, found_digits = _groups_where(values, candidate, pattern, ["repo", "pr"])
        if found_digits.null_count < len(found_digits):
            found_numbers = _instance_numbers(values, found_digits)
            repo = pc.coalesce(repo, found_repo)
            numbers = pc.coalesce(numbers, found_numbers)
            exact = pc.coalesce(exact, _joined(found_repo, _str(found_numbers)))
            ok = pc.or_(ok, pc.is_valid(found_digits))
    taken = pc.and_(open_rows, pc.is_valid(numbers))
    # A repo or PR column gives the row's repo and PR where its cell has one; a null cell falls back to what
    # the row's own id says (never to no key at all).
    if context.get("repo") is not None:
        repo = pc.coalesce(repo_as_written(context["repo"]), repo)
        exact = None
    if context.get("pr") is not None:
        # A cell that is there but not a PR number gives none (the reader counts it), not the id's.
        cell = pr_numbers(context["pr"])
        written = pc.utf8_trim_whitespace(id_strings(context["pr"]))
        junk = pc.fill_null(pc.and_(pc.not_equal(written, ""), pc.is_null(cell)), False)
        if pa.types.is_floating(context["pr"].type):
            junk = pc.and_(junk, pc.invert(pc.fill_null(pc.is_nan(context["pr"]), True)))
        numbers = pc.if_else(junk, pa.scalar(None, pa.int64()), pc.coalesce(cell, numbers))
        exact = None
    parts, pr, canonical = _pr_keys_and_fields(taken, repo, numbers, context.get("base"), exact)
    return taken, parts, {"pr": pr, "repo": canonical}


RECOGNISERS: dict[str, Recogniser] = {
    r.name: r
    for r in (
        Recogniser("ossfuzz", "arvo:10340", "OSS-Fuzz issue: arvo:N, arvo_N, oss-fuzz:N, <project>.ossfuzz-N, "
                   "bugs.chromium.org/p/oss-fuzz/issues/detail?id=N, issues.oss-fuzz.com/issues/N", _ossfuzz,
                   ("arvo", "fuzz")),
        Recogniser("cve", "jq.cve-2023-50246", "a CVE id anywhere in the value", _cve, ("cve-",)),
        Recogniser("ghsa", "GHSA-7rjr-3q55-vv33", "a GitHub advisory, through the row's CVE column", _ghsa,
                   ("ghsa-",)),
        Recogniser("github_pr", "kbknapp__clap-rs-941", "GitHub PR: owner__repo-N, owner/repo#N, "
                   "github.com/owner/repo/pull/N (base commit from its column)", _github_pr),
        Recogniser("fix_commit", "github.com/jqlang/jq/commit/c9a51565", "fix commit: "
                   "github.com/owner/repo/commit/<sha> (forced: a bare sha)", _fix_commit, ("/commit/",)),
    )
}
if tuple(RECOGNISERS) != SCHEMES:  # the light name list (declarations are checked against it) is this table's
    raise ImportError(f"overlap.ids.SCHEMES {SCHEMES} is not the recognisers' order {tuple(RECOGNISERS)}")


# --- PR keys, vectorised (overlap.ids.github.pr_keys over columns) -------------------------------------


def map_distinct(values: Any, function: Callable[[Any], Any], out_type: Any) -> Any:
    """`function` over the distinct values only (repo names: thousands of distinct in 100k rows)."""
    if values.null_count == len(values):  # a column the set does not have
        return pa.nulls(len(values), out_type)
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    distinct = encoded.dictionary.to_pylist()
    mapped = [function(v) for v in distinct]
    if mapped == distinct and isinstance(values, pa.Array) and values.type == out_type:
        return values  # each value is its own image (repos written canonically): the very array, no copy
    return pa.array(mapped, out_type).take(encoded.indices)


@lru_cache(maxsize=1 << 16)
def _written_repo(value: str | None) -> str | None:
    return str(value).strip() if value is not None and normalize_repo(value) else None


@lru_cache(maxsize=1 << 16)
def _canonical_repo(value: str | None) -> str | None:
    return canonical_repo(value) if value is not None else None


def repo_as_written(repo: Any) -> Any:
    """The repo column trimmed, null where it is not a GitHub `owner/name` (as `github.repo_as_written`)."""
    return map_distinct(id_strings(repo), _written_repo, pa.string())


def canonical_repos(written: Any) -> Any:
    """Canonical repos (`github.canonical_repo`, the shipped renames) of a column of repos as written."""
    return map_distinct(written, _canonical_repo, pa.string())


def pr_numbers(pr: Any) -> Any:
    """A PR column as int64 by `github.parse_pr`: ints > 0, whole floats, `123` / `123.0` text; else null."""
    if isinstance(pr, pa.ChunkedArray):
        pr = pr.combine_chunks()
    kind = pr.type
    if pa.types.is_boolean(kind) or pa.types.is_null(kind):
        return pa.nulls(len(pr), pa.int64())
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        text = id_strings(pr)  # whole floats up to 2**53 as their integer, other floats null
        numbers = _scalar_fill(_numbers(text, MAX_PR), _long_digits(text), text, parse_pr, pa.int64())
        if pa.types.is_floating(kind):  # whole floats past 2**53 are still PR numbers up to int64's end
            big = pc.and_(pc.is_finite(pr), pc.greater(pc.abs(pr), 2.0**53))
            numbers = _scalar_fill(numbers, pc.and_(big, pc.equal(pc.floor(pr), pr)), pr, parse_pr, pa.int64())
        return numbers
    text = id_strings(pr)
    ascii_rows = pc.fill_null(pc.string_is_ascii(text), True)
    digits = extract(pc.utf8_trim_whitespace(text), r"^([0-9]+)(?:\.0+)?$")
    numbers = _numbers(digits, MAX_PR)
    scalar_rows = pc.or_(_long_digits(digits), pc.invert(ascii_rows))
    return _scalar_fill(numbers, scalar_rows, text, parse_pr, pa.int64())


def instance_prs(ids: Any) -> Any:
    """PR numbers of `owner__repo-N` ids (`github.parse_instance_id` on each trimmed id), null where an id has
    not that form; non-ASCII and over-long ones go through the scalar parser."""
    text = id_strings(ids)
    numbers = _owner_form(pc.utf8_trim_whitespace(text))[2]
    return _scalar_fill(numbers, pc.invert(pc.fill_null(pc.string_is_ascii(text), True)), text,
                        lambda v: (parse_instance_id(v) or (None, None, None))[2], pa.int64())


def base_commits(base: Any) -> tuple[Any, Any]:
    """(normalised sha, raw sha as written but trimmed) of a base-commit column (`github.normalize_base`)."""
    text = id_strings(base)
    raw = pc.utf8_trim_whitespace(text)
    sha = pc.utf8_lower(raw)
    ok = pc.fill_null(pc.match_substring_regex(sha, r"^[0-9a-f]{7,64}$"), False)
    none = pa.scalar(None, pa.string())
    return pc.if_else(ok, sha, none), pc.if_else(ok, raw, none)


def _joined(left: Any, right: Any) -> Any:
    """`left#right` of each pair (null where either is null): a PR key value."""
    module = compiled.kernels(len(left))
    if module is not None:
        return compiled.join_pairs(left, right, "#", module)
    return pc.binary_join_element_wise(left, right, "#")


def pr_key_parts(rows: Any, repo: Any, numbers: Any, base: Any | None) -> list[tuple[Any, str, Any, Any]]:
    """(mask, kind, value, raw) of the PR keys of each row in `rows` (`github.pr_keys`, column-wise):
    `repo` as written (null: none), `numbers` int64 PR (null: none), `base` the base-commit column."""
    return _pr_keys_and_fields(rows, repo, numbers, base)[0]


def _pr_keys_and_fields(rows: Any, repo: Any, numbers: Any, base: Any | None,
                        exact: Any = None) -> tuple[list, Any, Any]:
    """(`pr_key_parts`, each row's PR number and canonical repo as its keys carry them): the PR number of a row
    with a `repo_pr_exact` or `base_pr` key, the repo of a row with a `repo_pr` key (null elsewhere), what a
    reader would otherwise parse back out of the key strings. `exact`: the `repo#N` values, when made already."""
    parts = []
    number_text = None
    has_pr = pc.and_(rows, pc.is_valid(numbers))
    written = repo
    canonical = canonical_repos(written)
    with_repo = pc.fill_null(pc.and_(has_pr, pc.is_valid(canonical)), False)
    if exact is None:
        number_text = _str(numbers)
        exact = _joined(written, number_text)
    # most repos are written canonically: their repo_pr value is the exact one, not joined again
    renamed = canonical is not written and pc.any(pc.not_equal(canonical, written)).as_py()
    if renamed or base is not None:
        number_text = _str(numbers) if number_text is None else number_text
    parts.append((with_repo, "repo_pr", _joined(canonical, number_text) if renamed else exact, exact))
    parts.append((with_repo, "repo_pr_exact", exact, exact))
    if base is not None:
        sha, raw_sha = base_commits(base)
        has_base = pc.fill_null(pc.and_(rows, pc.is_valid(sha)), False)
        both = pc.fill_null(pc.and_(has_base, pc.is_valid(numbers)), False)
        parts.append((both, "base_pr", _joined(sha, number_text), _joined(raw_sha, number_text)))
        parts.append((has_base, "base", sha, raw_sha))
        carried = pc.or_(with_repo, both)
    else:
        carried = with_repo
    none = pa.scalar(None, pa.string())
    return parts, pc.if_else(carried, numbers, pa.scalar(None, pa.int64())), pc.if_else(with_repo, canonical, none)


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


# --- the entry point -----------------------------------------------------------------------------------


def _scalar_recognise(name: str, value: str, forced: bool, context_row: dict[str, Any]) -> list[tuple]:
    """The keys of one (non-ASCII) value by the scalar parsers: the reference the vectorised path follows."""
    if name == "ossfuzz":
        number = trailing_int(value) if forced else None
        if not forced:
            return []  # the specific OSS-Fuzz forms are all ASCII
        return [("ossfuzz", str(number), str(number))] if number is not None else []
    if name == "cve":
        cve = find_cve(value)
        return [("cve", cve, raw_cve(value))] if cve else []
    if name == "github_pr":
        parsed = parse_instance_id(value)
        if parsed is None:
            return []
        owner, repo_name, number = parsed
        own_repo = f"{owner}/{repo_name}"
        repo = context_row.get("repo")
        written = repo.strip() if isinstance(repo, str) and normalize_repo(repo) else None
        if written is None:
            written = own_repo.strip() if normalize_repo(own_repo) else None
        column_pr = parse_pr(context_row["pr"]) if context_row.get("pr") is not None else None
        number = column_pr if column_pr is not None else number
        base = context_row.get("base")
        keys = pr_keys(written, number, base)
        return keys if keys or number is not None else []
    return []  # ghsa and fix_commit forms are ASCII


def recognise(values: Any, *, scheme: str | None = None, context: dict[str, Any] | None = None) -> Recognition:
    """Keys of every value of `values` (a pyarrow array of ids, any type) by the recogniser table.

    Each recogniser's specific forms are tried in table order; `scheme` then adds one recogniser's looser
    form (`ossfuzz`: any trailing issue number; `fix_commit`: a bare sha) for the values still open.
    `context` holds columns beside the ids (`repo`, `pr`, `base`, `cve`, `fix`).
    """
    if scheme is not None and scheme not in RECOGNISERS:
        raise InputError(f"id scheme {scheme!r}: use one of {', '.join(RECOGNISERS)}")
    context = {k: v for k, v in (context or {}).items() if v is not None}
    unknown = sorted(set(context) - set(CONTEXT))
    if unknown:
        raise InputError(f"recognise: unknown context column {unknown[0]!r}; known: {', '.join(CONTEXT)}")
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    length = len(values)
    module = compiled.kernels(length)
    text = literal_bits = None
    if module is not None and pa.types.is_string(values.type):
        # one pass over the bytes: the literals, which values are ASCII, and whether any value might be trimmed
        bits, wide, edge = compiled.literal_bits_and_flags(values, LITERALS, module)
        if not edge.any():  # nothing to trim: the values are the text, a blank one is empty or null
            text, literal_bits = values, bits
            valid = values.is_valid().to_numpy(zero_copy_only=False)
            offsets = compiled.string_buffers(values)[0]
            missing = pa.array(~valid | (offsets[1:] == offsets[:-1]))
            ascii_rows = pa.array(~wide)
    if text is None:
        text = pc.utf8_trim_whitespace(id_strings(values))
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            missing = pc.fill_null(pc.equal(pc.utf8_length(text), 0), True)  # blank
        elif pa.types.is_floating(values.type):
            # a number cell that is no whole number (NaN, how pandas writes a missing cell; a fraction; inf) is no
            # id, as the side's items count it
            missing = pc.is_null(text)
        else:
            missing = pc.is_null(values)
        ascii_rows = pc.fill_null(pc.string_is_ascii(text), True)
        if module is not None:
            literal_bits = compiled.literal_bits(text, LITERALS, module)
    if literal_bits is not None:
        context = {**context, "_literals": pa.array(literal_bits)}
    open_rows = pc.and_(pc.invert(missing), ascii_rows)
    open_rows = pc.and_(open_rows, pc.is_valid(text))
    # (recogniser, forced): every specific form first, then the forced scheme's looser form on what is left
    chosen = [(r, False) for r in RECOGNISERS.values()] + ([(RECOGNISERS[scheme], True)] if scheme else [])
    report = RecognitionReport(scheme=scheme)
    pieces = []
    open_rows = pc.fill_null(open_rows, False).to_numpy(zero_copy_only=False).copy()
    taken_by = np.full(length, -1, np.int64)  # per row, the index in `chosen` of the recogniser that took it
    # per recogniser, (row, example) of the first row it took: the example is the earliest value whichever pass
    # took it (a forced form, a non-ASCII value), so it does not depend on where batches split the rows
    examples: dict[str, tuple[int, str]] = {}
    carried: list[tuple[np.ndarray, dict[str, Any]]] = []  # (rows, what a recogniser's keys carry for them)
    for index, (recogniser, forced) in enumerate(chosen):
        # Each recogniser sees only the values no earlier one took (and none once every value is taken).
        open_at = np.flatnonzero(open_rows)
        if not len(open_at):
            break
        if literal_bits is not None and recogniser.literals and not forced:
            wanted = sum(1 << LITERALS.index(literal) for literal in recogniser.literals)
            if not (literal_bits[open_at] & wanted).any():
                continue
        if 2 * len(open_at) >= length:
            # most rows open: the whole batch with the open ones marked (a recogniser takes open rows only),
            # not a copy of most of its strings
            positions = open_at if len(open_at) == length else np.arange(length)
            taken, parts, *fields = recogniser.extract(text, pa.array(open_rows), context, forced)
        else:
            positions = open_at
            sub_context = {k: v.take(pa.array(open_at)) for k, v in context.items()}
            taken, parts, *fields = recogniser.extract(text.take(pa.array(open_at)),
                                                       pa.repeat(pa.scalar(True), len(open_at)), sub_context, forced)
        rows = pa.array(positions)
        carried += [(positions, f) for f in fields]
        taken = pc.fill_null(taken, False).to_numpy(zero_copy_only=False) & open_rows[positions]
        count = int(taken.sum())
        if count:
            first = int(positions[np.argmax(taken)])
            counted = report.taken.setdefault(recogniser.name, RecogniserCount())
            counted.count += count
            if first < examples.get(recogniser.name, (length,))[0]:
                examples[recogniser.name] = (first, _example(str(values[first].as_py())))
            taken_by[positions[taken]] = index
            open_rows[positions[taken]] = False
        # A PR's repo_pr and repo_pr_exact keys are often one array under one mask: filtered once, the two pieces
        # hold the same array (and the join hashes it once).
        chosen_by: dict[tuple[int, int], tuple[Any, int]] = {}
        picked: dict[tuple[int, int], Any] = {}
        for mask, kind, value, raw in parts:
            if (id(mask), id(value)) not in chosen_by:
                held = pc.fill_null(pc.and_(mask, pc.is_valid(value)), False)
                chosen_by[id(mask), id(value)] = held, pc.sum(held).as_py() or 0
            held, found = chosen_by[id(mask), id(value)]
            if not found:
                continue
            for array in (value, raw):
                if (id(held), id(array)) not in picked:
                    picked[id(held), id(array)] = _str(array if found == len(held) else array.filter(held))
            if (id(held), -1) not in picked:  # the rows: all of them when every row has the key
                picked[id(held), -1] = rows if found == len(held) else rows.filter(held)
            pieces.append(pa.table({"row": picked[id(held), -1], "kind": pa.repeat(pa.scalar(kind), found),
                                    "value": picked[id(held), id(value)], "raw": picked[id(held), id(raw)]}))
    # Non-ASCII values: the scalar parsers decide (every Unicode rule is theirs).
    names = pa.array([recogniser.name for recogniser, _ in chosen], pa.string())
    by_row = names.take(pa.array(taken_by, mask=taken_by < 0)) if len(chosen) else pa.nulls(length, pa.string())
    scalar_rows = pc.and_(pc.invert(missing), pc.invert(ascii_rows))
    scalar = pc.any(scalar_rows).as_py()
    if scalar:
        by_row_list = by_row.to_pylist()
        extra = {"row": [], "kind": [], "value": [], "raw": []}
        context_lists = {k: (v.to_pylist() if hasattr(v, "to_pylist") else list(v)) for k, v in context.items()
                         if k in CONTEXT}
        for position in pc.indices_nonzero(scalar_rows).to_pylist():
            value = text[position].as_py()
            row_context = {k: v[position] for k, v in context_lists.items()}
            for recogniser, forced in chosen:
                keys = _scalar_recognise(recogniser.name, value, forced, row_context)
                if keys:
                    counted = report.taken.setdefault(recogniser.name, RecogniserCount())
                    counted.count += 1
                    if position < examples.get(recogniser.name, (length,))[0]:
                        examples[recogniser.name] = (position, _example(value))
                    by_row_list[position] = recogniser.name
                    for kind, key_value, raw in keys:
                        for column, item in zip(KEY_FIELDS, (position, kind, key_value, raw), strict=True):
                            extra[column].append(item)
                    break
        by_row = pa.array(by_row_list, pa.string())
        if extra["row"]:
            pieces.append(pa.table({"row": pa.array(extra["row"], pa.int64()),
                                    "kind": pa.array(extra["kind"], pa.string()),
                                    "value": pa.array(extra["value"], pa.string()),
                                    "raw": pa.array(extra["raw"], pa.string())}))
    for name, (_, shown) in examples.items():
        report.taken[name].example = shown
    unrecognised = pc.and_(pc.invert(missing), pc.is_null(by_row))
    report.unrecognised = pc.sum(unrecognised).as_py() or 0
    report.missing = pc.sum(missing).as_py() or 0
    if report.unrecognised:
        first = pc.indices_nonzero(unrecognised)[:5]
        report.unrecognised_examples = [v for v in _display(values.take(first)) if v is not None]
    schema = pa.schema([("row", pa.int64()), ("kind", pa.string()), ("value", pa.string()), ("raw", pa.string())])
    # Keys in recogniser order, each recogniser's in row order: deterministic without a sort, which would copy
    # every key string once more (a fifth of a 250k-row scan).
    keys = pa.concat_tables(pieces) if pieces else schema.empty_table()
    return Recognition(keys=keys, report=report, recogniser=by_row,
                       pr_fields=None if scalar else _placed_fields(carried, length))


def _placed_fields(carried: list[tuple[np.ndarray, dict[str, Any]]], length: int) -> tuple[Any, Any]:
    """(PR number, repo) per row of a `length`-row batch, from what each recogniser's keys carry for its open
    rows (a row is taken by one recogniser: the others carry null for it)."""
    if len(carried) == 1 and len(carried[0][0]) == length:
        return carried[0][1]["pr"], carried[0][1]["repo"]
    number, has_number = np.zeros(length, np.int64), np.zeros(length, bool)
    where = np.full(length, -1, np.int64)
    repos = []
    start = 0
    for rows, fields in carried:
        pr = fields["pr"]
        held = pc.is_valid(pr).to_numpy(zero_copy_only=False)
        number[rows[held]] = pc.fill_null(pr, 0).to_numpy(zero_copy_only=False)[held]
        has_number[rows[held]] = True
        repo = fields["repo"]
        named = pc.is_valid(repo).to_numpy(zero_copy_only=False)
        where[rows[named]] = start + np.flatnonzero(named)
        repos.append(repo)
        start += len(repo)
    repo = pa.concat_arrays(repos) if repos else pa.nulls(0, pa.string())
    return (pa.array(number, pa.int64(), mask=~has_number),
            repo.take(pa.array(where, mask=where < 0)) if len(repo) else pa.nulls(length, pa.string()))
