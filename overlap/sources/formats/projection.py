"""How an asked column is taken from a file's schema: a top-level column, or a dotted path into it.

A dotted name (`extra_info.instance_id`) is a column of that literal name when the file has one, else a
path into structs (a numeric part indexes a list: `prompt.0.content`). A missing column is an InputError
naming the file and the column, and listing the columns the file has.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from .json_rows import ABSENT


class _Projection:
    """How each asked column is taken from a file's schema: a top-level column, or a path into it."""

    def __init__(self, name: str, top: str, path: list[str]) -> None:
        self.name, self.top, self.path = name, top, path

    @property
    def leaf(self) -> str:
        """The parquet column path to read (`extra_info.instance_id`: only that leaf of the struct)."""
        return ".".join([self.top, *self.path]) if self.path and not any(_index(p) for p in self.path) \
            else self.top

    def take(self, table_or_batch) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        array = table_or_batch.column(self.top)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        for part in self.path:
            if pa.types.is_struct(array.type):
                array = pc.struct_field(array, [part])
            else:  # a list too short (or null) has no element there: a null cell, as in a JSON row
                index = int(part)
                long_enough = pc.greater(pc.list_value_length(array), index)
                array = pc.list_element(pc.if_else(long_enough, array, pa.scalar(None, array.type)), index)
        return array


def _index(part: str) -> bool:
    """Whether a dotted-path part is a list index: ASCII digits an int64 holds (`str.isdigit` also takes `²`
    and `０`, which int() then refuses or reads, and a longer number overflows pyarrow's index)."""
    return part.isascii() and part.isdigit() and len(part) <= 18


def _plan(schema, columns: list[str], optional: set[str], file_name: str) -> list[_Projection | None]:
    """The projection of each asked column in a file with `schema` (None: an optional column it lacks)."""
    import pyarrow as pa

    plans: list[_Projection | None] = []
    names = schema.names
    for column in columns:
        for top in {column, column.split(".")[0]}:
            if names.count(top) > 1:  # which of them is meant cannot be told: never pick one silently
                raise InputError(f"{file_name}: column '{top}' appears {names.count(top)} times; rename all but "
                                 "one (or name another column)")
        if column in names:
            plans.append(_Projection(column, column, []))
            continue
        parts = column.split(".")
        plan = None
        if parts[0] in names:
            kind = schema.field(parts[0]).type
            for part in parts[1:]:
                if pa.types.is_struct(kind) and kind.get_field_index(part) >= 0:
                    kind = kind.field(part).type
                elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and _index(part):
                    kind = kind.value_type
                else:
                    break
            else:
                plan = _Projection(column, parts[0], parts[1:])
        if plan is None and column not in optional:
            raise InputError(f"{file_name}: no column '{column}'; the file has {_describe(schema)}; every file read "
                             "must have it (reading on would leave this file's rows out): add it, name the column "
                             "the files have, or move this file out of the set")
        plans.append(plan)
    return plans


def _describe(schema) -> str:
    """The columns of a schema, with one level of struct fields (`extra_info.{instance_id, …}`)."""
    import pyarrow as pa

    out = []
    for item in schema:
        if pa.types.is_struct(item.type):
            inner = ", ".join(item.type.field(i).name for i in range(item.type.num_fields))
            out.append(f"{item.name}.{{{inner}}}")
        else:
            out.append(item.name)
    shown = ", ".join(out[:20])
    return (shown + f", … ({len(out)} columns)") if len(out) > 20 else (shown or "no columns")


def absent(field) -> bool:
    """Whether a batch's column is one its file does not have (its nulls are no cells: `ABSENT`)."""
    return bool(field.metadata) and field.metadata.get(b"overlap.absent") == b"1"


def _batch(source, plans: list[_Projection | None], columns: list[str]):
    import pyarrow as pa

    arrays = [plan.take(source) if plan else pa.nulls(source.num_rows, pa.string()) for plan in plans]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([
        pa.field(name, array.type, metadata=None if plan else ABSENT)
        for name, array, plan in zip(columns, arrays, plans, strict=True)]))
