"""The independent check of a written split (`verify_split`): every kept row's keys against the keys the drop
reasons promise to remove, and with `dup` against the other kept rows; the `verification` block of filter.json.

Kinds checked: the canonical keys a drop reason promises to remove (`ossfuzz`, `cve`, `repo_pr`,
`repo_pr_exact`, `base_pr`, `fix_commit`) and, with `dup`, that no two kept rows share an `ossfuzz`, `cve` or
`repo_pr` key or an id. A shared base commit alone is reported, not counted, and `fix`, `ngram:<n>` and
`spec:*` are judged on patches and texts: those are listed as not checked, with why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....errors import InputError
from ....ids.values import id_text
from .keys import KeyColumns, cell, row_keys
from .readers import memory_rows, read_rows, reader_name
from .seen import _Seen

METHOD = "independent read-back"
ID_KINDS = ("ossfuzz", "cve", "repo_pr", "base_pr", "fix_commit")  # what `--drop id` promises to remove
CHECKABLE = (*ID_KINDS, "repo_pr_exact")
DUP_KINDS = ("ossfuzz", "cve", "repo_pr")  # the kinds a `dup` group is made of
NOT_CHECKED = {
    "base": "a shared base commit alone is reported, not counted: whether such a pair counts depends on its fix",
    "fix": "a same-fix pair is judged on patches, not on keys",
    "ngram": "an n-gram flag is judged on texts, not on keys",
    "spec": "a crash-spec flag is judged on texts, not on keys",
}


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
