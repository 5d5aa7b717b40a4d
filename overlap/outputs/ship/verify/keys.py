"""The keys of one row, by the id parsers of `overlap.ids` alone: which cells hold its identity (`KeyColumns`)
and the (kind, canonical value) keys they give (`row_keys`).

What the verifier must know of a dataset is which cells hold the id, repo, PR and base commit: the caller takes
them from the dataset's declaration or the user's column options, never from a table the filter computed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ....errors import InputError
from ....ids.cve import find_cve
from ....ids.github import canonical_repo, normalize_base, normalize_repo, parse_instance_id, parse_pr
from ....ids.ossfuzz import issue_number, trailing_int
from ....ids.values import id_text

SCHEMES = ("ossfuzz", "cve", "ghsa", "github_pr", "fix_commit", "columns")  # "columns": the id gives no key

_OWNER_REPO = r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+"
_OSSFUZZ_FORMS = tuple(re.compile(p, re.ASCII) for p in (
    r"(?i)(?:arvo|oss-?fuzz)[:_-]([0-9]+)",
    r"[A-Za-z0-9][A-Za-z0-9_.+-]*\.ossfuzz-([0-9]+)",
    r"(?i)(?:https?://)?bugs\.chromium\.org/p/oss-fuzz/issues/detail\?id=([0-9]+)(?:&[^#]*)?(?:#.*)?",
    r"(?i)(?:https?://)?issues\.oss-fuzz\.com/issues/([0-9]+)/?(?:[?#].*)?",
))
_PR_FORMS = tuple(re.compile(p, re.ASCII) for p in (
    rf"({_OWNER_REPO})#([0-9]+)",
    rf"(?i)(?:https?://)?(?:www\.)?github\.com/({_OWNER_REPO})/pull/([0-9]+)(?:[/?#].*)?",
))
_COMMIT_URL = re.compile(rf"(?i)(?:https?://)?(?:www\.)?github\.com/{_OWNER_REPO}/commit/([0-9a-f]{{7,40}})"
                         r"(?:[/?#].*)?", re.ASCII)
_BARE_SHA = re.compile(r"[0-9a-fA-F]{7,40}", re.ASCII)
_GHSA = re.compile(r"(?i)(?:https?://github\.com/advisories/)?GHSA(?:-[23456789cfghjmpqrvwx]{4}){3}", re.ASCII)


@dataclass(frozen=True)
class KeyColumns:
    """Which cells of a row hold its identity. Dotted names reach into nested objects (`extra_info.instance_id`);
    `owner` joins `owner/repo` when a dataset keeps them apart. `scheme` forces how the id is read."""

    id: str
    repo: str | None = None
    owner: str | None = None
    pr: str | None = None
    base: str | None = None
    fix: str | None = None
    cve: str | None = None
    scheme: str | None = None

    @classmethod
    def of(cls, values: Mapping[str, Any], where: str) -> KeyColumns:
        known = {f.name for f in fields(cls)}
        chosen = {k: v for k, v in values.items() if k in known and v}
        if not chosen.get("id"):
            raise InputError(f"{where}: names no id column, so its filtered split cannot be verified; declare "
                             "key_columns (id = \"<the id column>\")")
        if chosen.get("scheme") not in (None, *SCHEMES):
            raise InputError(f"{where}: key scheme {chosen['scheme']!r}; use one of {', '.join(SCHEMES)}")
        return cls(**{k: str(v) for k, v in chosen.items()})

    def to_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


_MISSING = object()


def _lookup(row: Mapping[str, Any], name: str | None) -> Any:
    """The value at `name` in a row (the column of that name, else the dotted path into nested objects), or
    _MISSING when the row has no such column (a null cell is present)."""
    if not name:
        return _MISSING
    if name in row:
        return row[name]
    value: Any = row
    for part in name.split("."):
        if isinstance(value, list) and part.isascii() and part.isdigit():
            # `ids.0` indexes a list (as the reader does; a list too short holds a null there): without it the
            # check derived no key from such a column and passed every split unseen
            value = value[int(part)] if int(part) < len(value) else None
            continue
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def cell(row: Mapping[str, Any], name: str | None) -> Any:
    """The value at `name` in a row, None when the row has no such column."""
    value = _lookup(row, name)
    return None if value is _MISSING else value


def has(row: Mapping[str, Any], name: str | None) -> bool:
    """Whether the row has the column at all (a null cell counts as present)."""
    return _lookup(row, name) is not _MISSING
    value: Any = row
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False
        value = value[part]
    return True


def _text(value: Any) -> str | None:
    try:
        text = id_text(value)
    except InputError:
        return None  # a fraction, a list, a boolean: not an id
    return text.strip() if text is not None else None


def _ossfuzz(text: str, forced: bool) -> int | None:
    if forced:
        return trailing_int(text)
    for form in _OSSFUZZ_FORMS:
        match = form.fullmatch(text)
        if match:
            return issue_number(match.group(1))
    return None


def _pr_of_id(text: str) -> tuple[str, int] | None:
    parsed = parse_instance_id(text)
    if parsed is not None:
        return f"{parsed[0]}/{parsed[1]}", parsed[2]
    for form in _PR_FORMS:
        match = form.fullmatch(text)
        if match:
            number = parse_pr(match.group(2))
            return (match.group(1), number) if number is not None else None
    return None


def _pr_keys(repo: Any, pr: Any, base: Any) -> set[tuple[str, str]]:
    keys: set[tuple[str, str]] = set()
    number = parse_pr(pr)
    written = str(repo).strip() if repo is not None and normalize_repo(repo) is not None else None
    sha = normalize_base(base)
    if number is not None and written is not None:
        keys.add(("repo_pr", f"{canonical_repo(written)}#{number}"))
        keys.add(("repo_pr_exact", f"{written}#{number}"))
    if number is not None and sha is not None:
        keys.add(("base_pr", f"{sha}#{number}"))
    return keys


def row_keys(row: Mapping[str, Any], columns: KeyColumns, old_to_new: Mapping[int, int]) -> set[tuple[str, str]]:
    """The (kind, canonical value) keys of one row, by the id parsers of `overlap.ids` alone."""
    text = _text(cell(row, columns.id))
    scheme = columns.scheme
    repo = cell(row, columns.repo)
    if columns.owner and repo is not None:
        owner = cell(row, columns.owner)
        repo = f"{str(owner).strip()}/{str(repo).strip()}" if owner is not None else None
    pr = cell(row, columns.pr)
    base = cell(row, columns.base)
    keys: set[tuple[str, str]] = set()
    if columns.fix:
        fix = _text(cell(row, columns.fix))
        sha = _commit(fix, forced=True) if fix else None
        if sha:
            keys.add(("fix_commit", sha))
    taken = False
    if text and scheme != "columns":
        # Every scheme's specific form first, in the recognisers' order; a forced scheme only adds its looser
        # form for an id none of them takes (under ossfuzz a PR stays a PR, a CVE a CVE), as docs/datasets.md
        # states the rule.
        number = _ossfuzz(text, forced=False)
        if number is not None:
            keys.add(("ossfuzz", str(old_to_new.get(number, number))))
            taken = True
        cve = None if taken else find_cve(text)
        if cve:
            keys.add(("cve", cve))
            taken = True
        if not taken and _GHSA.fullmatch(text):
            cve = find_cve(_text(cell(row, columns.cve)) or "")
            if cve:
                keys.add(("cve", cve))
            taken = True
        found = None if taken else _pr_of_id(text)
        if found is not None:
            # The repo and PR columns win over the id when the row has them (as the adapters read them).
            return keys | _pr_keys(repo if has(row, columns.repo) else found[0],
                                   pr if has(row, columns.pr) else found[1], base)
        sha = None if taken else _commit(text, forced=False)
        if sha:
            keys.add(("fix_commit", sha))
            taken = True
        if not taken and scheme == "ossfuzz":
            number = _ossfuzz(text, forced=True)
            if number is not None:
                keys.add(("ossfuzz", str(old_to_new.get(number, number))))
        if not taken and scheme == "fix_commit":
            sha = _commit(text, forced=True)
            if sha:
                keys.add(("fix_commit", sha))
    return keys | _pr_keys(repo, pr, base)  # a row whose id is no PR still has the PR its columns give


def _commit(text: str, forced: bool) -> str | None:
    match = _COMMIT_URL.fullmatch(text)
    if match:
        return match.group(1).lower()
    return text.lower() if forced and _BARE_SHA.fullmatch(text) else None
