"""GitHub pull-request identities: canonical repo names, `owner__repo-N` task ids, PR numbers, base commits.

SWE tasks are pull requests at a base commit. Datasets spell the same PR differently: repo names change
case (`BurntSushi/ripgrep` vs `burntsushi/ripgrep`) and owners (`kbknapp/clap-rs` → `clap-rs/clap`), PR
numbers come as ints, strings or floats (`19284.0` from a CSV), base commits in either case. The canonical
repo is the lowercased `owner/name` after the known renames in `mappings/repo_renames.csv`.

Key kinds built here (values are strings):

- `repo_pr`: canonical repo + PR, e.g. `clap-rs/clap#941` (raw: the repo as written, `kbknapp/clap-rs#941`)
- `repo_pr_exact`: the repo as written + PR (value and raw alike)
- `base_pr`: base commit + PR, e.g. `<sha>#941`: needs no repo name at all
- `base`: base commit alone (for sets without PR numbers, e.g. SWE-bench Pro)

An empty or malformed base commit never becomes a key: it would join every item that lacks one.
"""

from __future__ import annotations

import csv
import io
import math
import re
from functools import lru_cache
from pathlib import Path

from ..errors import InputError
from ..resources import renames_file
from .values import ascii_int

RENAMES_FILE = renames_file()  # mappings/repo_renames.csv, shipped as overlap._mappings

# GitHub owners: letters, digits, single hyphens; names: letters, digits, `-`, `_`, `.`.
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+\Z")
# `owner__repo-N`: the owner has no underscore, so the first `__` splits it off; the PR number is the
# integer after the last `-` (names can contain `-`).
_INSTANCE = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*)__(.+)-([0-9]+)", re.ASCII | re.DOTALL)
_SHA = re.compile(r"^[0-9a-f]{7,64}\Z")
# PR number text: ASCII digits (`\d` also takes `１２`), no sign, no exponent; `.0` only because CSV
# readers write a float column's `19284` as `19284.0` (SWE-PolyBench).
_PR_TEXT = re.compile(r"([0-9]+)(?:\.0+)?", re.ASCII)
MAX_PR = 2**63 - 1  # PR numbers end up in int64 columns


# --- renames ------------------------------------------------------------------------------------------


def parse_renames(text: str, source: str = "repo_renames.csv") -> dict[str, str]:
    """`old,new,source` CSV → {old lowercased: final new lowercased}, renames chained, cycles rejected."""
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or not {"old", "new"} <= {f.strip() for f in reader.fieldnames}:
        raise InputError(f"{source}: expected a header 'old,new,source'")
    table: dict[str, str] = {}
    for line_no, row in enumerate(reader, start=2):
        old = normalize_repo(row.get("old"))
        new = normalize_repo(row.get("new"))
        if old is None or new is None:
            raise InputError(f"{source}: line {line_no}: 'old' and 'new' must be GitHub owner/name")
        if old in table and table[old] != new:
            raise InputError(f"{source}: line {line_no}: {old} is renamed to both {table[old]} and {new}")
        if old != new:
            table[old] = new
    resolved: dict[str, str] = {}
    for old in table:
        seen, current = {old}, table[old]
        while current in table:
            current = table[current]
            if current in seen:
                raise InputError(f"{source}: the renames of {old} form a cycle")
            seen.add(current)
        resolved[old] = current
    return resolved


@lru_cache(maxsize=8)
def _load_renames(path: str) -> tuple[tuple[str, str], ...]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the repo renames ({exc.strerror})") from None
    return tuple(sorted(parse_renames(text, path).items()))


def known_renames(path: Path | str | None = None) -> dict[str, str]:
    """The shipped rename table (or the one at `path`): {old: new}, both lowercased."""
    return dict(_load_renames(str(path or RENAMES_FILE)))


# --- repos, PR numbers, base commits -------------------------------------------------------------------


def normalize_repo(repo: object) -> str | None:
    """`owner/name` lowercased, from `Owner/Name`, a GitHub URL or `owner/name.git`; None if not a repo."""
    if repo is None or (isinstance(repo, float) and math.isnan(repo)):
        return None
    text = str(repo).strip()
    for prefix in ("https://", "http://", "git@"):
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
    if text.lower().startswith("github.com"):
        text = text[len("github.com"):].lstrip(":/")
    text = text.rstrip("/")
    if text.lower().endswith(".git"):
        text = text[:-4]
    if not _REPO.match(text):
        return None
    return text.lower()


def canonical_repo(repo: object, renames: dict[str, str] | None = None) -> str | None:
    """Lowercased `owner/name` after known renames (`kbknapp/clap-rs` → `clap-rs/clap`), or None."""
    name = normalize_repo(repo)
    if name is None:
        return None
    table = known_renames() if renames is None else renames
    return table.get(name, name)


def repo_as_written(repo: object) -> str | None:
    """The repo as the dataset wrote it (trimmed), or None when it is not an `owner/name`."""
    if repo is None or normalize_repo(repo) is None:
        return None
    return str(repo).strip()


def pr_number(digits: str) -> int | None:
    """The PR number written as exactly `digits` (ASCII, > 0, fits int64), or None: the one place PR
    number text becomes an int."""
    number = ascii_int(digits, len(str(MAX_PR)))
    return number if number is not None and 0 < number <= MAX_PR else None


def parse_pr(value: object) -> int | None:
    """A PR number from an int, a numeric string or a whole float (`19284.0`, `"19284.0"`); None otherwise.

    Booleans, negatives, signs, fractions, exponents, NaN, inf, numbers past int64 and text like `abc` or
    `#12` are not PR numbers.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= MAX_PR else None
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            return None
        return parse_pr(int(value))  # a whole float past int64 (1e19) is then out of range
    if isinstance(value, str):
        match = _PR_TEXT.fullmatch(value.strip())
        return pr_number(match.group(1)) if match else None
    if type(value).__module__ == "numpy" and hasattr(value, "item"):  # numpy.int64, numpy.bool_…
        return parse_pr(value.item())
    return None


def normalize_base(value: object) -> str | None:
    """A base commit lowercased; None when empty, missing or not a hex commit id."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip().lower()
    return text if _SHA.match(text) else None


def parse_instance_id(instance_id: object) -> tuple[str, str, int] | None:
    """`owner__repo-N` → (owner, repo, N) as written; None when the id does not have that form."""
    if instance_id is None:
        return None
    match = _INSTANCE.fullmatch(str(instance_id).strip())
    if not match:
        return None
    owner, name, number = match.group(1), match.group(2), pr_number(match.group(3))
    if number is None or not _REPO.match(f"{owner}/{name}"):
        return None
    return owner, name, number


def instance_id_for(repo: str, pr: int) -> str:
    """The conventional task id of a PR: `owner/name`, 941 → `owner__name-941`."""
    owner, _, name = repo.partition("/")
    return f"{owner}__{name}-{pr}"


# --- keys ---------------------------------------------------------------------------------------------


def pr_keys(
    repo: object, pr: object, base: object, renames: dict[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """The (kind, value, raw) keys of one task. Parts that are missing or malformed give no key."""
    keys: list[tuple[str, str, str]] = []
    number = parse_pr(pr)
    written = repo_as_written(repo)
    sha = normalize_base(base)
    if number is not None and written is not None:
        canonical = canonical_repo(written, renames)
        keys.append(("repo_pr", f"{canonical}#{number}", f"{written}#{number}"))
        keys.append(("repo_pr_exact", f"{written}#{number}", f"{written}#{number}"))
    if sha is not None:
        raw_sha = str(base).strip()
        if number is not None:
            keys.append(("base_pr", f"{sha}#{number}", f"{raw_sha}#{number}"))
        keys.append(("base", sha, raw_sha))
    return keys


def split_key(value: str) -> tuple[str, int | None]:
    """`clap-rs/clap#941` → (`clap-rs/clap`, 941); `<sha>` → (`<sha>`, None)."""
    head, sep, tail = str(value).rpartition("#")
    number = pr_number(tail) if sep else None
    return (head, number) if number is not None else (str(value), None)
