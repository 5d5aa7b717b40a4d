"""The recogniser table (`RECOGNISERS`): each id scheme's name, example and vectorised extraction.

The recognisers are one table, so a new id scheme is one entry in one file. A value a recogniser takes
becomes keys in the project's key vocabulary (`ossfuzz`, `cve`, `repo_pr`, `repo_pr_exact`, `base_pr`, `base`,
`fix_commit`), exactly the keys the registered adapters make from the same value:

- `ossfuzz`: `arvo:N`, `arvo_N`, `oss-fuzz:N`, `<project>.ossfuzz-N`, Monorail and issue-tracker URLs
  (`bugs.chromium.org/p/oss-fuzz/issues/detail?id=N`, `issues.oss-fuzz.com/issues/N`); forced
  (`scheme="ossfuzz"`), any id whose trailing integer is the issue (`overlap.ids.ossfuzz.trailing_int`).
- `cve`: a CVE id anywhere in the value (`CVE-2023-50246`, `jq.cve-2023-50246`), as `overlap.ids.cve`.
- `ghsa`: a GitHub advisory id (`GHSA-xxxx-xxxx-xxxx`), through the row's CVE column when it has one.
- `github_pr`: `owner__repo-N`, `owner/repo#N`, `github.com/owner/repo/pull/N`; keys as
  `overlap.ids.github.pr_keys` (repo and PR from their columns when given, base commit from its column).
- `fix_commit`: `github.com/owner/repo/commit/<sha>` (forced: a bare commit sha); value = the sha lowercased.

Table order is the order `overlap.ids.recognise.recognise` tries them in (the first that takes a value wins).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from . import SCHEMES
from .cve import raw_cve
from .id_arrays import _groups_where, _holds, _numbers, _scalar_fill, _str, extract, id_strings
from .ossfuzz import MAX_DIGITS
from .pr_columns import _instance_numbers, _joined, _owner_form, _pr_keys_and_fields, pr_numbers, repo_as_written

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
