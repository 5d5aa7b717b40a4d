"""A scan of parquet shards knows its total from the footers (no data read), so its progress bar shows the
share done and the time left; JSON lines have no such total."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from overlap import progress
from overlap.text.ngram.engines import known_rows, train_files


def _shards(folder, sizes):
    folder.mkdir()
    for index, size in enumerate(sizes):
        table = pa.table({"item_id": [f"t{index}-{i}" for i in range(size)], "text": ["a b c"] * size})
        pq.write_table(table, folder / f"part-{index}.parquet", row_group_size=7)
    return folder


def test_total_rows_from_parquet_footers(tmp_path):
    folder = _shards(tmp_path / "shards", [10, 25, 3])
    assert known_rows(train_files(folder)) == 38
    assert known_rows(train_files(folder / "part-1.parquet")) == 25
    (tmp_path / "lines").mkdir()
    (tmp_path / "lines" / "a.jsonl").write_text('{"item_id": "x", "text": "a"}\n')
    assert known_rows(train_files(tmp_path / "lines")) is None  # only a full read counts JSON lines
    assert known_rows(pa.table({"item_id": ["a", "b"]})) == 2


def test_bar_has_a_total_and_time_left(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(progress, "progress_enabled", lambda: True)
    monkeypatch.setattr(progress, "_stderr_console", lambda: Console(file=err, force_terminal=True, width=150))
    with progress.RowsBar("n-gram scan of shards.text", total=38) as bar:
        bar.update(19, 1000)
        task = bar._progress.tasks[0]
        assert task.total == 38 and task.completed == 19 and task.percentage == 50
        bar._progress.refresh()
    assert "19 of 38 rows" in err.getvalue() and "left" in err.getvalue()
    with progress.RowsBar("stream", total=None) as unknown:
        unknown.update(5, 10)
        assert unknown._progress.tasks[0].total is None
