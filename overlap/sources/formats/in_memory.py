"""Datasets held in memory, read as files are: a `datasets.Dataset`, `DatasetDict` (one split), `IterableDataset`,
a pandas or polars DataFrame, a `pyarrow.Table`, `RecordBatchReader` or `pyarrow.dataset.Dataset`.

`memory_input(value, split=...)` wraps one as a `MemoryInput`: its rows as Arrow record batches of every column
(`raw_batches`), which `overlap.sources.formats.batches.open_batches` projects on the asked columns exactly as it
projects a parquet file's (dotted names, missing columns, types), so everything downstream (the key scan, the
streamed key join, the split writer) reads it as the one file `label`. Provenance has no file hash to record:
`record()` says what was given instead (type, split, columns, rows, and the `datasets` fingerprint where there
is one).

Nothing here imports `datasets`, pandas or polars: a value is recognised by the names of its classes (an object
of theirs exists only once its library is imported), so `overlap --help` stays cheap.

Streams are read a batch at a time: an `IterableDataset` and a `pyarrow.dataset.Dataset` are iterated again
for a second pass (the streamed join reads the id column again to list clean ids or locate dropped rows); a
`RecordBatchReader` can be read once, so its first pass is copied batch by batch to a temporary Arrow IPC file
that later passes read (disk, never memory).
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ...errors import InputError

# (top-level module, class name) of each accepted type, looked for along the value's class hierarchy
KINDS = {
    ("datasets", "DatasetDict"): "datasets.DatasetDict",
    ("datasets", "IterableDatasetDict"): "datasets.IterableDatasetDict",
    ("datasets", "Dataset"): "datasets.Dataset",
    ("datasets", "IterableDataset"): "datasets.IterableDataset",
    ("pandas", "DataFrame"): "pandas.DataFrame",
    ("polars", "DataFrame"): "polars.DataFrame",
    ("pyarrow", "Table"): "pyarrow.Table",
    ("pyarrow", "RecordBatchReader"): "pyarrow.RecordBatchReader",
    ("pyarrow", "Dataset"): "pyarrow.dataset.Dataset",
}
# read a batch at a time from their source, never held whole
STREAMED_KINDS = ("datasets.IterableDataset", "pyarrow.RecordBatchReader", "pyarrow.dataset.Dataset")
DICT_KINDS = ("datasets.DatasetDict", "datasets.IterableDatasetDict")
ORIGIN = "in-memory"
# rows of one batch asked of an IterableDataset: a generator's batch is held as Python dicts (~1 KB a row) before
# it is Arrow, so a file's batch size (262,144 rows) would cost its peak memory twice over
ITERABLE_BATCH_ROWS = 32_768


def kind_of(value: Any) -> str | None:
    """The accepted type `value` is (as `KINDS` names it), or None."""
    for cls in type(value).__mro__:
        kind = KINDS.get((cls.__module__.partition(".")[0], cls.__name__))
        if kind is not None:
            return kind
    return None


def is_in_memory(value: Any) -> bool:
    return isinstance(value, MemoryInput) or kind_of(value) is not None


@dataclass(eq=False)
class MemoryInput:
    """One in-memory dataset, read as the one file `label`. `value` is what is read (a DatasetDict's chosen
    split); `given` the type the caller gave."""

    value: Any
    kind: str
    given: str
    label: str
    split: str | None = None
    fingerprint: str | None = None
    rows: int | None = None  # known before reading (a table, a frame), else counted by the first full read
    _spool: Any = field(default=None, repr=False)  # a RecordBatchReader's copy: (folder, path, complete)
    _seen: list[str] | None = field(default=None, repr=False)  # the columns of the first batch read
    original: Any = field(default=None, repr=False)  # what the caller gave (a DatasetDict: all its splits)
    named: bool = False  # the label is the caller's (`named`), not the type's
    role: str | None = None  # the atlas's role for it (`named(role=...)`); None: a training set

    @property
    def streamed(self) -> bool:
        return self.kind in STREAMED_KINDS

    def columns(self) -> list[str] | None:
        """The top-level column names, when known without reading (an IterableDataset without features: no)."""
        if self.kind in ("pandas.DataFrame", "polars.DataFrame"):
            return [str(c) for c in self.value.columns]
        schema = self.schema()
        return self._seen if schema is None else list(schema.names)

    def schema(self) -> pa.Schema | None:
        kind, value = self.kind, self.value
        if kind == "datasets.Dataset":
            return value.data.schema
        if kind == "datasets.IterableDataset":
            return value.features.arrow_schema if value.features is not None else None
        if kind in ("pandas.DataFrame", "polars.DataFrame"):
            return None  # types are inferred from the values (`_frame_batches`), never guessed here
        return value.schema

    def record(self) -> dict[str, Any]:
        """What provenance records of it (there is no file hash): type, split, columns, rows, fingerprint."""
        columns = self.columns()
        return {"type": self.given, "split": self.split, "columns": columns, "rows": self.rows,
                "fingerprint": self.fingerprint}

    def raw_batches(self, batch_rows: int, tops: Sequence[str] | None = None) -> Iterator[pa.RecordBatch]:
        """Every row, a batch of at most `batch_rows` at a time, in order; `tops`: the top-level columns needed
        (others may be left out where that saves a copy; None: all)."""
        try:
            for batch in self._batches(batch_rows, tops):
                if batch.num_rows > batch_rows:
                    for start in range(0, batch.num_rows, batch_rows):
                        yield batch.slice(start, batch_rows)
                elif batch.num_rows:
                    yield batch
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise InputError(f"{self.label}: cannot read its rows as Arrow ({_first_line(exc)}); give the column "
                             "one type (e.g. all text), then run again") from None

    def _batches(self, batch_rows: int, tops: Sequence[str] | None) -> Iterator[pa.RecordBatch]:
        kind, value = self.kind, self.value
        if kind == "datasets.IterableDataset":
            yield from self._iterable_batches(batch_rows)
        elif kind == "datasets.Dataset":
            for table in value.with_format("arrow").iter(batch_size=batch_rows):
                yield from _as_batches(table)
        elif kind == "pandas.DataFrame":
            yield from _frame_batches(value, batch_rows, tops)
        elif kind == "polars.DataFrame":
            chosen = [c for c in value.columns if c in set(tops)] if tops is not None else value.columns
            if chosen:
                yield from _as_batches(value.select(chosen).to_arrow())
            else:  # none of its columns is asked for: its rows still count
                yield from _row_counts(len(value), batch_rows)
        elif kind == "pyarrow.Table":
            yield from value.to_batches(max_chunksize=batch_rows)
        elif kind == "pyarrow.dataset.Dataset":
            names = value.schema.names
            wanted = [c for c in names if c in set(tops)] if tops is not None else None
            # ordered: `to_batches` yields the fragments' batches in order (its threads read ahead)
            for batch in value.to_batches(columns=wanted, batch_size=batch_rows):
                yield batch if wanted != [] else next(_row_counts(batch.num_rows, batch_rows))
        elif kind == "pyarrow.RecordBatchReader":
            yield from self._reader_batches()
        else:  # pragma: no cover - `memory_input` takes only the kinds above
            raise InputError(f"{self.label}: cannot read a {kind}")

    def _iterable_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """An IterableDataset's batches: in the Arrow format while `datasets` can give them so; from where that
        fails on, and throughout for a dataset without features, as Python rows made Arrow a batch at a time (its
        Arrow format cannot join examples whose cells were typed apart, e.g. a null cell before a text one).
        At most `ITERABLE_BATCH_ROWS` a batch: a generator's examples are Python dicts until a batch is whole."""
        value, given = self.value, 0
        batch_rows = min(batch_rows, ITERABLE_BATCH_ROWS)
        if value.features is not None:
            try:
                for table in value.with_format("arrow").iter(batch_size=batch_rows):
                    yield from _as_batches(table)
                    given += table.num_rows
                return
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
                pass
        rest = value.skip(given) if given else value
        if value.features is not None and hasattr(rest, "decode"):  # images, audio: their stored form, as Arrow
            rest = rest.decode(False)
        schema = value.features.arrow_schema if value.features is not None else None
        for rows in rest.iter(batch_size=batch_rows):
            # without features each batch is typed by its own values (a batch of empty cells is null): the
            # reader takes batches typed apart, as a JSON file's
            table = pa.Table.from_pydict(rows, schema=schema)
            self._seen = self._seen or list(table.schema.names)  # its columns, told by its rows
            yield from _as_batches(table)

    def _reader_batches(self) -> Iterator[pa.RecordBatch]:
        """A RecordBatchReader's batches: the first pass from the reader, copied to a spool file as they pass;
        later passes from the spool."""
        if self._spool is not None:
            folder, path, complete = self._spool
            if not complete:
                raise InputError(f"{self.label}: a pyarrow.RecordBatchReader can be read once, and its first read "
                                 "stopped early; give a pyarrow.Table or a pyarrow.dataset.Dataset instead")
            with pa.memory_map(path) as source:
                spooled = pa.ipc.open_file(source)
                for index in range(spooled.num_record_batches):
                    yield spooled.get_batch(index)
            return
        folder = tempfile.mkdtemp(prefix="overlap-reader-")
        weakref.finalize(self, shutil.rmtree, folder, True)
        path = f"{folder}/rows.arrow"
        self._spool = (folder, path, False)
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, self.value.schema) as writer:
            for batch in self.value:
                writer.write_batch(batch)
                yield batch
        self._spool = (folder, path, True)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def _as_batches(table: Any) -> Iterator[pa.RecordBatch]:
    return iter(table.to_batches()) if isinstance(table, pa.Table) else iter([table])


def _frame_batches(frame: Any, batch_rows: int, tops: Sequence[str] | None) -> Iterator[pa.RecordBatch]:
    """A pandas frame a slice at a time, every slice typed by the whole column's schema (a slice of empty cells
    alone would otherwise be typed null, another of numbers int64), its index left out: the rows are its
    values, and a frame's own index is kept by the split it is given back (`split_of`)."""
    if tops is not None:
        frame = frame[[c for c in frame.columns if str(c) in set(tops)]]
        if not len(frame.columns):  # none of its columns is asked for: its rows still count
            yield from _row_counts(len(frame), batch_rows)
            return
    _refuse_repeated(frame.columns, "pandas.DataFrame")
    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    for start in range(0, max(len(frame), 1), batch_rows):
        piece = frame.iloc[start:start + batch_rows]
        yield from pa.Table.from_pandas(piece, schema=schema, preserve_index=False).to_batches()


def _row_counts(rows: int, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Batches of `rows` rows and no asked column (the projection reads its optional columns as null)."""
    for start in range(0, rows, batch_rows):
        yield pa.RecordBatch.from_pydict({"_": pa.nulls(min(batch_rows, rows - start))})


def _refuse_repeated(columns: Any, what: str) -> None:
    names = [str(c) for c in columns]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"{what}: column '{repeated[0]}' appears {names.count(repeated[0])} times; rename all but "
                         "one (or name another column)")


def _choose_split(value: Any, given: str, split: str | None) -> tuple[Any, str | None]:
    names = list(value.keys())
    if split is None:
        if len(names) == 1:
            return value[names[0]], names[0]
        raise InputError(f"{given} with splits {', '.join(names) or 'none'}: name one (split='train')")
    if split not in value:
        raise InputError(f"{given}: no split {split!r}; its splits: {', '.join(names) or 'none'}")
    return value[split], split


def memory_input(value: Any, split: str | None = None, label: str | None = None) -> MemoryInput:
    """`value` (an accepted in-memory type) wrapped to be read as a file; a MemoryInput as it is. `split` picks a
    DatasetDict's split (and is refused for anything else: nothing would be picked)."""
    if isinstance(value, MemoryInput):  # its split is chosen already
        return value
    given = kind_of(value)
    if given is None:
        raise InputError(f"a {type(value).__name__} is no dataset overlap can read; give a datasets.Dataset, "
                         "DatasetDict, IterableDataset, a pandas or polars DataFrame, a pyarrow Table, "
                         "RecordBatchReader or pyarrow.dataset.Dataset, or a file")
    chosen, original = None, value
    if given in DICT_KINDS:
        value, chosen = _choose_split(value, given, split)
    elif split is not None:
        raise InputError(f"split {split!r}: a {given} has no splits (split picks one of a DatasetDict); leave it "
                         "out")
    kind = kind_of(value)
    if kind is None or kind in DICT_KINDS:
        raise InputError(f"{given}: split {chosen!r} holds a {type(value).__name__}, not a dataset")
    fingerprint = getattr(value, "_fingerprint", None) if kind == "datasets.Dataset" else None
    rows = None
    if kind in ("datasets.Dataset", "pandas.DataFrame", "polars.DataFrame"):
        rows = len(value)
    elif kind == "pyarrow.Table":
        rows = value.num_rows
    return MemoryInput(value, kind, given, label or kind, chosen, fingerprint, rows, original=original)


class _Drift(Exception):
    """A batch whose types the first batch's schema cannot take."""


def write_parquet(memory: MemoryInput, path: str, group_rows: int = 65536) -> int:
    """Every row of `memory`, every column, written to one parquet file in row groups of `group_rows` (however the
    source cut its batches; memory is a row group); returns the rows written. The schema is the dataset's own
    where it has one (a `datasets` table's, with its features), else its first batch's; a stream whose batches
    were typed apart (an IterableDataset without features: a batch of empty cells is typed null) is written with
    the types they unify to."""
    try:
        return _write_parquet(memory, path, memory.schema(), group_rows)
    except _Drift:
        pass
    schemas: list[pa.Schema] = []
    for batch in memory.raw_batches(group_rows):
        if not any(batch.schema.equals(s) for s in schemas):
            schemas.append(batch.schema)
    try:
        target = pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, NotImplementedError) as exc:
        raise InputError(f"{memory.label}: its batches give a column types that do not agree ({_first_line(exc)}); "
                         "give it one type (an IterableDataset: features=...), then run again") from None
    return _write_parquet(memory, path, target, group_rows)


def _write_parquet(memory: MemoryInput, path: str, schema: pa.Schema | None, group_rows: int) -> int:
    import pyarrow.parquet as pq

    writer = None
    rows = 0
    held: list[pa.RecordBatch] = []
    try:
        for batch in memory.raw_batches(group_rows):
            schema = schema or batch.schema
            if not batch.schema.equals(schema):
                try:
                    batch = pa.Table.from_batches([batch]).cast(schema).combine_chunks().to_batches()[0]
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError):
                    raise _Drift() from None
            if writer is None:
                writer = pq.ParquetWriter(path, schema)
            held.append(batch)
            rows += batch.num_rows
            if sum(b.num_rows for b in held) >= group_rows:
                table = pa.Table.from_batches(held, schema=schema)
                writer.write_table(table.slice(0, group_rows), row_group_size=group_rows)
                held = table.slice(group_rows).to_batches()
        if writer is None:  # no rows: a file of the columns alone
            writer = pq.ParquetWriter(path, schema or pa.schema([]))
        if held:
            writer.write_table(pa.Table.from_batches(held, schema=schema), row_group_size=group_rows)
    finally:
        if writer is not None:
            writer.close()
    return rows


NAMED_ROLES = ("training", "benchmark", "reference", "dataset")


def named(value: Any, name: str, *, split: str | None = None, role: str | None = None) -> MemoryInput:
    """An in-memory dataset with the name reports give it (by default its type, `pandas.DataFrame`): pass the
    result wherever a dataset is taken, e.g. `overlap.compare(overlap.named(df, "my-mix"), "cybergym", ...)`.
    `split` picks a DatasetDict's split. `role` is what the atlas pairs it as (a declaration's roles:
    "training", the default, "benchmark", "reference" or "dataset"); compare and matrix take it where it is
    given."""
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise InputError(f"name {name!r}: give the dataset a name (text, no leading or trailing spaces)")
    if role is not None and role not in NAMED_ROLES:
        raise InputError(f"role {role!r}: use one of {', '.join(NAMED_ROLES)}")
    memory = memory_input(value, split)
    memory.label, memory.named, memory.role = name, True, role
    return memory
