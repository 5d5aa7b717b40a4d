"""An id column of decimals, dates or times is refused naming the file, as one of lists or bytes is: read as no
id, beside repo and PR columns its rows were named by those alone, and a decimal 10055 that is a benchmark's
OSS-Fuzz issue kept its row in the filtered split."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api import filter_train
from overlap.api.demo import demo_data
from overlap.errors import InputError

COLUMNS = {
    "decimal": pa.array([decimal.Decimal("10055"), decimal.Decimal("5")], pa.decimal128(10, 0)),
    "timestamp": pa.array([datetime.datetime(2020, 1, 1)] * 2, pa.timestamp("us")),
    "date": pa.array([datetime.date(2020, 1, 1)] * 2, pa.date32()),
}

COLUMN_OPTIONS = {"id": "id", "repo": "repo", "pr": "pr", "scheme": "ossfuzz"}


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_an_id_column_of_decimals_or_times_is_refused_before_anything_is_written(tmp_path, kind):
    train = tmp_path / "mine.parquet"
    pq.write_table(pa.table({"id": COLUMNS[kind], "repo": ["a/b", "c/d"], "pr": [1, 2]}), train)
    with pytest.raises(InputError, match=r"^mine\.parquet: column 'id' holds .* values, not ids; write the column "
                                         "as text or integers"):
        filter_train(str(train), ["cybergym"], tmp_path / "out", data=demo_data(), columns=COLUMN_OPTIONS)
    assert not (tmp_path / "out").exists()


def test_the_same_ids_as_integers_are_filtered(tmp_path):
    train = tmp_path / "mine.parquet"
    pq.write_table(pa.table({"id": pa.array([10055, 5], pa.int64()), "repo": ["a/b", "c/d"], "pr": [1, 2]}), train)
    _, filtered, _ = filter_train(str(train), ["cybergym"], tmp_path / "out", data=demo_data(), columns=COLUMN_OPTIONS)
    assert filtered.removed["item_id"].tolist() == ["10055"]
