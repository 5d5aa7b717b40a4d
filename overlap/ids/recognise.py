"""Keys and a report of a column of ids, by the recogniser table (`overlap.ids.recognisers`).

The first recogniser (in table order) that takes a value wins. A forced scheme (`--id-scheme`) adds its
looser form for the values no recogniser's specific form takes: a PR URL stays a PR and a CVE a CVE under
`--id-scheme ossfuzz`, while a bare `task-10055` becomes OSS-Fuzz issue 10055. A value none takes is
unrecognised: counted and listed (first five), never dropped silently. Rows whose value is not ASCII go
through the scalar parsers (`trailing_int`, `find_cve`, `parse_instance_id`), so every Unicode rule
(fullwidth digits refused, letters of any script bounding a CVE id) is theirs, unchanged; so are numbers
too long for int64. Floats are ids only when whole (`10055.0` is 10055, as `overlap.ids.values.id_text`); in a
number column a fraction, inf or NaN is no id (missing, as the items count it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from . import compiled
from .cve import find_cve, raw_cve
from .github import normalize_repo, parse_instance_id, parse_pr, pr_keys
from .id_arrays import LITERALS, _display, _example, _str, id_strings
from .ossfuzz import trailing_int
from .recognisers import RECOGNISERS
from .recognition import RecogniserCount, Recognition, RecognitionReport

KEY_FIELDS = ("row", "kind", "value", "raw")
CONTEXT = ("repo", "pr", "base", "cve", "fix")  # columns a recogniser may read beside the id


def _scalar_recognise(name: str, value: str, forced: bool, context_row: dict[str, Any]) -> list[tuple]:
    """The keys of one (non-ASCII) value by the scalar parsers: the reference the vectorised path follows."""
    if name == "ossfuzz":
        number = trailing_int(value) if forced else None
        if not forced:
            return []  # the specific OSS-Fuzz forms are all ASCII
        return [("ossfuzz", str(number), str(number))] if number is not None else []
    if name == "cve":
        cve = find_cve(value)
        return [("cve", cve, raw_cve(value))] if cve else []
    if name == "github_pr":
        parsed = parse_instance_id(value)
        if parsed is None:
            return []
        owner, repo_name, number = parsed
        own_repo = f"{owner}/{repo_name}"
        repo = context_row.get("repo")
        written = repo.strip() if isinstance(repo, str) and normalize_repo(repo) else None
        if written is None:
            written = own_repo.strip() if normalize_repo(own_repo) else None
        column_pr = parse_pr(context_row["pr"]) if context_row.get("pr") is not None else None
        number = column_pr if column_pr is not None else number
        base = context_row.get("base")
        keys = pr_keys(written, number, base)
        return keys if keys or number is not None else []
    return []  # ghsa and fix_commit forms are ASCII


def recognise(values: Any, *, scheme: str | None = None, context: dict[str, Any] | None = None) -> Recognition:
    """Keys of every value of `values` (a pyarrow array of ids, any type) by the recogniser table.

    Each recogniser's specific forms are tried in table order; `scheme` then adds one recogniser's looser
    form (`ossfuzz`: any trailing issue number; `fix_commit`: a bare sha) for the values still open.
    `context` holds columns beside the ids (`repo`, `pr`, `base`, `cve`, `fix`).
    """
    if scheme is not None and scheme not in RECOGNISERS:
        raise InputError(f"id scheme {scheme!r}: use one of {', '.join(RECOGNISERS)}")
    context = {k: v for k, v in (context or {}).items() if v is not None}
    unknown = sorted(set(context) - set(CONTEXT))
    if unknown:
        raise InputError(f"recognise: unknown context column {unknown[0]!r}; known: {', '.join(CONTEXT)}")
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    length = len(values)
    module = compiled.kernels(length)
    text = literal_bits = None
    if module is not None and pa.types.is_string(values.type):
        # one pass over the bytes: the literals, which values are ASCII, and whether any value might be trimmed
        bits, wide, edge = compiled.literal_bits_and_flags(values, LITERALS, module)
        if not edge.any():  # nothing to trim: the values are the text, a blank one is empty or null
            text, literal_bits = values, bits
            valid = values.is_valid().to_numpy(zero_copy_only=False)
            offsets = compiled.string_buffers(values)[0]
            missing = pa.array(~valid | (offsets[1:] == offsets[:-1]))
            ascii_rows = pa.array(~wide)
    if text is None:
        text = pc.utf8_trim_whitespace(id_strings(values))
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            missing = pc.fill_null(pc.equal(pc.utf8_length(text), 0), True)  # blank
        elif pa.types.is_floating(values.type):
            # a number cell that is no whole number (NaN, how pandas writes a missing cell; a fraction; inf) is no
            # id, as the side's items count it
            missing = pc.is_null(text)
        else:
            missing = pc.is_null(values)
        ascii_rows = pc.fill_null(pc.string_is_ascii(text), True)
        if module is not None:
            literal_bits = compiled.literal_bits(text, LITERALS, module)
    if literal_bits is not None:
        context = {**context, "_literals": pa.array(literal_bits)}
    open_rows = pc.and_(pc.invert(missing), ascii_rows)
    open_rows = pc.and_(open_rows, pc.is_valid(text))
    # (recogniser, forced): every specific form first, then the forced scheme's looser form on what is left
    chosen = [(r, False) for r in RECOGNISERS.values()] + ([(RECOGNISERS[scheme], True)] if scheme else [])
    report = RecognitionReport(scheme=scheme)
    pieces = []
    open_rows = pc.fill_null(open_rows, False).to_numpy(zero_copy_only=False).copy()
    taken_by = np.full(length, -1, np.int64)  # per row, the index in `chosen` of the recogniser that took it
    # per recogniser, (row, example) of the first row it took: the example is the earliest value whichever pass
    # took it (a forced form, a non-ASCII value), so it does not depend on where batches split the rows
    examples: dict[str, tuple[int, str]] = {}
    carried: list[tuple[np.ndarray, dict[str, Any]]] = []  # (rows, what a recogniser's keys carry for them)
    for index, (recogniser, forced) in enumerate(chosen):
        # Each recogniser sees only the values no earlier one took (and none once every value is taken).
        open_at = np.flatnonzero(open_rows)
        if not len(open_at):
            break
        if literal_bits is not None and recogniser.literals and not forced:
            wanted = sum(1 << LITERALS.index(literal) for literal in recogniser.literals)
            if not (literal_bits[open_at] & wanted).any():
                continue
        if 2 * len(open_at) >= length:
            # most rows open: the whole batch with the open ones marked (a recogniser takes open rows only),
            # not a copy of most of its strings
            positions = open_at if len(open_at) == length else np.arange(length)
            taken, parts, *fields = recogniser.extract(text, pa.array(open_rows), context, forced)
        else:
            positions = open_at
            sub_context = {k: v.take(pa.array(open_at)) for k, v in context.items()}
            taken, parts, *fields = recogniser.extract(text.take(pa.array(open_at)),
                                                       pa.repeat(pa.scalar(True), len(open_at)), sub_context, forced)
        rows = pa.array(positions)
        carried += [(positions, f) for f in fields]
        taken = pc.fill_null(taken, False).to_numpy(zero_copy_only=False) & open_rows[positions]
        count = int(taken.sum())
        if count:
            first = int(positions[np.argmax(taken)])
            counted = report.taken.setdefault(recogniser.name, RecogniserCount())
            counted.count += count
            if first < examples.get(recogniser.name, (length,))[0]:
                examples[recogniser.name] = (first, _example(str(values[first].as_py())))
            taken_by[positions[taken]] = index
            open_rows[positions[taken]] = False
        # A PR's repo_pr and repo_pr_exact keys are often one array under one mask: filtered once, the two pieces
        # hold the same array (and the join hashes it once).
        chosen_by: dict[tuple[int, int], tuple[Any, int]] = {}
        picked: dict[tuple[int, int], Any] = {}
        for mask, kind, value, raw in parts:
            if (id(mask), id(value)) not in chosen_by:
                held = pc.fill_null(pc.and_(mask, pc.is_valid(value)), False)
                chosen_by[id(mask), id(value)] = held, pc.sum(held).as_py() or 0
            held, found = chosen_by[id(mask), id(value)]
            if not found:
                continue
            for array in (value, raw):
                if (id(held), id(array)) not in picked:
                    picked[id(held), id(array)] = _str(array if found == len(held) else array.filter(held))
            if (id(held), -1) not in picked:  # the rows: all of them when every row has the key
                picked[id(held), -1] = rows if found == len(held) else rows.filter(held)
            pieces.append(pa.table({"row": picked[id(held), -1], "kind": pa.repeat(pa.scalar(kind), found),
                                    "value": picked[id(held), id(value)], "raw": picked[id(held), id(raw)]}))
    # Non-ASCII values: the scalar parsers decide (every Unicode rule is theirs).
    names = pa.array([recogniser.name for recogniser, _ in chosen], pa.string())
    by_row = names.take(pa.array(taken_by, mask=taken_by < 0)) if len(chosen) else pa.nulls(length, pa.string())
    scalar_rows = pc.and_(pc.invert(missing), pc.invert(ascii_rows))
    scalar = pc.any(scalar_rows).as_py()
    if scalar:
        by_row_list = by_row.to_pylist()
        extra = {"row": [], "kind": [], "value": [], "raw": []}
        context_lists = {k: (v.to_pylist() if hasattr(v, "to_pylist") else list(v)) for k, v in context.items()
                         if k in CONTEXT}
        for position in pc.indices_nonzero(scalar_rows).to_pylist():
            value = text[position].as_py()
            row_context = {k: v[position] for k, v in context_lists.items()}
            for recogniser, forced in chosen:
                keys = _scalar_recognise(recogniser.name, value, forced, row_context)
                if keys:
                    counted = report.taken.setdefault(recogniser.name, RecogniserCount())
                    counted.count += 1
                    if position < examples.get(recogniser.name, (length,))[0]:
                        examples[recogniser.name] = (position, _example(value))
                    by_row_list[position] = recogniser.name
                    for kind, key_value, raw in keys:
                        for column, item in zip(KEY_FIELDS, (position, kind, key_value, raw), strict=True):
                            extra[column].append(item)
                    break
        by_row = pa.array(by_row_list, pa.string())
        if extra["row"]:
            pieces.append(pa.table({"row": pa.array(extra["row"], pa.int64()),
                                    "kind": pa.array(extra["kind"], pa.string()),
                                    "value": pa.array(extra["value"], pa.string()),
                                    "raw": pa.array(extra["raw"], pa.string())}))
    for name, (_, shown) in examples.items():
        report.taken[name].example = shown
    unrecognised = pc.and_(pc.invert(missing), pc.is_null(by_row))
    report.unrecognised = pc.sum(unrecognised).as_py() or 0
    report.missing = pc.sum(missing).as_py() or 0
    if report.unrecognised:
        first = pc.indices_nonzero(unrecognised)[:5]
        report.unrecognised_examples = [v for v in _display(values.take(first)) if v is not None]
    schema = pa.schema([("row", pa.int64()), ("kind", pa.string()), ("value", pa.string()), ("raw", pa.string())])
    # Keys in recogniser order, each recogniser's in row order: deterministic without a sort, which would copy
    # every key string once more (a fifth of a 250k-row scan).
    keys = pa.concat_tables(pieces) if pieces else schema.empty_table()
    return Recognition(keys=keys, report=report, recogniser=by_row,
                       pr_fields=None if scalar else _placed_fields(carried, length))


def _placed_fields(carried: list[tuple[np.ndarray, dict[str, Any]]], length: int) -> tuple[Any, Any]:
    """(PR number, repo) per row of a `length`-row batch, from what each recogniser's keys carry for its open
    rows (a row is taken by one recogniser: the others carry null for it)."""
    if len(carried) == 1 and len(carried[0][0]) == length:
        return carried[0][1]["pr"], carried[0][1]["repo"]
    number, has_number = np.zeros(length, np.int64), np.zeros(length, bool)
    where = np.full(length, -1, np.int64)
    repos = []
    start = 0
    for rows, fields in carried:
        pr = fields["pr"]
        held = pc.is_valid(pr).to_numpy(zero_copy_only=False)
        number[rows[held]] = pc.fill_null(pr, 0).to_numpy(zero_copy_only=False)[held]
        has_number[rows[held]] = True
        repo = fields["repo"]
        named = pc.is_valid(repo).to_numpy(zero_copy_only=False)
        where[rows[named]] = start + np.flatnonzero(named)
        repos.append(repo)
        start += len(repo)
    repo = pa.concat_arrays(repos) if repos else pa.nulls(0, pa.string())
    return (pa.array(number, pa.int64(), mask=~has_number),
            repo.take(pa.array(where, mask=where < 0)) if len(repo) else pa.nulls(length, pa.string()))
