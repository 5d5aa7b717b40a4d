"""The same rows in every in-memory form `overlap` reads, each beside the parquet file its own library writes
of them (what a user would have written to disk), and what may differ between the two result folders.

`build(form, table, folder)` gives (the in-memory value, the parquet path, the split to name).
`normalised_folder(folder, label)` reads a result folder as {relative path: bytes} with the train's provenance
left out: the one thing that legitimately differs (an in-memory input has no path or sha256, the file no type,
fingerprint or in-memory columns). The in-memory input is named as the file is (`overlap.named`), so every
other byte, the label included, must be the same.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import datasets
import pandas as pd
import polars
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

FORMS = ("datasets.Dataset", "datasets.DatasetDict", "datasets.IterableDataset", "pandas.DataFrame",
         "polars.DataFrame", "pyarrow.Table", "pyarrow.RecordBatchReader", "pyarrow.dataset.Dataset")


def quiet_datasets() -> None:
    datasets.disable_progress_bars()  # its bars on stderr are not what a test reads


def build(form: str, table: pa.Table, folder: Path):
    """(the rows of `table` as `form`, the parquet file of the same rows written by that form's library, the
    split to name)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{form}.parquet"
    if form.startswith("datasets."):
        dataset = datasets.Dataset(table)
        dataset.to_parquet(str(path))
        if form == "datasets.DatasetDict":
            return datasets.DatasetDict({"train": dataset, "test": dataset.select([])}), path, "train"
        if form == "datasets.IterableDataset":
            rows = table.to_pylist()
            return datasets.IterableDataset.from_generator(lambda: iter(rows), features=dataset.features), path, None
        return dataset, path, None
    if form == "pandas.DataFrame":
        frame = table.to_pandas()
        frame.index = frame.index * 3 + 7  # an index of its own: the rows are its values, never the index
        frame.to_parquet(path, index=False)
        return frame, path, None
    if form == "polars.DataFrame":
        frame = polars.from_arrow(table)
        frame.write_parquet(path)
        return frame, path, None
    pq.write_table(table, path)
    if form == "pyarrow.Table":
        return table, path, None
    if form == "pyarrow.RecordBatchReader":
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=5)), path, None
    return pads.dataset(table), path, None


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _without_train_provenance(value, label: str):
    """JSON with every provenance record of the train side (named `label`) replaced by a marker."""
    if isinstance(value, dict):
        if value.get("name") == label and "origin" in value and "files" in value:
            return "<train provenance>"
        return {k: _without_train_provenance(v, label) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_train_provenance(v, label) for v in value]
    return value


def normalised_folder(folder: Path, label: str) -> dict[str, bytes]:
    """The result folder with the train's provenance (named `label`) replaced by a marker: its records in the
    JSON files, and its row of the reports' provenance table (origin, place or type, sha256); every other byte
    as written."""
    out = {}
    for name, data in folder_bytes(folder).items():
        if name.endswith(".json"):
            data = json.dumps(_without_train_provenance(json.loads(data), label), sort_keys=True).encode()
        elif name in ("report.md", "report.html"):
            row = re.compile(rb"^.*(?:\| |<td>)train: " + re.escape(html.escape(label).encode()) + rb"(?: \||</td>).*$",
                             re.MULTILINE)
            data, found = row.subn(b"<train provenance row>", data)
            assert found == 1, (name, found)
        out[name] = data
    return out


def counts(result) -> dict:
    """What a user reads first: items, matched bench items and pairs per benchmark."""
    return {"train_items": result.train.item_count,
            "benches": {b.bench.name: (len(set(b.pairs["bench_id"])), len(b.pairs)) for b in result.benches}}


def frame_of(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)
