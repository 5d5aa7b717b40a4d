"""An oracle for training mixes: which benchmark items a compare must count, which training rows a filter must
drop, and what `overlap matrix` must count between benchmarks. Written from the documented rules alone
(README, docs/, the docstrings of `overlap.ids.recognisers`, `overlap.ids.github`, `overlap.ids.cve`,
`overlap.evidence.swe_pairs`, `overlap.outputs.ship.filter_plan`); it imports nothing from `overlap`, and reads the
shipped identity data (the demo ARVO mapping, the repo renames, the demo CyberGym task list) with csv/json.

The rules it applies:

- A dataset read by its columns makes one item per distinct id text (the first row holding it); rows that
  repeat an id are copies of that item (they go wherever it goes) and add no keys; rows without an id (null,
  blank) make no item and are kept by a filter.
- An id text is the cell as written for text, the digits of an integer, the integer of a whole float.
- Without a forced scheme the first recogniser that takes a value wins: OSS-Fuzz (`arvo:N`, `arvo_N`,
  `oss-fuzz:N`, `<project>.ossfuzz-N`, the Monorail and issue-tracker URLs), CVE anywhere in the value, GitHub
  PR (`owner__repo-N`, `owner/repo#N`, `github.com/owner/repo/pull/N`), fix commit
  (`github.com/owner/repo/commit/<sha>`). Anything else is unrecognised: an item without keys.
- OSS-Fuzz ids are canonical after the old→new mapping; CVE ids upper-case; repos lower-case after the
  renames; base commits lower-case hex; fix commits the sha lower-cased.
- PR keys: `repo_pr` (canonical repo + PR), `base_pr` (base commit + PR), `base` (base commit alone); the repo
  and PR come from their columns where a cell has one, else from the id; rows whose id is not a PR still
  get the PR keys their columns give.
- A forced scheme (`ossfuzz`) reads only the values no specific form takes: there the issue is the trailing
  integer after a word and one separator (or the bare number); a PR URL stays a PR, a CVE a CVE.
- A pair (train item, bench item) counts when it shares an OSS-Fuzz, CVE or fix-commit key, or the same PR at
  the same base (`base_pr`), or the same canonical repo + PR (`repo_pr`). A shared base commit alone is
  reported, not counted (these mixes carry no patches, so no fix is ever identical). Nothing is decided per
  dataset: the other keys of either dataset do not matter.
- Filter with `id` and `dup`: every row of a train item in a counted pair with any benchmark goes; of each
  group of train items sharing an OSS-Fuzz, CVE, fix-commit or canonical repo+PR key (transitively), the first in source
  order that nothing else drops stays and the others go; a row repeating an id goes unless its item goes
  anyway (then it goes with it).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "data" / "demo"
ARVO_MAPPING_CSV = DEMO / "arvo" / "arvo" / "oss_fuzz_mappings.csv"
RENAMES_CSV = REPO_ROOT / "mappings" / "repo_renames.csv"
CYBERGYM_TASKS = DEMO / "cybergym" / "tasks.json"

MAX_ISSUE_DIGITS = 12  # an OSS-Fuzz issue number has 1 to 12 digits and is not 0
MAX_PR = 2**63 - 1
EXACT_FLOAT = 2**53

# Key kinds whose match alone makes a pair count, and the ones that name one task inside a dataset.
COUNTING_KINDS = frozenset({"ossfuzz", "cve", "fix_commit", "repo_pr", "base_pr"})
TASK_KINDS = frozenset({"ossfuzz", "cve", "fix_commit", "repo_pr"})


# --- shipped identity data ------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def arvo_mapping() -> dict[int, int]:
    """Old → new OSS-Fuzz ids of the demo ARVO mapping (no header; rows whose cells are not digits skipped)."""
    out = {}
    with ARVO_MAPPING_CSV.open(newline="", encoding="utf-8-sig") as handle:
        for row in csv.reader(handle):
            if len(row) >= 2 and row[0].strip().isdigit() and row[1].strip().isdigit():
                out[int(row[0])] = int(row[1])
    return out


@lru_cache(maxsize=1)
def renames() -> dict[str, str]:
    """{old lower-cased: final new lower-cased}, renames chained."""
    with RENAMES_CSV.open(newline="", encoding="utf-8") as handle:
        table = {r["old"].strip().lower(): r["new"].strip().lower() for r in csv.DictReader(handle)}
    resolved = {}
    for old, new in table.items():
        seen = {old}
        while new in table and new not in seen:
            seen.add(new)
            new = table[new]
        resolved[old] = new
    return resolved


@lru_cache(maxsize=1)
def cybergym_task_ids() -> tuple[str, ...]:
    return tuple(t["task_id"] for t in json.loads(CYBERGYM_TASKS.read_text(encoding="utf-8")))


# --- one value ------------------------------------------------------------------------------------------


def id_text(value) -> str | None:
    """The id text of a cell as read: text as written (None when blank), integers as digits, whole floats as
    their integer; anything else is no id."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) <= EXACT_FLOAT:
            return str(int(value))
        return None
    return None


def issue(digits: str) -> int | None:
    if not digits.isascii() or not digits.isdigit() or not 0 < len(digits) <= MAX_ISSUE_DIGITS:
        return None
    number = int(digits)
    return number or None


def canonical_issue(number: int) -> str:
    return str(arvo_mapping().get(number, number))


_OWNER = r"[A-Za-z0-9][A-Za-z0-9-]*"
_NAME = r"[A-Za-z0-9._-]+"
_DIGITS = r"([0-9]+)"
OSSFUZZ_FORMS = (
    re.compile(rf"arvo:{_DIGITS}"),
    re.compile(rf"arvo_{_DIGITS}"),
    re.compile(rf"oss-fuzz:{_DIGITS}"),
    re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.+-]*\.ossfuzz-{_DIGITS}"),
    re.compile(rf"(?:https?://)?bugs\.chromium\.org/p/oss-fuzz/issues/detail\?id={_DIGITS}"),
    re.compile(rf"(?:https?://)?issues\.oss-fuzz\.com/issues/{_DIGITS}"),
)
# The trailing integer of a task id: after a word that starts with a letter and one separator, or bare.
TRAILING = re.compile(r"(?:(?:.*[^A-Za-z0-9])?[A-Za-z][A-Za-z0-9]*[-_:#/= ])?([0-9]+)", re.ASCII | re.DOTALL)
CVE = re.compile(r"(?<![A-Za-z0-9])[Cc][Vv][Ee]-([0-9]{4})-([0-9]{4,12})(?![A-Za-z0-9])")
PR_FORMS = (
    re.compile(rf"(?P<owner>{_OWNER})__(?P<name>{_NAME})-(?P<pr>[0-9]+)"),
    re.compile(rf"(?P<owner>{_OWNER})/(?P<name>{_NAME})#(?P<pr>[0-9]+)"),
    re.compile(rf"(?:https?://)?(?:www\.)?github\.com/(?P<owner>{_OWNER})/(?P<name>{_NAME})/pull/(?P<pr>[0-9]+)"
               r"(?:[/?#].*)?", re.IGNORECASE),
)
COMMIT_URL = re.compile(rf"(?:https?://)?(?:www\.)?github\.com/{_OWNER}/{_NAME}/commit/(?P<sha>[0-9a-fA-F]{{7,40}})"
                        r"(?:[/?#].*)?", re.IGNORECASE)
GITHUB_URL = re.compile(r"(?:https?://)?(?:www\.)?github\.com/", re.IGNORECASE)
SHA = re.compile(r"[0-9a-f]{7,64}")
REPO = re.compile(rf"{_OWNER}/{_NAME}")
PR_TEXT = re.compile(r"([0-9]+)(?:\.0+)?")


def ossfuzz_key(text: str) -> str | None:
    for form in OSSFUZZ_FORMS:
        match = form.fullmatch(text)
        if match:
            number = issue(match.group(1))
            return canonical_issue(number) if number else None
    return None


def forced_ossfuzz_key(text: str) -> str | None:
    if "github.com" in text.lower():  # a GitHub URL (a PR, an issue, an API link) is not an OSS-Fuzz issue
        return None
    match = TRAILING.fullmatch(text)
    number = issue(match.group(1)) if match else None
    return canonical_issue(number) if number else None


def cve_key(text: str) -> str | None:
    for match in CVE.finditer(text):
        if int(match.group(1)) >= 1999:
            return f"CVE-{match.group(1)}-{match.group(2)}"
    return None


def pr_number(value) -> int | None:
    """A PR number from an int, a whole float or text `123` / `123.0`."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= MAX_PR else None
    if isinstance(value, float):
        return pr_number(int(value)) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        match = PR_TEXT.fullmatch(value.strip())
        if match and len(match.group(1)) <= 19:
            return pr_number(int(match.group(1)))
    return None


def normalize_repo(value) -> str | None:
    """`owner/name` lower-cased from `Owner/Name`, a GitHub URL or `owner/name.git`; None if not a repo."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    for prefix in ("https://", "http://", "git@"):
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
    if text.lower().startswith("github.com"):
        text = text[len("github.com"):].lstrip(":/")
    text = text.rstrip("/")
    if text.lower().endswith(".git"):
        text = text[:-4]
    return text.lower() if REPO.fullmatch(text) else None


def canonical_repo(value) -> str | None:
    name = normalize_repo(value)
    return None if name is None else renames().get(name, name)


def base_commit(value) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    return text if SHA.fullmatch(text) else None


def pr_keys(repo, number: int | None, base) -> set[tuple[str, str]]:
    keys = set()
    canonical = canonical_repo(repo)
    sha = base_commit(base)
    if number is not None and canonical is not None:
        keys.add(("repo_pr", f"{canonical}#{number}"))
    if sha is not None:
        if number is not None:
            keys.add(("base_pr", f"{sha}#{number}"))
        keys.add(("base", sha))
    return keys


def parse_pr_id(text: str) -> tuple[str, int] | None:
    """(repo as written, PR) of a PR id form, or None."""
    for form in PR_FORMS:
        match = form.fullmatch(text)
        if match:
            number = pr_number(int(match.group("pr"))) if len(match.group("pr")) <= 19 else None
            if number is None:
                return None
            return f"{match.group('owner')}/{match.group('name')}", number
    return None


# --- datasets -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """Which column gives what, as the options `--id-column`, `--repo-column`, … name them."""

    id: str = "task"
    repo: str | None = None
    pr: str | None = None
    base: str | None = None
    scheme: str | None = None  # None: recognise each value; "ossfuzz": force that scheme

    def options(self) -> dict[str, str]:
        """The library's `columns=` for these."""
        out = {"id": self.id}
        for name in ("repo", "pr", "base", "scheme"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out

    def cli(self) -> list[str]:
        args = ["--id-column", self.id]
        for name, flag in (("repo", "--repo-column"), ("pr", "--pr-column"), ("base", "--base-column"),
                           ("scheme", "--id-scheme")):
            if getattr(self, name):
                args += [flag, getattr(self, name)]
        return args


def item_id(row: Mapping, columns: Columns) -> str | None:
    """A row's item id: its id cell; with repo and PR columns, a row without one is named by them, the repo as
    written with its first `/` as `__`, then `-` and the PR number (`owner__name-N`)."""
    text = id_text(row.get(columns.id))
    if text is not None or not (columns.repo and columns.pr):
        return text
    repo, number = row.get(columns.repo), pr_number(row.get(columns.pr))
    if not isinstance(repo, str) or normalize_repo(repo) is None or number is None:
        return None
    return repo.strip().replace("/", "__", 1) + f"-{number}"


def row_keys(row: Mapping, columns: Columns) -> frozenset[tuple[str, str]]:
    """The canonical (kind, value) keys of one row."""
    text = id_text(row.get(columns.id))
    if text is None:  # a row named by its repo and PR cells has their keys; a row with no name has none
        if item_id(row, columns) is None:
            return frozenset()
        return frozenset(pr_keys(row.get(columns.repo), pr_number(row.get(columns.pr)),
                                 row.get(columns.base) if columns.base else None))
    text = text.strip()
    repo = row.get(columns.repo) if columns.repo else None
    number = pr_number(row.get(columns.pr)) if columns.pr else None
    base = row.get(columns.base) if columns.base else None
    column_keys = pr_keys(repo, number, base)
    assert columns.scheme in (None, "ossfuzz"), columns.scheme
    key = ossfuzz_key(text)
    if key:
        return frozenset(column_keys | {("ossfuzz", key)})
    key = cve_key(text)
    if key:
        return frozenset(column_keys | {("cve", key)})
    parsed = parse_pr_id(text)
    if parsed:
        written, id_number = parsed
        repo = repo if canonical_repo(repo) is not None else written
        number = number if number is not None else id_number
        return frozenset(pr_keys(repo, number, base))
    match = COMMIT_URL.fullmatch(text)
    if match:
        return frozenset(column_keys | {("fix_commit", match.group("sha").lower())})
    if columns.scheme == "ossfuzz":  # the looser form, for what no specific form took
        key = forced_ossfuzz_key(text)
        return frozenset(column_keys | ({("ossfuzz", key)} if key else set()))
    return frozenset(column_keys)


@dataclass
class Item:
    item_id: str
    rows: list[int]  # positions in the source, the item's own row first, then the rows repeating its id
    keys: frozenset[tuple[str, str]]


@dataclass
class Data:
    """One dataset as the oracle sees it: its rows (as read) and how they are read."""

    name: str
    rows: Sequence[Mapping]
    columns: Columns = field(default_factory=Columns)

    def items(self) -> dict[str, Item]:
        out: dict[str, Item] = {}
        for position, row in enumerate(self.rows):
            name = item_id(row, self.columns)
            if name is None:
                continue
            if name in out:
                out[name].rows.append(position)
            else:
                out[name] = Item(name, [position], self.keys_of(row))
        return out

    def keys_of(self, row: Mapping) -> frozenset:
        """The keys of a row that is its item's first."""
        return row_keys(row, self.columns)

    def rows_without_item(self) -> list[int]:
        return [p for p, row in enumerate(self.rows) if item_id(row, self.columns) is None]


def cybergym() -> Data:
    """The demo CyberGym as the oracle reads it: its task ids (`arvo:<old>`, `oss-fuzz:<new>`)."""
    return Data("cybergym", [{"task_id": t} for t in cybergym_task_ids()], Columns(id="task_id"))


# --- pairs ----------------------------------------------------------------------------------------------


def shared_kinds(a: Iterable[tuple[str, str]], b: Iterable[tuple[str, str]]) -> set[str]:
    return {kind for kind, _ in set(a) & set(b)}


def counts(kinds: set[str]) -> bool:
    """Does a pair that matched on these key kinds count as overlap (decided by the pair alone)?"""
    return bool(kinds & COUNTING_KINDS)


def counted_pairs(a: Data, b: Data) -> set[tuple[str, str]]:
    """(a item, b item) of every counted pair."""
    b_items = b.items()
    out = set()
    for a_item in a.items().values():
        for b_item in b_items.values():
            if counts(shared_kinds(a_item.keys, b_item.keys)):
                out.add((a_item.item_id, b_item.item_id))
    return out


def matched_bench(train: Data, bench: Data) -> set[str]:
    """Bench items in a counted pair with the training set."""
    return {b for _, b in counted_pairs(train, bench)}


def contaminated_train(train: Data, benches: Sequence[Data]) -> set[str]:
    return {t for bench in benches for t, _ in counted_pairs(train, bench)}


def matrix_cells(benches: Sequence[Data]) -> dict[tuple[str, str], int]:
    """{(bench, other): items of bench in a counted pair with other}."""
    out = {}
    for a in benches:
        for b in benches:
            if a is not b:
                out[(a.name, b.name)] = len({x for x, _ in counted_pairs(a, b)})
    return out


# --- filter ---------------------------------------------------------------------------------------------


@dataclass
class FilterPlan:
    kept: list[int]  # source positions, in order
    removed: dict[int, str]  # position → why: "id" (its item is in a counted pair) or "dup"

    def describe(self, data: Data) -> str:
        lines = []
        for position, row in enumerate(data.rows):
            fate = self.removed.get(position, "kept")
            lines.append(f"  [{position}] {fate:4} {dict(row)!r} keys={sorted(row_keys(row, data.columns))}")
        return "\n".join(lines)


def duplicate_groups(items: Mapping[str, Item]) -> list[list[str]]:
    """Groups (size ≥ 2) of items sharing a task key, transitively, each in source order."""
    parent = {i: i for i in items}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    by_key: dict[tuple[str, str], str] = {}
    for item_id, item in items.items():
        for key in sorted(k for k in item.keys if k[0] in TASK_KINDS):
            if key in by_key:
                parent[find(item_id)] = find(by_key[key])
            else:
                by_key[key] = item_id
    groups: dict[str, list[str]] = {}
    for item_id in items:
        groups.setdefault(find(item_id), []).append(item_id)
    return [sorted(g, key=lambda i: items[i].rows[0]) for g in groups.values() if len(g) > 1]


def filter_plan(train: Data, benches: Sequence[Data], reasons: tuple[str, ...] = ("id", "dup")) -> FilterPlan:
    assert set(reasons) <= {"id", "dup"}, reasons
    items = train.items()
    dropped: dict[str, str] = {}
    if "id" in reasons:
        dropped = dict.fromkeys(contaminated_train(train, benches), "id")
    removed: dict[int, str] = {}
    if "dup" in reasons:
        for group in duplicate_groups(items):
            free = [i for i in group if i not in dropped]
            keep = free[0] if free else group[0]
            for item_id in group:
                if item_id != keep and item_id not in dropped:
                    dropped[item_id] = "dup"
    for item_id, item in items.items():
        if item_id in dropped:
            removed.update(dict.fromkeys(item.rows, dropped[item_id]))
        elif "dup" in reasons:
            removed.update(dict.fromkeys(item.rows[1:], "dup"))
    kept = [p for p in range(len(train.rows)) if p not in removed]
    return FilterPlan(kept, removed)


def whole_side_counts(train: Data) -> dict:
    """What a compare's summary counts of a whole training side, in a few lines of plain Python: its items, the
    rows that repeat an earlier id, the rows without one, and the task keys two items or more hold."""
    items = train.items()
    holders: dict[tuple[str, str], set[str]] = {}
    for item in items.values():
        for key in item.keys:
            if key[0] in TASK_KINDS:
                holders.setdefault(key, set()).add(item.item_id)
    return {"items": len(items), "repeats": sum(len(i.rows) - 1 for i in items.values()),
            "missing": len(train.rows_without_item()),
            "groups": {k: v for k, v in holders.items() if len(v) > 1}}
