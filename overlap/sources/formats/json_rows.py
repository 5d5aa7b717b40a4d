"""The Python reader of JSON rows (JSON lines, or one JSON array), for what pyarrow's streaming reader cannot
read: a JSON array, a line longer than its block, a column whose type changes between blocks, integers
beyond 64 bits, escapes it refuses. Streamed: memory is bounded by the batch and the longest row (itself
bounded by `streams.MAX_LINE_BYTES`). Every malformed row is an InputError naming the file and line.
"""

from __future__ import annotations

import contextvars
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from ...errors import InputError
from ..places.streams import MAX_LINE_BYTES, capped_lines, open_stream

# `\ud800`…`\udfff` written in JSON: json.loads keeps a lone one as a surrogate, which no UTF-8 writer (Arrow,
# pandas, a terminal) accepts; such rows are rare, so only a line holding the escape is cleaned.
_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")
_SURROGATE_ESCAPE_TEXT = re.compile(r"\\[uU][dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads_clean(text: str | bytes) -> Any:
    """json.loads, with lone surrogates (an escaped surrogate that is not half of a pair) replaced by U+FFFD."""
    value = json.loads(text)
    escaped = (_SURROGATE_ESCAPE if isinstance(text, bytes) else _SURROGATE_ESCAPE_TEXT).search(text)
    return _clean(value) if escaped else value


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


# Where bad JSON lines are counted instead of refused: set by a reader that reports them as problems (a
# registered dataset with one broken line is still read); unset, a bad line is an InputError naming it.
BAD_LINES: contextvars.ContextVar[list | None] = contextvars.ContextVar("bad_json_lines", default=None)


def json_values(data_file, filesystem, compression, array: bool) -> Iterator[tuple[int, Any]]:
    """(line, value) of each row of a JSON-lines file or a JSON array file, streamed. With `BAD_LINES` set, a
    line that is not a JSON object is noted there and stands as an empty row (it keeps its position)."""
    bad = BAD_LINES.get()
    stream = io.BufferedReader(open_stream(data_file.path, filesystem, compression), buffer_size=1 << 20)
    if not array:
        for line_no, raw in capped_lines(stream, data_file.name):
            if not raw.strip():
                continue
            try:
                yield line_no, loads_clean(raw.decode("utf-8").removeprefix("\ufeff"))
            except UnicodeDecodeError:
                raise InputError(f"{data_file.name}: line {line_no}: not UTF-8 text; re-encode the file") from None
            except (json.JSONDecodeError, RecursionError) as exc:
                if bad is not None:
                    bad.append(f"{data_file.name} line {line_no}")
                    yield line_no, {}
                    continue
                if isinstance(exc, RecursionError):
                    raise InputError(f"{data_file.name}: line {line_no}: JSON nested too deeply to read") from None
                raise InputError(f"{data_file.name}: line {line_no}: invalid JSON ({exc.msg}); is the file "
                                 "complete?") from None
        return
    yield from _json_array(data_file, io.TextIOWrapper(stream, encoding="utf-8-sig"))


def _json_array(data_file, text) -> Iterator[tuple[int, Any]]:
    """The elements of a JSON array, decoded one at a time from a text stream (bounded by the largest one)."""
    decoder = json.JSONDecoder()
    buffer, pos, eof, line = "", 0, False, 1
    state = "open"

    def fill() -> bool:
        nonlocal buffer, pos, eof
        if len(buffer) - pos > MAX_LINE_BYTES:  # one element this long is refused before it is all read
            raise InputError(f"{data_file.name}: line {line}: a JSON array element longer than "
                             f"{MAX_LINE_BYTES >> 20} MiB; split the file or shorten its fields")
        chunk = text.read(1 << 20)
        buffer, pos = buffer[pos:] + chunk, 0
        eof = not chunk
        return bool(chunk)

    fill()
    while True:
        while pos < len(buffer) and buffer[pos] in " \t\r\n":
            line += buffer[pos] == "\n"
            pos += 1
        if pos >= len(buffer):
            if eof or not fill():
                raise InputError(f"{data_file.name}: line {line}: the JSON array is not closed; is the file "
                                 "complete?")
            continue
        char = buffer[pos]
        if state == "open":
            if char != "[":
                raise InputError(f"{data_file.name}: expected a JSON array of objects or JSON lines")
            pos, state = pos + 1, "first"
            continue
        if char == "]" and state in ("first", "comma"):
            _refuse_after_array(data_file, text, buffer[pos + 1:], line)
            return
        if state == "comma":
            if char != ",":
                raise InputError(f"{data_file.name}: line {line}: expected ',' or ']' in the JSON array")
            pos, state = pos + 1, "value"
            continue
        try:
            value, end = decoder.raw_decode(buffer, pos)
        except json.JSONDecodeError as exc:
            if not eof and fill():
                continue
            raise InputError(f"{data_file.name}: line {line}: invalid JSON ({exc.msg}); is the file complete?"
                             ) from None
        except RecursionError:
            raise InputError(f"{data_file.name}: line {line}: JSON nested too deeply to read") from None
        if end == len(buffer) and not eof:  # a number may continue in the next chunk
            if fill():
                continue
        yield line, _clean(value) if _SURROGATE_ESCAPE_TEXT.search(buffer, pos, end) else value
        line += buffer.count("\n", pos, end)
        pos, state = end, "comma"
        if pos > (1 << 20):
            buffer, pos = buffer[pos:], 0


def _refuse_after_array(data_file, text, rest: str, line: int) -> None:
    """A JSON file is one value: anything but white space after its array (a second array, as `cat a.json
    b.json` makes, an object, garbage) would otherwise be dropped unread."""
    while True:
        for char in rest:
            if char not in " \t\r\n":
                raise InputError(f"{data_file.name}: line {line}: more JSON after the array's closing ']' (a JSON "
                                 "file holds one value); make it one array, or JSON lines (one object a line)")
            line += char == "\n"
        try:
            rest = text.read(1 << 20)
        except UnicodeDecodeError:
            rest = "\ufffd"  # bytes that are not text after the array: more content all the same
        if not rest:
            return


_JSON_NAMES = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
               list: "a list"}


_MISSING = object()


def _walk(row: Any, column: str) -> Any:
    """The value at `column` in a JSON row: the literal key, else a dotted path (digits index lists)."""
    if column in row:
        return row[column]
    value = row
    for part in column.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, list) and part.isdigit():
            return None
        else:
            return _MISSING
    return value


# Field metadata of an asked column a file does not have (read as nulls): its nulls are no cells, and a named
# column no file has is likely misspelt (`projection.absent`).
ABSENT = {b"overlap.absent": b"1"}


def json_python(data_file, columns, optional, batch_rows, filesystem, compression, *, skip: int, array: bool,
                text_columns=()):

    values: dict[str, list] = {c: [] for c in columns}
    seen: set[str] = set()
    keys: set[str] = set()
    count = 0
    for line_no, row in json_values(data_file, filesystem, compression, array):
        if not isinstance(row, dict):
            raise InputError(f"{data_file.name}: line {line_no}: expected a JSON object (one row), got "
                             f"{_JSON_NAMES.get(type(row), type(row).__name__)}")
        count += 1
        if count <= skip:
            continue
        if len(keys) < 200:
            keys.update(row)
        for column in columns:
            value = _walk(row, column)
            if value is _MISSING:
                value = None
            else:
                seen.add(column)
                if isinstance(value, float) and value != value:
                    value = None  # `NaN` (pandas writes its missing cells so): no cell, as `values.id_text` reads it
                elif column in text_columns and not isinstance(value, str) and value is not None:
                    what = "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) \
                        else f"the {'boolean' if isinstance(value, bool) else 'number'} {json.dumps(value)}"
                    raise InputError(f"{data_file.name}: line {line_no}: column '{column}' holds {what} here, not "
                                     "text; give that row text, or name the field that holds it (by its path, e.g. "
                                     f"'{column}.0.content')")
                elif isinstance(value, (list, dict)) and column not in optional:
                    # An id cell that is a list or an object is refused whatever the rows around it hold: beside
                    # text it would become its JSON text, and a CVE inside it would match as an id.
                    what, part = ("a list", "0") if isinstance(value, list) else ("an object", "<field>")
                    raise InputError(f"{data_file.name}: line {line_no}: column '{column}' holds {what} here, not "
                                     "an id; name a field of text or whole numbers (a part of it by its path, e.g. "
                                     f"'{column}.{part}')")
            values[column].append(value)
        if len(values[columns[0]]) >= batch_rows:
            _check_seen(data_file, columns, optional, seen, keys)
            yield _loose_batch(values, columns, seen)
            values = {c: [] for c in columns}
    if values[columns[0]] or count == skip == 0:
        if count:
            _check_seen(data_file, columns, optional, seen, keys)
        if values[columns[0]]:
            yield _loose_batch(values, columns, seen)


def _loose_batch(values: dict[str, list], columns: list[str], seen: set[str]) -> Any:
    """A batch of the values read, a column no row so far has marked absent (`ABSENT`)."""
    import pyarrow as pa

    arrays = [_loose_array(values[c]) for c in columns]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([
        pa.field(c, array.type, metadata=None if c in seen else ABSENT)
        for c, array in zip(columns, arrays, strict=True)]))


def _check_seen(data_file, columns, optional, seen, keys) -> None:
    missing = [c for c in columns if c not in seen and c not in optional]
    if missing:
        raise InputError(f"{data_file.name}: no column '{missing[0]}'; the rows have "
                         f"{', '.join(sorted(keys)[:20]) or 'no fields'} (missing column(s) "
                         f"{', '.join(repr(c) for c in missing)}: name the columns the file has)")


def _loose_array(values: list) -> Any:
    """An Arrow array of JSON values; mixed types (ids written as numbers in some rows, text in others)
    become text, a whole float its integer (`10055.0` → `10055`, as `overlap.ids.values.id_text` reads it)."""
    import pyarrow as pa

    try:
        array = pa.array(values)
        if pa.types.is_floating(array.type) and any(v is True or v is False for v in values):
            # pyarrow reads `true` beside a float as 1.0 (a PR 1, an id "1"): a boolean is text beside anything
            raise pa.ArrowTypeError("booleans beside numbers")
        return _whole(array)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # OverflowError: an integer beyond 64 bits
        # (and a float past 2**53, `_whole`): text from the values as read, so no digit is lost
        return pa.array([as_text(v) for v in values], pa.string())


def as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def exact_numbers(batch):
    """A batch from pyarrow's JSON reader with its number columns as the file wrote them: a column it read
    as floats holding only whole numbers (ids `10055` and `10055.0` side by side) as integers; a number
    beyond 2**53, which a float cannot hold exactly (a 20-digit id), raises ArrowInvalid so the Python reader,
    which keeps every digit, reads the file instead."""
    import pyarrow as pa

    arrays = [_whole(array) for array in batch.columns]
    if all(a is b for a, b in zip(arrays, batch.columns, strict=True)):
        return batch
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([field.with_type(array.type) for field, array
                                                                in zip(batch.schema, arrays, strict=True)]))


def _whole(array):
    """A float array holding only whole numbers as int64, else as text (`as_text`: whole floats as their integer,
    a fraction as written): a JSON cell reads the same whether its batch holds text beside it or numbers alone,
    so a row re-read among other rows (the filter's check), or read in batches of another size (a streamed
    side), has the id it had. ArrowInvalid when one is too large for a float to hold exactly: the caller then
    reads the values as written (kept as a float, `1e30` would be no id alone and the text `1e+30` beside text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(array.type) and array.null_count < len(array):  # as beside text: `true`, `false`
        return pa.array([as_text(v) for v in array.to_pylist()], pa.string())
    if not pa.types.is_floating(array.type) or array.null_count == len(array):
        return array
    top = pc.max(pc.abs(array)).as_py()
    if top is not None and top >= 2**53:
        raise pa.ArrowInvalid("a number too large for a float")
    if pc.all(pc.equal(array, pc.floor(array))).as_py():
        return array.cast(pa.int64())
    return pa.array([as_text(v) for v in array.to_pylist()], pa.string())
