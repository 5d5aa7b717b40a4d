"""Row counts known before a scan: a parquet file's footer records its rows, so the total of a set of
parquet shards costs one metadata read per file (no data page is read; on the Hub, a ranged read of the
footer). Progress bars use it to show a total and the time left."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..places.naming import DataFile, data_format


def parquet_rows(files: Iterable[DataFile], filesystem: Any = None) -> int | None:
    """Rows of `files` summed from their parquet footers; None when one is not (uncompressed) parquet, whose
    rows only a full read can count, or when a footer cannot be read (the scan then reports the error)."""
    import pyarrow as pa  # imported here: keeps `overlap --help` fast
    import pyarrow.parquet as pq

    total = 0
    for data_file in files:
        fmt, compression = data_format(data_file.name or data_file.path)
        if fmt != "parquet" or compression:
            return None
        try:
            if filesystem is None:
                total += pq.read_metadata(data_file.path).num_rows
            else:
                with filesystem.open(data_file.path, "rb") as handle:
                    total += pq.read_metadata(handle).num_rows
        except (OSError, pa.ArrowInvalid):
            return None
    return total
