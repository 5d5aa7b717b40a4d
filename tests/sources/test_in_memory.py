"""A training mix held in memory (a `datasets.Dataset`, DatasetDict, IterableDataset, pandas or polars frame,
pyarrow Table, RecordBatchReader or pyarrow dataset) is read as the same rows written to a parquet file are:
the same counts, the same filter decision, and the split given back in the form it came in, checked by the
independent verifier. The oracle of each form is the parquet file its own library writes of the same rows."""

from __future__ import annotations

import subprocess
import sys

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from in_memory_forms import FORMS, build, counts, quiet_datasets

import overlap
from overlap.api.demo import demo_data
from overlap.errors import InputError
from overlap.sources.formats import in_memory, in_memory_split
from overlap.sources.rows.generic import read_generic

ID = "extra_info.instance_id"
STREAMED = ("datasets.IterableDataset", "pyarrow.RecordBatchReader", "pyarrow.dataset.Dataset")


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    quiet_datasets()
    data = demo_data()
    table = pq.read_table(data["mimo-cyber"] / "cyber.parquet")
    return table, {k: data[k] for k in ("cybergym", "arvo")}


def _ids(table: pa.Table) -> list:
    return [row["extra_info"]["instance_id"] for row in table.to_pylist()]


@pytest.mark.parametrize("form", FORMS)
def test_compare_counts_the_rows_as_the_file(form, rows, tmp_path):
    table, data = rows
    value, path, split = build(form, table, tmp_path)
    on_file = overlap.compare(str(path), "cybergym", id_column=ID, data=data, pool=None)
    in_memory_result = overlap.compare(value, "cybergym", id_column=ID, data=data, pool=None, split=split)
    assert counts(in_memory_result)["benches"] == counts(on_file)["benches"]
    assert in_memory_result.train.item_count == on_file.train.item_count == len(set(_ids(table)) - {None})
    assert set(in_memory_result.pairs["train_id"]) == set(on_file.pairs["train_id"])
    # streamed by the key join as a file read by its columns is
    assert in_memory_result.train.totals is not None
    prov = in_memory_result.train.provenance
    assert prov.origin == "in-memory" and prov.name == (
        "datasets.Dataset" if form == "datasets.DatasetDict" else form)
    record = prov.to_dict()["in_memory"]
    assert record["type"] == form and record["rows"] == table.num_rows and record["split"] == split
    assert record["columns"] == table.column_names
    expected = value[split]._fingerprint if form == "datasets.DatasetDict" else getattr(value, "_fingerprint", None)
    assert record["fingerprint"] == (expected if form.startswith("datasets.") and "Iterable" not in form else None)
    assert [f.rows for f in prov.files] == [table.num_rows]


@pytest.mark.parametrize("form", FORMS)
def test_filter_gives_the_split_back_in_its_form(form, rows, tmp_path):
    table, data = rows
    value, path, split = build(form, table, tmp_path / "in")
    on_file = overlap.filter_train(str(path), ["cybergym"], tmp_path / "file", id_column=ID, data=data)
    got = overlap.filter_train(value, ["cybergym"], tmp_path / "memory", id_column=ID, data=data, split=split)
    dropped = set(on_file.decision.removed["row"])
    keep = np.array([i not in dropped for i in range(table.num_rows)])
    assert list(got.decision.removed["row"]) == list(on_file.decision.removed["row"])
    assert list(got.decision.removed["reasons"]) == list(on_file.decision.removed["reasons"])
    kept, removed = got.kept, got.removed
    kept_rows = table.filter(pa.array(keep)).to_pylist()
    if form == "datasets.DatasetDict":
        assert isinstance(kept, datasets.DatasetDict) and sorted(kept) == ["test", "train"]
        assert len(kept["test"]) == 0
        kept = kept["train"]
    if form in ("datasets.Dataset", "datasets.DatasetDict"):
        assert isinstance(kept, datasets.Dataset) and kept.features == datasets.Dataset(table).features
        assert kept.to_list() == kept_rows  # in input order
    elif form == "datasets.IterableDataset":
        assert isinstance(kept, datasets.IterableDataset) and list(kept) == kept_rows
    elif form == "pandas.DataFrame":
        assert isinstance(kept, pd.DataFrame) and list(kept.index) == list(value.index[keep])
        assert pa.Table.from_pandas(kept, preserve_index=False).to_pylist() == kept_rows
        assert list(removed.index) == list(value.index[~keep])
    elif form == "polars.DataFrame":
        assert type(kept).__module__.startswith("polars") and kept.to_arrow().to_pylist() == kept_rows
    elif form == "pyarrow.Table":
        assert isinstance(kept, pa.Table) and kept.to_pylist() == kept_rows
    elif form == "pyarrow.RecordBatchReader":
        assert isinstance(kept, pa.RecordBatchReader) and kept.read_all().to_pylist() == kept_rows
    else:
        assert type(kept).__name__.endswith("Dataset") and kept.to_table().to_pylist() == kept_rows
    # the removed rows, with why each went, in input order
    removed_table = removed if isinstance(removed, pa.Table) else in_memory.memory_input(removed).value
    if not isinstance(removed_table, pa.Table):
        removed_table = pa.Table.from_batches(list(in_memory.memory_input(removed).raw_batches(1000)))
    assert _ids(removed_table.drop_columns(list(in_memory_split.REASON_COLUMNS))) == _ids(table.filter(pa.array(~keep)))
    assert removed_table.column("overlap_reasons").to_pylist() == list(on_file.decision.removed["reasons"])
    # checked by the independent verifier, as returned, unless reading it would use it up
    check = got.report.verification.get("in_memory")
    if form == "pyarrow.RecordBatchReader":
        assert check is None
    else:
        assert check["rows_read"] == int(keep.sum()) and check["matches_found"] == 0
        assert check["reader"] == ["pyarrow (the split as returned, in memory)"]


@pytest.mark.parametrize("form", ["datasets.Dataset", "pandas.DataFrame", "pyarrow.Table"])
def test_keep_mask_is_the_filter_decision_for_your_own_pipeline(form, rows, tmp_path):
    table, data = rows
    value, path, _ = build(form, table, tmp_path / "in")
    mask = overlap.keep_mask(value, ["cybergym"], id_column=ID, data=data)
    split = overlap.filter_train(str(path), ["cybergym"], tmp_path / "file", id_column=ID, data=data)
    dropped = set(split.decision.removed["row"])
    assert mask.dtype == bool and mask.tolist() == [i not in dropped for i in range(table.num_rows)]
    assert overlap.keep_mask(str(path), ["cybergym"], id_column=ID, data=data).tolist() == mask.tolist()
    if form == "datasets.Dataset":
        kept = value.filter(lambda _, i: mask[i], with_indices=True)
        assert [r["extra_info"]["instance_id"] for r in kept] == _ids(table.filter(pa.array(mask)))
    elif form == "pandas.DataFrame":
        assert list(value[mask].index) == list(value.index[mask])
    else:
        assert value.filter(mask).num_rows == int(mask.sum())
    assert not list(tmp_path.glob("in/*/")), "keep_mask writes nothing"


def test_verifier_reads_the_split_as_returned(rows, tmp_path, monkeypatch):
    """A returned split that still held a benchmark's task would be caught: the verifier reads what is returned,
    not the files written beside it."""
    table, data = rows
    monkeypatch.setattr(sys.modules["overlap.api.filtering"], "kept_split", lambda memory, keep, shard: memory.value)
    with pytest.raises(InputError, match="filtered split still holds train row"):
        overlap.filter_train(table, ["cybergym"], tmp_path / "out", id_column=ID, data=data)


def test_named_inputs_and_two_of_one_type(rows):
    table, data = rows
    frame = table.to_pandas()
    result = overlap.compare(overlap.named(frame, "my-mix"), [table.slice(0, 4)], id_column=ID, data=data, pool=None)
    assert result.train.name == "my-mix" and result.benches[0].bench.name == "pyarrow.Table"
    twice = overlap.compare(frame, [frame.iloc[:4]], id_column=ID, data=data, pool=None)
    assert [twice.train.name, twice.benches[0].bench.name] == ["pandas.DataFrame", "pandas.DataFrame-2"]
    # the bench rows are the first four train rows: each is matched
    assert len(set(twice.benches[0].pairs["bench_id"])) == len(set(_ids(table.slice(0, 4))))
    with pytest.raises(InputError, match="named twice"):
        overlap.compare(overlap.named(frame, "x"), [overlap.named(frame, "x")], id_column=ID, data=data, pool=None)


@pytest.mark.parametrize(("value", "options", "message"), [
    (pd.DataFrame({"id": ["arvo:1"]}), {}, "read by its columns; name its id column"),
    (pd.DataFrame({"id": ["arvo:1"]}), {"id_column": "task"}, "pandas.DataFrame: no column 'task'; it has id"),
    (datasets.DatasetDict({"train": datasets.Dataset.from_dict({"id": ["arvo:1"]}),
                           "test": datasets.Dataset.from_dict({"id": ["arvo:2"]})}), {"id_column": "id"},
     "splits train, test: name one"),
    (datasets.DatasetDict({"train": datasets.Dataset.from_dict({"id": ["arvo:1"]})}),
     {"id_column": "id", "split": "dev"}, "no split 'dev'; its splits: train"),
    (pa.table({"id": ["arvo:1"]}), {"id_column": "id", "engine": "ray"}, "scanned in this process"),
    (pa.table({"id": [1.5]}).cast(pa.schema([("id", pa.decimal128(3, 1))])), {"id_column": "id"},
     "holds decimal128"),
    (pd.DataFrame({"id": ["arvo:1", 2, ["x"]]}), {"id_column": "id"}, "pandas.DataFrame: cannot read its rows"),
])
def test_bad_inputs_are_one_line_input_errors(value, options, message, rows):
    _, data = rows
    with pytest.raises(InputError, match=message) as caught:
        overlap.compare(value, "cybergym", data=data, pool=None, **options)
    assert "\n" not in str(caught.value)


def test_a_dataset_argument_of_another_type_is_refused(rows):
    with pytest.raises(InputError, match="got dict"):
        overlap.compare({"id": ["arvo:1"]}, "cybergym", id_column="id", data=rows[1])
    with pytest.raises(InputError, match="a DataFrame has no splits|has no splits"):
        overlap.compare(pd.DataFrame({"id": ["arvo:1"]}), "cybergym", id_column="id", split="train", data=rows[1])


def test_a_record_batch_reader_is_read_once_then_from_its_copy(rows):
    table, data = rows
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=3))
    memory = in_memory.memory_input(reader)
    first = pa.Table.from_batches(list(memory.raw_batches(4)))
    again = pa.Table.from_batches(list(memory.raw_batches(4)))
    assert first.to_pylist() == again.to_pylist() == table.to_pylist()


def test_iterable_dataset_without_features_is_typed_by_its_rows(rows, tmp_path):
    """Batches of a generator without features are each typed by their own values (a batch of empty cells is
    null): the split is written with the types they unify to."""
    _, data = rows
    cells = [None] * 3 + ["arvo:10055", "arvo:4242"]
    stream = datasets.IterableDataset.from_generator(lambda: ({"id": c, "n": None if i < 3 else i}
                                                             for i, c in enumerate(cells)))
    memory = in_memory.named(stream, "gen")
    split = overlap.filter_train(memory, ["cybergym"], tmp_path / "out", id_column="id", data=data)
    assert split.decision.source_rows == 5
    written = pq.read_table(tmp_path / "out" / split.report.shards[0])
    assert written.column("id").to_pylist() == [c for c in cells if c != "arvo:10055"]


def test_help_and_import_stay_free_of_datasets_and_pandas():
    code = ("import sys, overlap\n"
            "overlap.named\n"  # the in-memory entry points load without the libraries they read
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('datasets', 'polars')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_describe_and_report_name_what_was_given(rows, tmp_path):
    table, data = rows
    dataset = datasets.Dataset(table)
    result = overlap.compare(dataset, "cybergym", id_column=ID, data=data, pool=None)
    summary = result.summary()
    from overlap.outputs.published import describe_source

    line = describe_source(summary["train"]["provenance"])
    assert line == f"in-memory datasets.Dataset (fingerprint {dataset._fingerprint}, {table.num_rows} rows)"


def test_a_changed_stream_is_refused_by_the_split_writer(rows, tmp_path):
    """A generator that gives other rows the second time it is read: the split would not be the rows compared."""
    _, data = rows
    calls = []

    def rows_once():
        calls.append(1)
        yield from ({"id": f"arvo:{n}"} for n in range(3 if len(calls) == 1 else 4))

    stream = datasets.IterableDataset.from_generator(rows_once)
    with pytest.raises(InputError, match="must give the same rows each time"):
        overlap.filter_train(stream, ["cybergym"], tmp_path / "out", id_column="id", data=data, reasons=["id"])
    assert not (tmp_path / "out").exists()


def test_split_names_in_memory_shard_with_a_data_suffix(rows, tmp_path):
    table, data = rows
    split = overlap.filter_train(table, ["cybergym"], tmp_path / "out", id_column=ID, data=data)
    assert split.report.shards == ["data/pyarrow.Table.parquet"]
    assert pq.read_table(tmp_path / "out" / "data" / "pyarrow.Table.parquet").num_rows == split.report.kept_rows


def test_iterable_dataset_with_features_whose_cells_were_typed_apart(rows):
    """`datasets` cannot give such a stream in its Arrow format (a null cell before a text one): read on from
    there as rows, every row once and in order."""
    table, data = rows
    cells = [{"id": "arvo:10055", "note": None}, {"id": "arvo:10055", "note": ""}, {"id": "arvo:42", "note": "x"}]
    features = datasets.Features({"id": datasets.Value("string"), "note": datasets.Value("string")})
    stream = datasets.IterableDataset.from_generator(lambda: iter(cells), features=features)
    for size in (1, 2, 10):
        got = pa.Table.from_batches(list(in_memory.memory_input(stream).raw_batches(size))).to_pylist()
        assert got == cells
    result = overlap.compare(stream, "cybergym", id_column="id", data=data, pool=None)
    assert result.train.item_count == 2 and len(result.benches[0].pairs) == 1


@pytest.mark.parametrize("form", ["datasets.Dataset", "datasets.IterableDataset", "polars.DataFrame",
                                  "pyarrow.RecordBatchReader", "pyarrow.dataset.Dataset"])
def test_text_check_reads_every_form_as_a_frame(form, tmp_path):
    """`text_check` read a DataFrame, an Arrow table and batches; every other form gives what the frame gives."""
    text = "a heap buffer overflow when the parser reads a character reference past the end of the input"
    train = pa.table({"item_id": ["t1", "t2", "t3"], "text": [text, "nothing alike at all here", None]})
    bench = pa.table({"item_id": ["b1"], "text": [text.upper() + " again"]})
    expected = overlap.text_check(train.to_pandas(), bench.to_pandas(), "text", "text", ns=(8,))
    value, _, _ = build(form, train, tmp_path / "train")
    bench_value, _, _ = build(form, bench, tmp_path / "bench")
    got = overlap.text_check(value, bench_value, "text", "text", ns=(8,))
    assert got.flags.equals(expected.flags) and got.train_counts == expected.train_counts
    assert list(got.flags["train_id"]) == ["t1"]


def test_matrix_takes_in_memory_benchmarks_by_their_columns(rows, tmp_path):
    table, data = rows
    first, second = table.slice(0, 7), table.slice(4)
    on_file = []
    for name, part in (("first.parquet", first), ("second.parquet", second)):
        pq.write_table(part, tmp_path / name)
        on_file.append(read_generic(str(tmp_path / name), {"id": ID}))
    expected = overlap.matrix(on_file, data=data)
    got = overlap.matrix([overlap.named(first.to_pandas(), "first.parquet"),
                          overlap.named(datasets.Dataset(second), "second.parquet")], id_column=ID, data=data)
    assert got.cells.equals(expected.cells)
    with pytest.raises(InputError, match="read by its columns"):
        overlap.matrix([first, second], data=data)
