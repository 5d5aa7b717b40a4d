"""GitHub PR ids and keys over Arrow columns: `overlap.ids.github` column-wise.

The `owner__name-N` id form read in one pass (`_owner_form`), the repo, PR and base-commit columns as the
scalar parsers read a cell (`repo_as_written`, `canonical_repos`, `pr_numbers`, `base_commits`), and each row's
PR keys (`pr_key_parts`: `repo_pr`, `repo_pr_exact`, `base_pr`, `base`, as `github.pr_keys`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from . import compiled
from .github import MAX_PR, canonical_repo, normalize_repo, parse_instance_id, parse_pr
from .id_arrays import _long_digits, _numbers, _scalar_fill, _str, extract, id_strings

_OWNER_FORM = r"^[A-Za-z0-9][A-Za-z0-9-]*__[A-Za-z0-9._-]+-[0-9]+$"  # recognisers._PR_FORMS[0] with a repo name


def _owner_form(values):
    """(ok, repo, PR number, key `repo#N`) of `owner__name-N` values (`recognisers._PR_FORMS[0]` with the name a repo
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
