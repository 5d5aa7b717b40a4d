"""The core tables: Items, Keys, Pairs, plus Provenance and the per-dataset bundle.

Every stage of overlap is a plain function of these tables. Schemas are explicit and validated when a
table is built, so a malformed adapter fails loudly at the source instead of producing a wrong join.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InputError

# Items: one row per task. `item_id` and `row` are required; the rest are optional and stay null when a
# source does not have them (never invented). Columns starting with `text_` are named texts and
# columns starting with `in_` are subset-membership flags.
# Where an item came from: `file` (repo-relative file, as the provenance names it), `file_row` (its
# position in that file as read, before any row is skipped) and `row` (the same position across all files
# read, in read order: the stable output order).
ITEM_REQUIRED = {"item_id": "string", "row": "int64"}
ITEM_OPTIONAL = {
    "file": "string",
    "file_row": "Int64",
    "subset": "string",  # the split/file the item came from (e.g. SEC-bench `oss` / `cve`)
    "project": "string",  # OSS-Fuzz project, or canonical GitHub `owner/name`
    "repo": "string",  # repo as written by the dataset
    # the canonical repo of a pull-request task: its repo cell's when that is a GitHub owner/name, else its id's;
    # null for a row of another scheme (an OSS-Fuzz id or a CVE without a PR cell), whatever `project` says
    "pr_repo": "string",
    "base_commit": "string",
    "pr": "Int64",
    "patch": "string",
    "crash_report": "string",
}
ITEM_PREFIXES = {"text_": "string", "in_": "boolean"}

# Rows that repeat an earlier item's id: not items, but located, so they go wherever their item goes.
REPEAT_COLUMNS = {"item_id": "string", "file": "string", "file_row": "int64", "row": "int64"}

KEY_COLUMNS = {"item_id": "string", "kind": "string", "value": "string", "raw": "string"}
# Every kind of key an adapter makes (a drop reason `id:<kind>` must name one of these).
KEY_KINDS = ("ossfuzz", "cve", "fix_commit", "repo_pr", "repo_pr_exact", "base_pr", "base")

# Kinds of a pair (train item, bench item), decided per pair by the key kinds that matched
# (`overlap.evidence.swe_pairs.classify_pairs`), never per dataset: one dataset may hold OSS-Fuzz bugs, CVEs
# and pull requests side by side. A shared task identity (OSS-Fuzz issue, CVE, fix commit) names one bug and
# always counts; `same_fix` is a pair the same-fix join found without a shared id. Pull-request pairs are
# classified by PR number and base commit: the counted ones are overlap, the reported ones are shown beside
# it, never counted.
ID_PAIR_KINDS = ("same_ossfuzz", "same_cve", "same_fix_commit", "same_fix")
SWE_COUNTED_PAIR_KINDS = ("same_pr_same_base", "same_pr_other_base", "same_pr_base_unknown",
                          "same_base_identical_fix_no_pr")
REPORTED_PAIR_KINDS = ("same_base_no_pr_other_fix", "same_base_other_pr")
SWE_PAIR_KINDS = SWE_COUNTED_PAIR_KINDS + REPORTED_PAIR_KINDS
COUNTED_PAIR_KINDS = ID_PAIR_KINDS + SWE_COUNTED_PAIR_KINDS
PAIR_KINDS = COUNTED_PAIR_KINDS + REPORTED_PAIR_KINDS

PAIR_COLUMNS = {
    "bench": "string",  # bench dataset name (a compare can have several)
    "train_id": "string",
    "bench_id": "string",
    "kinds": "string",  # matched key kinds, sorted, joined by ';'
    "match_type": "string",  # exact | translated
    "train_raw": "string",  # raw key values that matched, ';'-joined (for the reader)
    "bench_raw": "string",
}

def _coerce(df: pd.DataFrame, schema: dict[str, str], table: str) -> pd.DataFrame:
    out = df.copy()
    for column, dtype in schema.items():
        if column not in out.columns:
            continue
        try:
            out[column] = out[column].astype(dtype)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{table}: column '{column}' cannot be read as {dtype}: {exc}") from None
    return out


def make_items(df: pd.DataFrame, dataset: str = "items") -> pd.DataFrame:
    """Validate and type an Items table. Raises InputError on a schema violation."""
    missing = [c for c in ITEM_REQUIRED if c not in df.columns]
    if missing:
        raise InputError(f"{dataset}: Items table lacks required column(s) {', '.join(missing)}")
    unknown = [
        c
        for c in df.columns
        if c not in ITEM_REQUIRED and c not in ITEM_OPTIONAL and not c.startswith(tuple(ITEM_PREFIXES))
    ]
    if unknown:
        raise InputError(f"{dataset}: Items table has unexpected column(s) {', '.join(unknown)}")
    schema = dict(ITEM_REQUIRED) | ITEM_OPTIONAL
    schema |= {c: t for c in df.columns for p, t in ITEM_PREFIXES.items() if c.startswith(p)}
    out = _coerce(df, schema, dataset)
    if out["item_id"].isna().any():
        raise InputError(f"{dataset}: {int(out['item_id'].isna().sum())} item(s) have no id")
    dup = out["item_id"][out["item_id"].duplicated()]
    if len(dup):
        raise InputError(f"{dataset}: item id '{dup.iloc[0]}' occurs more than once")
    return out.reset_index(drop=True)


def make_keys(df: pd.DataFrame, dataset: str = "keys") -> pd.DataFrame:
    """Validate and type a Keys table (long: item_id, kind, value, raw)."""
    if df.empty and not len(df.columns):
        df = pd.DataFrame({c: pd.Series([], dtype=t) for c, t in KEY_COLUMNS.items()})
    missing = [c for c in KEY_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"{dataset}: Keys table lacks column(s) {', '.join(missing)}")
    out = _coerce(df[list(KEY_COLUMNS)], KEY_COLUMNS, dataset)
    empty = out["value"].isna() | (out["value"].str.len() == 0)
    if empty.any():
        # An empty value would join every item that lacks the field with every other: never a key.
        raise InputError(f"{dataset}: {int(empty.sum())} key(s) have an empty value")
    first = _first_rows(out)
    return (out if first is None else out[first]).reset_index(drop=True)


def _first_rows(keys: pd.DataFrame):
    """Mask of the first copy of each distinct row of a Keys table (what `drop_duplicates` keeps), or None
    when every row is distinct. Only rows that share an (item_id, kind) can repeat, so the four-column
    comparison runs on those alone: factorising one id column is a few times cheaper than all four."""
    if len(keys) < 2:
        return None
    items, _ = pd.factorize(keys["item_id"])
    kinds, kind_names = pd.factorize(keys["kind"])
    pair = (items.astype("int64") + 1) * (len(kind_names) + 1) + kinds + 1  # -1 (null) becomes 0
    shared = pd.Series(pair).duplicated(keep=False).to_numpy()
    if not shared.any():
        return None
    repeated = keys[shared].duplicated().to_numpy()
    if not repeated.any():
        return None
    first = shared.copy()
    first[shared] = ~repeated
    return first | ~shared


def _isin(values: pd.Series, among: pd.Series):
    """Boolean numpy mask: which `values` are in `among` (string columns; a null is in nothing). Hashed in
    Arrow: pandas' `isin` on Arrow-backed strings goes through Python objects, ten times slower."""
    haystack = pa.array(among.array, pa.large_string())
    found = pc.is_in(pa.array(values.array, pa.large_string()), value_set=haystack, skip_nulls=True)
    return pc.fill_null(found, False).to_numpy(zero_copy_only=False)


def _repeats_frame(frame: pd.DataFrame | None) -> pd.DataFrame:
    if frame is None or not len(frame.columns):
        return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in REPEAT_COLUMNS.items()})
    return frame[list(REPEAT_COLUMNS)]


def empty_pairs() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in PAIR_COLUMNS.items()})


def make_pairs(df: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in PAIR_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"pairs: lacks column(s) {', '.join(missing)}")
    return _coerce(df, PAIR_COLUMNS, "pairs")


@dataclass(frozen=True)
class FileRecord:
    """One input file as read: path inside its repo (or local path), sha256 and rows used."""

    path: str
    sha256: str
    rows: int | None = None


@dataclass
class Provenance:
    """Where a dataset came from, enough to reproduce a result from the report alone."""

    name: str
    origin: str  # hub | hub-cache | local-folder | local-file | github | builtin | in-memory
    repo_id: str | None = None
    revision: str | None = None  # resolved 40-hex revision when known
    files: list[FileRecord] = field(default_factory=list)
    location: str | None = None  # local path for local origins
    adapter: str | None = None  # registered adapter that read it
    subsets: list[str] = field(default_factory=list)  # the subsets selected (`NAME:SUBSET`); empty = all
    # An in-memory input (origin `in-memory`) has no file to hash: what was given instead (type, split, columns,
    # rows, and the `datasets` fingerprint where there is one). None, and left out of `to_dict`, for files.
    in_memory: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["files"] = [asdict(f) for f in self.files]
        if data["in_memory"] is None:
            del data["in_memory"]
        return data


PROBLEM_EXAMPLE_CHARS = 300


@dataclass
class Problem:
    """Something an adapter skipped or could not read: counted and reported, never silently dropped."""

    what: str  # e.g. "malformed_id"
    count: int
    example: str = ""  # what it is shown by, cut at PROBLEM_EXAMPLE_CHARS (a hostile id can be megabytes)
    detail: str = ""

    def __post_init__(self) -> None:
        if len(self.example) > PROBLEM_EXAMPLE_CHARS:
            self.example = self.example[:PROBLEM_EXAMPLE_CHARS] + "…"


@dataclass
class SideTotals:
    """What the outputs need of a side whose rows were streamed and never held: counts of the whole side."""

    items: int  # items (rows with an id, the first row of each id)
    keys_by_kind: dict[str, int]  # keys of those items by kind (as `Dataset.keys` would count them)
    projects: dict[str, int]  # items per project (non-null)
    pr_repos: dict[str, int]  # items per canonical repo of a PR task (`pr_repo`), for the per-repo SWE table
    same_pr: dict[str, int]  # {"groups", "items"}: one PR (canonical repo + PR) listed by several items
    # KEY_COLUMNS of every `ossfuzz` key (the baselines, the id description and related bugs read them): a frame,
    # or an object whose `frames()` gives them a frame at a time and `frame()` at once (`keyjoin.ossfuzz_keys`:
    # a side of distinct OSS-Fuzz ids has one per row)
    ossfuzz_keys: Any
    grouped_items: pd.DataFrame  # item_id, row, project of the items in a duplicate group (the report shows them)
    # The ids of the side's items that are in none of `matched`, in source order (read again from the source:
    # a list of every id is what streaming avoids holding).
    clean_ids: Any = field(default=None, repr=False)
    # rows (across files) that repeat an earlier id: `len()` and `holds(rows)` (`overlap.keyjoin.row_bits.RowBits`)
    repeat_rows: Any = field(default=None, repr=False)
    # `locate(ids, repeats)`: item_id, file, file_row, row, first of every row whose id is one of `ids`, and of
    # every repeat row when `repeats` (the source read again, as for `clean_ids`), in source order
    locate: Any = field(default=None, repr=False)


@dataclass
class Dataset:
    """A loaded dataset: its Items and Keys, where it came from, and what was skipped."""

    name: str
    items: pd.DataFrame
    keys: pd.DataFrame
    provenance: Provenance
    problems: list[Problem] = field(default_factory=list)
    # The FileSource it was read from, kept so per-item files (e.g. CyberGym's patch.diff) and original
    # rows can be fetched later from the same place and revision.
    source: Any = field(default=None, repr=False, compare=False)
    repeats: pd.DataFrame | None = None  # REPEAT_COLUMNS: rows whose id an earlier row already took
    # A side whose rows were streamed against the benchmarks (`overlap.keyjoin`): `items` and `keys` hold
    # only the items that can be in a pair, and `totals` the counts of the whole side.
    totals: SideTotals | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.repeats = _coerce(_repeats_frame(self.repeats), REPEAT_COLUMNS, self.name)
        self.items = make_items(self.items, self.name)
        self.keys = make_keys(self.keys, self.name)
        known = _isin(self.keys["item_id"], self.items["item_id"])
        if not known.all():
            orphans = self.keys.loc[~known, "item_id"]
            raise InputError(f"{self.name}: keys name unknown item id '{sorted(set(orphans), key=str)[0]}'")

    @property
    def item_count(self) -> int:
        """Items of the whole side (a streamed side keeps only its paired items in `items`)."""
        return self.totals.items if self.totals is not None else int(len(self.items))

    def keys_by_kind(self) -> dict[str, int]:
        """{key kind: keys of the whole side}, sorted by kind."""
        if self.totals is not None:
            return dict(sorted(self.totals.keys_by_kind.items()))
        return {str(k): int(v) for k, v in sorted(self.keys["kind"].value_counts().items())}

    def has_kind(self, *kinds: str) -> bool:
        """Does any item of the whole side have a key of one of `kinds`?"""
        if self.totals is not None:
            return any(self.totals.keys_by_kind.get(k, 0) for k in kinds)
        return bool(self.keys["kind"].isin(kinds).any())

    def keys_of_kind(self, kind: str) -> pd.DataFrame:
        """The keys of one kind of the whole side, in one frame. A streamed side keeps its OSS-Fuzz keys (what
        the chance baselines and related bugs read) and no other kind in full; `ossfuzz_key_frames` reads
        them without holding them all."""
        if self.totals is None:
            return self.keys[self.keys["kind"] == kind]
        if kind != "ossfuzz":
            raise InputError(f"{self.name}: the {kind} keys of a streamed side are not kept")
        kept = self.totals.ossfuzz_keys
        return kept if isinstance(kept, pd.DataFrame) else kept.frame()

    def ossfuzz_key_frames(self):
        """The OSS-Fuzz keys of the whole side (KEY_COLUMNS) as frames that together are `keys_of_kind`'s, in
        its order: one frame of a held side, a stored batch at a time of a streamed one."""
        kept = self.totals.ossfuzz_keys if self.totals is not None else None
        if kept is None or isinstance(kept, pd.DataFrame):
            yield self.keys_of_kind("ossfuzz")
        else:
            yield from kept.frames()

    @property
    def text_columns(self) -> list[str]:
        return [c for c in self.items.columns if c.startswith("text_")]

    def subsets(self) -> list[str]:
        if "subset" not in self.items.columns:
            return []
        return sorted(self.items["subset"].dropna().unique().tolist())


# Size cap of one text or patch field (UTF-8 bytes). A longer field is truncated for matching (and the
# truncation counted by whoever truncates): ~8 MB of text is far more than any task statement, patch or
# crash report, and it keeps tokenising and indexing one field within a few hundred MB.
FIELD_CAP_BYTES = 8 << 20


def cap_field(value: str | None, cap: int = FIELD_CAP_BYTES) -> tuple[str | None, bool]:
    """``value`` cut to at most ``cap`` UTF-8 bytes on a character boundary; and whether it was cut.

    None and non-str values pass through unchanged. Lone surrogates (from JSON escapes) count as the 3 bytes
    they take in surrogate-pass UTF-8. Never copies more than the first ``cap`` characters of a long text.
    """
    if not isinstance(value, str) or len(value) <= cap // 4:
        return value, False  # at most 4 bytes per character: it fits
    head = value[: cap + 1].encode("utf-8", "surrogatepass")
    if len(head) <= cap:
        return value, False  # the whole text was encoded (it is at most cap characters) and fits
    return head[: utf8_cut(head, cap)].decode("utf-8", "surrogatepass"), True


def utf8_cut(data: bytes | memoryview, cap: int) -> int:
    """The largest length <= ``cap`` at which ``data`` (UTF-8) can be cut without splitting a character."""
    cut = min(cap, len(data))
    while 0 < cut < len(data) and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut
