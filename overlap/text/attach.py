"""Attach text evidence to a compare result (in place): per (train field, bench field) the n-gram filter
view (what a 13-gram decontamination would flag) and the pair view (longest shared run, identifiers)."""

from __future__ import annotations

import pandas as pd

from ..errors import InputError
from ..sources.registry.later_columns import ensure_columns, iter_lazy_batches, lazy_columns
from ..sources.registry.registry import get_spec, is_known
from ..sources.rows.columns import text_field as item_text_field
from .api import DEFAULT_BOILERPLATE_THRESHOLD, text_check

# Default text per dataset family: the text a model trains on or is shown (crash spec, issue text).
PREFERRED_FIELDS = ("text_problem_statement", "text_prompt", "text_description", "text_bug_description",
                    "text_bug_report")


def _text_fields(dataset) -> list[str]:
    """Text fields a dataset has: loaded columns, and those it fetches on demand (SWE-rebench)."""
    lazy = [c for c in lazy_columns(dataset) if c.startswith("text_")]
    return list(dict.fromkeys([*dataset.text_columns, *lazy]))


def default_field(dataset) -> str | None:
    fields = _text_fields(dataset)
    adapter = getattr(dataset.provenance, "adapter", None)
    if adapter and is_known(adapter):
        chosen = get_spec(adapter).extra.get("text_field")
        if chosen and chosen in fields:
            return chosen
    columns = getattr(dataset, "generic_columns", None)
    if columns is not None and columns.text:  # read by its columns: the text column it names is its text
        declared = item_text_field(columns.text)
        if declared in fields:
            return declared
    return next((f for f in PREFERRED_FIELDS if f in fields), None)


def text_field(dataset, name: str, option: str | None = None) -> str:
    """A text field named with or without its `text_` prefix. `option` is how the caller names what it
    was given (e.g. "text 'prompt:description'"); library messages never name a CLI flag."""
    fields = _text_fields(dataset)
    for candidate in (name, f"text_{name}"):
        if candidate in fields and candidate.startswith("text_"):
            return candidate
    known = ", ".join(c.removeprefix("text_") for c in fields) or "none"
    where = f"{option}: " if option else ""
    raise InputError(f"{where}{dataset.name} has no text field '{name}'; its text fields: {known}")


def parse_text_options(values: list[str] | None) -> list[tuple[str, str]] | None:
    """`--text TRAIN_FIELD:BENCH_FIELD` options; None = the defaults, [] = off (`--text none`)."""
    if not values:
        return None
    if values == ["none"]:
        return []
    out = []
    for value in values:
        train_field, sep, bench_field = value.partition(":")
        if not sep or not train_field or not bench_field:
            raise InputError(f"text fields {value!r}: expected TRAIN_FIELD:BENCH_FIELD, e.g. prompt:description "
                             "(CLI: --text prompt:description)")
        out.append((train_field, bench_field))
    return out


def attach_text(result, fields: list[tuple[str, str]] | None = None, *, ns=(13, 8),
                boilerplate_threshold: int | None = None, workers: int | None = None, engine: str = "local",
                ray_address: str | None = None) -> None:
    """Run the text check for every benchmark and field pair; add `text` sections, pair run columns and the
    train items' `ngram_<n>` flags (used by `overlap filter --drop ngram:13`). `workers`, `engine` and
    `ray_address` are text_check's (None workers: chosen from the input size)."""
    threshold = DEFAULT_BOILERPLATE_THRESHOLD if boilerplate_threshold is None else boilerplate_threshold
    train = result.train
    flagged: dict[int, set[str]] = {n: set() for n in ns}
    for comp in result.benches:
        wanted = fields
        if wanted is None:
            t_field, b_field = default_field(train), default_field(comp.bench)
            if t_field is None or b_field is None:
                missing = train.name if t_field is None else comp.bench.name
                comp.sections["text"] = {"status": "not_run", "reason": f"{missing} has no text field"}
                continue
            wanted = [(t_field, b_field)]
        blocks = []
        for t_name, b_name in wanted:
            label = f"text '{t_name}:{b_name}'"
            t_field, b_field = text_field(train, t_name, label), text_field(comp.bench, b_name, label)
            checked = text_check(texts_of(train, t_field, stream=True), texts_of(comp.bench, b_field),
                                 t_field, b_field, ns=ns, boilerplate_threshold=threshold,
                                 pairs=comp.pairs[["train_id", "bench_id"]], workers=workers, engine=engine,
                                 ray_address=ray_address)
            blocks.append({"status": "ran"} | checked.summary())
            for n in ns:
                flagged[n] |= checked.flagged(n)
            _add_run_columns(comp, checked, suffix="" if len(wanted) == 1 else f"_{t_field}_{b_field}")
        comp.sections["text"] = blocks[0] if len(blocks) == 1 else {"status": "ran", "checks": blocks}
    for n in ns:
        train.items[f"ngram_{n}"] = train.items["item_id"].isin(flagged[n])
    result.parameters.update({"text": fields, "ngram_ns": list(ns), "boilerplate_threshold": threshold})


def texts_of(dataset, field: str, stream: bool = False):
    """The (item_id, field) table of a dataset. Sets that load their texts lazily (SWE-rebench-V2(-PRs))
    are streamed by row group on the train side, and fetched for all items on the bench side."""
    if field in lazy_columns(dataset):
        if stream:
            return iter_lazy_batches(dataset, field)
        ensure_columns(dataset, dataset.items["item_id"], (field,))
    return dataset.items[["item_id", field]]


def _add_run_columns(comp, checked, suffix: str) -> None:
    """Longest shared run (and whether the bench text names the train item's function/file) per pair."""
    pairs = comp.pairs
    if not len(pairs):
        return
    runs = checked.runs.drop_duplicates(["train_id", "bench_id"]).set_index(["train_id", "bench_id"])
    index = pd.MultiIndex.from_frame(pairs[["train_id", "bench_id"]])
    pairs[f"longest_run{suffix}"] = runs["longest_run"].reindex(index).to_numpy()
    if checked.identifiers is not None and len(checked.identifiers):
        ident = checked.identifiers.drop_duplicates(["train_id", "bench_id"]).set_index(["train_id", "bench_id"])
        pairs[f"names_function{suffix}"] = ident["function_named"].reindex(index).to_numpy()
        pairs[f"names_file{suffix}"] = ident["file_named"].reindex(index).to_numpy()
