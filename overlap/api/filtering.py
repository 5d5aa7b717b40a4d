"""`filter_train(train, benches, out)`: the training set without the rows that overlap the benchmarks, written and
checked; `keep_mask(train, benches)`: the same decision as a boolean per row, nothing written. Both run the
compare stages the drop reasons need (`overlap.api.compare`) and decide with `overlap.outputs.ship.filter_plan`.
An in-memory training set's split is also given back in the type it came in (`overlap.sources.formats.in_memory`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ids.ossfuzz import OssFuzzMapping
from ..model import Dataset
from ..outputs.ship.splits import check_reasons, filter_split, keep_mask_of, verify_memory_split, write_split
from ..sources.formats.in_memory import DICT_KINDS, is_in_memory, memory_input
from ..sources.formats.in_memory_split import kept_split, readable_again, removed_rows
from .compare import _columns_arg, _text_pairs, compare
from .filtered import FilteredSplit, InMemorySplit
from .text_columns import with_text_column


def filter_train(
    train: str | Dataset,
    benches: list[str | Dataset],
    out: Path,
    *,
    reasons: tuple[str, ...] | list[str] = ("id", "fix", "dup"),
    data: dict[str, Path] | None = None,
    mapping: OssFuzzMapping | None = None,
    flagged: dict[str, list[str]] | None = None,
    seed: int = 0,
    id_column: str | None = None,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    text: str | list[str | tuple[str, str]] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
) -> FilteredSplit:
    """Write the training set without the rows that overlap the benchmarks into the folder `out`, checked.

    Runs the compare stages the `reasons` need (ids always; evidence for `fix` and `spec:*`; the text check
    for `ngram:<n>`, on the `text` fields "TRAIN_FIELD:BENCH_FIELD", None: each dataset's default; a training
    set read by its columns may name a column of its own as TRAIN_FIELD), decides which rows go
    (`overlap.outputs.ship.filter_plan`), writes the split and proves it: the kept split, read back by a verifier
    that shares no code with the filter (plain readers, the id parsers, set intersection with the benchmarks'
    ids), holds no key an asked reason removes (`overlap.outputs.ship.splits.write_split`). An asked `ngram:<n>`
    whose text check cannot run is an InputError, never a check recorded as passed. Returns a FilteredSplit
    (`comparison`, `decision`, `report`; it unpacks as those three). `engine`, `ray_address` and `workers`:
    the text scan's, as for `compare`.
    """
    if not isinstance(out, (str, os.PathLike)):
        raise InputError(f"out: expected the folder to write the split into (a str or Path), got {type(out).__name__}")
    memory = memory_input(train, split) if is_in_memory(train) else None
    result, decision = _filter_decision(memory or train, benches, reasons=reasons, data=data, mapping=mapping,
                                        flagged=flagged, seed=seed, id_column=id_column, columns=columns, split=split,
                                        text=text, engine=engine, ray_address=ray_address, workers=workers)
    report = write_split(result, decision, out)
    if memory is None:
        return FilteredSplit(result, decision, report)
    # The split in the form it was given, checked by the independent verifier as the written files are.
    keep = keep_mask_of(decision, decision.source_rows, memory.label)
    kept = kept_split(memory, keep, str(Path(out) / report.shards[0]))
    part = kept[memory.split] if memory.given in DICT_KINDS else kept
    if readable_again(part):
        report.verification["in_memory"] = verify_memory_split(
            result, decision, lambda: memory_input(part).raw_batches(65536), f"the kept {memory.given}")
    return InMemorySplit(result, decision, report, kept, removed_rows(memory, keep, decision.removed))


def keep_mask(
    train: Any,
    benches: Any,
    *,
    reasons: tuple[str, ...] | list[str] = ("id", "fix", "dup"),
    data: dict[str, Path] | None = None,
    mapping: OssFuzzMapping | None = None,
    flagged: dict[str, list[str]] | None = None,
    seed: int = 0,
    id_column: str | None = None,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    text: str | list[str | tuple[str, str]] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
):
    """A boolean numpy array over the training set's rows, True where `filter_train` would keep the row (same
    options, same decision), for your own pipeline: `ds.filter(lambda _, i: mask[i], with_indices=True)` or
    `ds.select(numpy.flatnonzero(mask))`, `frame[mask]`, `table.filter(mask)`. Nothing is written. `train` is an
    in-memory dataset or one local file (a mask is by row position, which one file has)."""
    if is_in_memory(train):
        train = memory_input(train, split)
    result, decision = _filter_decision(train, benches, reasons=reasons, data=data, mapping=mapping, flagged=flagged,
                                        seed=seed, id_column=id_column, columns=columns, split=split, text=text,
                                        engine=engine, ray_address=ray_address, workers=workers)
    files = [f for f in result.train.provenance.files if "@" not in f.path]
    if len(files) != 1:
        raise InputError(f"{result.train.name}: read from {len(files)} files, and a mask is by row position in one; "
                         "give one file or an in-memory dataset, or use filter_train (removed.csv names each file)")
    return keep_mask_of(decision, decision.source_rows, files[0].path)


def _filter_decision(train: Any, benches: Any, *, reasons: Any, data: Any, mapping: Any, flagged: Any, seed: int,
                     id_column: str | None, columns: Any, split: str | None, text: Any, engine: str,
                     ray_address: str | None, workers: int | None):
    """(the compare, the FilterResult) of `filter_train`: which rows go and why, nothing written."""
    if isinstance(reasons, str):  # one reason, as `text` takes one pair: never its characters
        reasons = [reasons]
    if not isinstance(reasons, (list, tuple, set, frozenset)):
        raise InputError(f"reasons: expected a list of drop reasons, e.g. ['id', 'dup'], got "
                         f"{type(reasons).__name__}")
    if not all(isinstance(r, str) for r in reasons):
        raise InputError(f"reasons: expected drop reasons as text, e.g. ['id', 'dup'], got {list(reasons)!r}")
    asked = check_reasons(reasons)
    ns = tuple(sorted({int(r.split(":")[1]) for r in asked if r.startswith("ngram:")}, reverse=True))
    columns = _columns_arg(columns)
    if id_column is not None:
        columns = {**(columns or {}), "id": id_column}
    columns, text = with_text_column(columns, _text_pairs(text))
    options: dict[str, Any] = {
        "pool": None,  # chance baselines do not decide what a filter drops
        "seed": seed,
        "evidence": any(r == "fix" or r.startswith("spec:") for r in asked),
        "text": text if ns else [],
        "ngram_ns": ns or (13,),
        "engine": engine, "ray_address": ray_address, "workers": workers,  # the text scan
    }
    # streamed when the training set is read by its columns alone: the rows it drops are found by reading its id
    # column again, and the split is written file by file, so no row of it is held
    result = compare(train, benches, data=data, mapping=mapping, columns=columns, split=split, **options)
    for comparison in result.benches if ns and not (flagged and all(f"ngram:{n}" in flagged for n in ns)) else ():
        block = comparison.sections.get("text") or {}
        if block.get("status") != "ran":
            why = block.get("reason") or "the text check did not run"
            raise InputError(f"drop reason 'ngram:{ns[0]}' asked for, but the text check cannot run against "
                             f"{comparison.bench.name}: {why}; name the training set's text field (CLI: --text "
                             "TRAIN_FIELD:BENCH_FIELD; library: text=...), or leave the reason out")
    return result, filter_split(result, asked, flagged=flagged)
