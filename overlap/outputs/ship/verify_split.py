"""An independent check of a written split: read it back with the plainest reader, derive keys with the id
parsers alone, intersect with the benchmark's keys as Python sets.

Over 400 lines on purpose: the verifier may share no code with the filter, so its plain readers live here.

The filter decides what to drop through adapters, the vectorised recognisers, the join and the pair
classification. Re-running those on the kept rows would agree with their mistakes, so this module shares none
of them: it imports only `overlap.ids` scalar parsers, `overlap.errors`, pyarrow's file readers and the
standard library (an import-linter contract in pyproject.toml keeps it so). What it must know of a dataset is
which cells hold the id, repo, PR and base commit (`KeyColumns`): the caller takes them from the dataset's
declaration or the user's column options, never from a table the filter computed.

Kinds checked: the canonical keys a drop reason promises to remove (`ossfuzz`, `cve`, `repo_pr`,
`repo_pr_exact`, `base_pr`, `fix_commit`) and, with `dup`, that no two kept rows share an `ossfuzz`, `cve` or
`repo_pr` key or an id. A shared base commit alone is reported, not counted, and `fix`, `ngram:<n>` and
`spec:*` are judged on patches and texts: those are listed as not checked, with why.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from ...errors import InputError
from ...ids.cve import find_cve
from ...ids.github import canonical_repo, normalize_base, normalize_repo, parse_instance_id, parse_pr
from ...ids.ossfuzz import issue_number, trailing_int
from ...ids.values import id_text

METHOD = "independent read-back"
ID_KINDS = ("ossfuzz", "cve", "repo_pr", "base_pr", "fix_commit")  # what `--drop id` promises to remove
CHECKABLE = (*ID_KINDS, "repo_pr_exact")
DUP_KINDS = ("ossfuzz", "cve", "repo_pr")  # the kinds a `dup` group is made of
SCHEMES = ("ossfuzz", "cve", "ghsa", "github_pr", "fix_commit", "columns")  # "columns": the id gives no key
NOT_CHECKED = {
    "base": "a shared base commit alone is reported, not counted: whether such a pair counts depends on its fix",
    "fix": "a same-fix pair is judged on patches, not on keys",
    "ngram": "an n-gram flag is judged on texts, not on keys",
    "spec": "a crash-spec flag is judged on texts, not on keys",
}
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}
# Larger than any CSV row the readers take (16 MiB blocks): a row the filter wrote is a row this reads back.
CSV_BLOCK_BYTES = 64 << 20

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


@dataclass
class BenchRows:
    """A benchmark as its raw identity cells, one mapping per item, read by `columns`."""

    name: str
    columns: KeyColumns
    rows: Iterable[Mapping[str, Any]]


@dataclass
class SplitFile:
    """One written shard: `path` on disk, `shown` as the split names it, `label` the input file it was cut
    from and `dropped` the input positions that are not in it (to name a row by its input position)."""

    path: Path | None
    shown: str
    label: str
    dropped: frozenset[int] = field(default_factory=frozenset)
    # a split held in memory (the filter's return value for an in-memory training set), read as its Arrow
    # record batches (`batches()`: pyarrow RecordBatches or Tables) in place of `path`
    batches: Any = None


# --- what the reasons promise --------------------------------------------------------------------------


def promised(reasons: Iterable[str]) -> tuple[list[str], bool, dict[str, str]]:
    """(key kinds the reasons promise to remove, whether `dup` is asked, {reason: why it is not checked})."""
    kinds: list[str] = []
    not_checked: dict[str, str] = {}
    dup = False
    for reason in reasons:
        family, _, arg = reason.partition(":")
        if reason == "id":
            kinds += ID_KINDS
        elif family == "id" and arg in CHECKABLE:
            kinds.append(arg)
        elif reason == "dup":
            dup = True
        else:
            not_checked[reason] = NOT_CHECKED.get(arg if family == "id" else family, "not a key-checkable reason")
    return list(dict.fromkeys(kinds)), dup, not_checked


# --- keys of one row ---------------------------------------------------------------------------------


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


# --- the plainest readers ------------------------------------------------------------------------------


def _stream(path: Path):
    codec = COMPRESSIONS.get(path.suffix.lower())
    return pa.input_stream(str(path), compression=codec)


def _seekable(path: Path):
    """A parquet shard as parquet reads it: a compressed one (`x.parquet.zst`) decompressed to an anonymous
    temporary file, since parquet seeks."""
    if path.suffix.lower() not in COMPRESSIONS:
        return path
    spool = tempfile.TemporaryFile()
    with _stream(path) as stream:
        while block := stream.read(4 << 20):
            spool.write(block)
    spool.seek(0)
    return spool


def _format(path: Path) -> str:
    name = path.name.lower()
    for suffix in COMPRESSIONS:
        name = name.removesuffix(suffix)
    return name.rpartition(".")[2]


def _top_columns(columns: Iterable[str], available: list[str]) -> list[str]:
    out = []
    for name in columns:
        top = name if name in available else name.split(".", 1)[0]
        if top in available:
            out.append(top)
    return list(dict.fromkeys(out))


def read_rows(path: Path, wanted: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(position, where, cells) of each row of a written shard: parquet by pyarrow.parquet, CSV by pyarrow.csv
    (every cell text, as written), JSON lines by the stdlib `json`, line by line (a malformed line is a row
    with no cells). Compressed `.gz` / `.zst` files are read through pyarrow's decompressing streams."""
    kind = _format(path)
    wanted = list(wanted)
    if kind == "parquet":
        handle = pq.ParquetFile(_seekable(path))
        columns = _top_columns(wanted, handle.schema_arrow.names)
        position = 0
        for batch in handle.iter_batches(columns=columns or None, batch_size=65536):
            for row in batch.to_pylist() if columns else [{}] * batch.num_rows:
                yield position, f"row {position}", row
                position += 1
        return
    if kind == "csv":  # a block at a time, the asked columns only: a shard of millions of rows is never held
        header = _csv_header(path)
        columns = _top_columns(wanted, header)
        with _stream(path) as stream:
            reader = pcsv.open_csv(stream, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
                                   convert_options=pcsv.ConvertOptions(
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                column_types={c: pa.string() for c in header}, include_columns=columns))
            position = 0
            for batch in reader:
                for row in batch.to_pylist() if columns else [{}] * batch.num_rows:
                    yield position, f"row {position}", {k: (v if v != "" else None) for k, v in row.items()}
                    position += 1
        return
    with _stream(path) as stream:
        position = 0
        for line_no, raw in enumerate(io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace"), start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (ValueError, RecursionError):
                value = None
            yield position, f"line {line_no}", value if isinstance(value, dict) else {}
            position += 1


def memory_rows(batches: Iterable[Any], wanted: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(position, where, cells) of each row of a split held in memory, from its Arrow batches, as `read_rows`
    reads a parquet shard's."""
    wanted = list(wanted)
    position = 0
    for batch in batches:
        columns = _top_columns(wanted, batch.schema.names)
        for row in batch.select(columns).to_pylist() if columns else [{}] * batch.num_rows:
            yield position, f"row {position}", row
            position += 1


def _csv_header(path: Path) -> list[str]:
    with _stream(path) as stream:
        first = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="").readline()
    return next(csv.reader([first]), [])


def reader_name(path: Path) -> str:
    kind = _format(path)
    return {"parquet": "pyarrow.parquet", "csv": "pyarrow.csv"}.get(kind, "json (standard library), line by line")


# --- the check -----------------------------------------------------------------------------------------


def _input_position(position: int, dropped: frozenset[int]) -> int:
    """The input position of the `position`-th kept row, given the input positions that were dropped."""
    index = position
    for gone in sorted(dropped):
        if gone <= index:
            index += 1
        else:
            break
    return index


def bench_keys(bench: BenchRows, old_to_new: Mapping[int, int]) -> dict[tuple[str, str], str]:
    """{(kind, value): the first bench id holding it}, from the bench's raw id cells."""
    out: dict[tuple[str, str], str] = {}
    for row in bench.rows:
        for key in sorted(row_keys(row, bench.columns, old_to_new)):
            out.setdefault(key, str(cell(row, bench.columns.id)))
    return out


def verify_split(files: list[SplitFile], columns: KeyColumns, benches: list[BenchRows], reasons: Iterable[str],
                 old_to_new: Mapping[int, int], kept_rows: int) -> dict[str, Any]:
    """Read every written shard back, derive its rows' keys, and raise InputError at the first kept row that
    holds a key a reason promised to remove (or, with `dup`, a key or id another kept row holds). Returns the
    `verification` block of filter.json: what was checked, how, and what was not."""
    kinds, dup, not_checked = promised(reasons)
    wanted = [c for c in (columns.id, columns.repo, columns.owner, columns.pr, columns.base, columns.fix,
                          columns.cve) if c]
    bench_sets = [(b.name, bench_keys(b, old_to_new)) for b in benches]
    readers: list[str] = []
    rows_read = keys_derived = 0
    with _Seen() as seen:
        for index, split_file in enumerate(files):
            in_memory = split_file.batches is not None
            readers.append("pyarrow (the split as returned, in memory)" if in_memory else reader_name(split_file.path))
            rows = memory_rows(split_file.batches(), wanted) if in_memory else read_rows(split_file.path, wanted)
            for position, where, row in rows:
                rows_read += 1
                keys = row_keys(row, columns, old_to_new)
                keys_derived += len(keys)
                for key in sorted(k for k in keys if k[0] in kinds):
                    for name, held in bench_sets:
                        if key in held:
                            raise InputError(f"filtered split still holds {_at(split_file, position, where)}: "
                                             f"{key[0]} {key[1]} also in {name} {held[key]}; nothing was written")
                if dup:
                    _check_dup(row, columns, keys, files, (index, position, where), seen)
    if rows_read != kept_rows:
        raise InputError(f"filter check failed: the split read back holds {rows_read} rows, not the {kept_rows} "
                         "kept; nothing was written")
    return {
        "method": METHOD,
        "reader": sorted(set(readers)),
        "columns": columns.to_dict(),
        "key_kinds_checked": kinds + (["dup:" + k for k in DUP_KINDS] + ["dup:item_id"] if dup else []),
        "rows_read": rows_read,
        "keys_derived": keys_derived,
        "bench_keys": {name: sum(1 for k in held if k[0] in kinds) for name, held in bench_sets},
        "matches_found": 0,
        "not_checked": [{"reason": r, "why": why} for r, why in not_checked.items()],
    }


def _at(split_file: SplitFile, position: int, where: str) -> str:
    """A kept row named by its position in the input file (as removed.csv names rows) and in the split."""
    return (f"train row {_input_position(position, split_file.dropped)} of {split_file.label} "
            f"({split_file.shown} {where})")


class _Seen:
    """Every id and `dup` key of the kept rows with where it was first seen (file index, position, where): a
    dict up to `HELD` values (most splits), then an SQLite file in the temp folder, removed after, so a split of
    tens of millions of rows is checked in bounded memory (the dict costs ~200 bytes a value, ~1 GB at HELD;
    an SQLite insert ~10 µs, so the dict stays as long as memory allows)."""

    HELD = 5_000_000

    def __init__(self) -> None:
        self.held: dict[tuple[str, str], tuple] = {}
        self.db: sqlite3.Connection | None = None
        self._folder: tempfile.TemporaryDirectory | None = None

    def first(self, kind: str, value: str, here: tuple) -> tuple | None:
        """Where (kind, value) was seen before, or None, when it is recorded as seen `here`."""
        if self.db is None:
            earlier = self.held.setdefault((kind, value), here)
            if earlier is not here:
                return earlier
            if len(self.held) > self.HELD:
                self._to_disk()
            return None
        blob = value.encode("utf-8", "surrogatepass")
        with self._room():
            if self.db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?, ?)", (kind, blob, *here)).rowcount:
                return None
            return tuple(self.db.execute("SELECT file, position, place FROM seen WHERE kind = ? AND value = ?",
                                         (kind, blob)).fetchone())

    @contextmanager
    def _room(self):
        """A full temp folder (SQLite's own error, not an OSError) as one line naming it and TMPDIR."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            where = self._folder.name if self._folder is not None else tempfile.gettempdir()
            raise InputError(f"{where}: {exc} while checking the written split's repeats (past {self.HELD:,} ids "
                             "they wait there); free some space there or set TMPDIR to a folder with room") from None

    def _to_disk(self) -> None:
        with self._room():
            self._held_to_disk()

    def _held_to_disk(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="overlap-verify-")
        self.db = sqlite3.connect(Path(self._folder.name) / "seen.db", isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE",
                       "cache_size = -131072"):  # 128 MB of pages: values arrive in no order
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("CREATE TABLE seen (kind TEXT, value BLOB, file INTEGER, position INTEGER, place TEXT, "
                        "PRIMARY KEY (kind, value)) WITHOUT ROWID")
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO seen VALUES (?, ?, ?, ?, ?)",
                            ((kind, value.encode("utf-8", "surrogatepass"), *here)
                             for (kind, value), here in self.held.items()))
        self.held = {}

    def __enter__(self) -> _Seen:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.db is not None:
            self.db.close()
        if self._folder is not None:
            self._folder.cleanup()


def _check_dup(row, columns: KeyColumns, keys: set[tuple[str, str]], files: list[SplitFile], here: tuple,
               seen: _Seen) -> None:
    def at(place: tuple) -> str:
        return _at(files[place[0]], place[1], place[2])

    try:
        item_id = id_text(cell(row, columns.id))  # as the id is written: ` a` and `a` are two ids
    except InputError:
        item_id = None
    if item_id is not None:
        earlier = seen.first("", item_id, here)
        if earlier is not None:
            raise InputError(f"filtered split still holds {at(here)}: id {item_id} repeats {at(earlier)}; "
                             "nothing was written")
    for key in sorted(k for k in keys if k[0] in DUP_KINDS):
        earlier = seen.first(key[0], key[1], here)
        if earlier is not None:
            raise InputError(f"filtered split still holds {at(here)}: {key[0]} {key[1]} also in {at(earlier)} "
                             "(a duplicate); nothing was written")
