"""open_batches: local files, folders, globs and Hub datasets (a fake Hub, a Hub cache), streamed with projection."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from fake_hub import FakeHubFileSystem, make_hub_cache, make_repo

from overlap.errors import HubUnavailableError, InputError
from overlap.sources.formats.batches import open_batches
from overlap.sources.places.card import choose_files
from overlap.sources.places.naming import parse_hub_id

ROWS = [
    {"extra_info": {"instance_id": f"arvo_{1000 + i}", "instance_json": "{}"}, "repo": "o/r", "n": i}
    for i in range(25)
]


def _table(rows=ROWS):
    return pa.Table.from_pylist(rows)


def _read(source, columns, **kw):
    batches = list(open_batches(source, columns, **kw))
    return pa.Table.from_batches(batches).to_pydict() if batches else {}


def _write_jsonl(path, rows=ROWS, opener=open):
    with opener(path, "wt") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def test_parquet_projection_of_a_nested_leaf(tmp_path):
    path = tmp_path / "train.parquet"
    pq.write_table(_table(), path, row_group_size=7)
    source = open_batches(path, ["extra_info.instance_id", "n"], batch_rows=5)
    batches = list(source)
    assert all(b.num_rows <= 5 for b in batches)
    assert batches[0].schema.names == ["extra_info.instance_id", "n"]
    table = pa.Table.from_batches(batches)
    assert table.column("extra_info.instance_id").to_pylist() == [r["extra_info"]["instance_id"] for r in ROWS]
    prov = source.provenance
    assert prov.origin == "local-file" and prov.name == "train.parquet"
    assert prov.files[0].rows == 25 and len(prov.files[0].sha256) == 64


@pytest.mark.parametrize("suffix,opener", [(".jsonl", open), (".jsonl.gz", gzip.open),
                                           (".jsonl.zst", lambda p, m: zstandard.open(p, m))])
def test_jsonl_plain_and_compressed(tmp_path, suffix, opener):
    path = _write_jsonl(tmp_path / f"rows{suffix}", opener=opener)
    got = _read(path, ["extra_info.instance_id", "repo"], batch_rows=10)
    assert got["extra_info.instance_id"] == [r["extra_info"]["instance_id"] for r in ROWS]
    assert got["repo"] == ["o/r"] * 25


def test_json_array_and_mixed_types(tmp_path):
    rows = [{"task_id": "arvo:1", "n": 1}, {"task_id": 2, "n": "x"}, {"task_id": 3.0, "n": None}]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows, indent=1))
    assert _read(path, ["task_id"])["task_id"] == ["arvo:1", "2", "3"]
    lines = _write_jsonl(tmp_path / "mixed.jsonl", rows)
    assert _read(lines, ["task_id"])["task_id"] == ["arvo:1", "2", "3"]


def test_csv_cells_are_text_as_written(tmp_path):
    path = tmp_path / "test.csv"
    path.write_text("instance_id,pull_number,text\nkeras-team__keras-1,19284.0,\"a,\nb\"\nx__y-2,,t\n")
    got = _read(path, ["instance_id", "pull_number"])
    assert got == {"instance_id": ["keras-team__keras-1", "x__y-2"], "pull_number": ["19284.0", None]}
    gz = tmp_path / "test.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert _read(gz, ["instance_id"])["instance_id"] == got["instance_id"]


def test_folder_and_glob_and_split(tmp_path):
    folder = tmp_path / "mix"
    (folder / "data").mkdir(parents=True)
    pq.write_table(_table(ROWS[:10]), folder / "data" / "train-00000-of-00002.parquet")
    pq.write_table(_table(ROWS[10:]), folder / "data" / "train-00001-of-00002.parquet")
    _write_jsonl(folder / "data" / "test.jsonl", ROWS[:3])
    (folder / "README.md").write_text("not data")
    source = open_batches(folder, ["n"], split="train")
    assert pa.Table.from_batches(list(source)).column("n").to_pylist() == list(range(25))
    assert [f.path for f in source.provenance.files] == ["data/train-00000-of-00002.parquet",
                                                         "data/train-00001-of-00002.parquet"]
    assert source.provenance.origin == "local-folder" and source.label == "mix"
    assert len(_read(folder, ["n"])["n"]) == 28
    assert _read(str(folder / "data" / "*.parquet"), ["n"])["n"] == list(range(25))


def test_missing_column_names_file_and_columns(tmp_path):
    path = tmp_path / "train.parquet"
    pq.write_table(_table(), path)
    with pytest.raises(InputError, match=r"train.parquet: no column 'extra_info.task'.*extra_info\.\{instance_id"):
        list(open_batches(path, ["extra_info.task"]))
    got = _read(path, ["n"], optional=["fix_commit"])
    assert got["fix_commit"] == [None] * 25
    lines = _write_jsonl(tmp_path / "rows.jsonl")
    with pytest.raises(InputError, match=r"rows.jsonl: no column 'id'.*extra_info"):
        list(open_batches(lines, ["id"]))


def test_unreadable_files(tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="broken.parquet: cannot read the file as parquet"):
        list(open_batches(bad, ["n"]))
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"id": 1}\n{"id": \n')
    with pytest.raises(InputError, match="bad.jsonl: line 2: invalid JSON"):
        list(open_batches(lines, ["id"]))
    with pytest.raises(InputError, match="no such file, folder or glob"):
        open_batches(tmp_path / "nothing.parquet", ["id"])
    with pytest.raises(InputError, match="unsupported file type"):
        open_batches(tmp_path.joinpath("notes.txt").resolve() if (tmp_path / "notes.txt").write_text("x") else "",
                     ["id"])


def test_long_json_lines_fall_back_to_the_python_reader(tmp_path, monkeypatch):
    import overlap.sources.formats.file_batches as file_batches

    monkeypatch.setattr(file_batches, "_JSON_BLOCK", 64)
    rows = [{"id": f"arvo:{i}", "text": "x" * 500} for i in range(5)]
    assert _read(_write_jsonl(tmp_path / "long.jsonl", rows), ["id"])["id"] == [r["id"] for r in rows]


def test_parse_hub_id():
    assert parse_hub_id("me/mix") == ("me/mix", None, None)
    assert parse_hub_id("me/mix:cyber@v1.0") == ("me/mix", "cyber", "v1.0")
    assert parse_hub_id("me/mix@" + "a" * 40 + ":cyber") == ("me/mix", "cyber", "a" * 40)
    assert parse_hub_id("hf://datasets/me/mix@main") == ("me/mix", None, "main")
    assert parse_hub_id("not a hub id") is None and parse_hub_id("mix") is None


def test_choose_files_by_card_and_convention():
    names = ["README.md", "cyber.parquet", "swe/train-0.parquet", "swe/test-0.parquet", ".gitattributes"]
    card = {"configs": [{"config_name": "cyber", "data_files": [{"split": "train", "path": "cyber.parquet"}]},
                        {"config_name": "swe", "data_files": [{"split": "train", "path": "swe/train-*"},
                                                              {"split": "test", "path": "swe/test-*"}]}]}
    assert choose_files(names, card, "swe", "test", "x") == ["swe/test-0.parquet"]
    assert choose_files(names, card, "cyber", None, "x") == ["cyber.parquet"]
    with pytest.raises(InputError, match="configs cyber, swe; name one"):
        choose_files(names, card, None, None, "x")
    assert choose_files(names, None, "swe", "train", "x") == ["swe/train-0.parquet"]
    assert choose_files(names, None, None, None, "x") == ["cyber.parquet", "swe/test-0.parquet",
                                                          "swe/train-0.parquet"]


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def fake_hub(tmp_path):
    local = tmp_path / "src.parquet"
    pq.write_table(_table(), local)
    card = (b"---\nconfigs:\n- config_name: cyber\n  data_files:\n  - split: train\n    path: cyber.parquet\n"
            b"---\n# card\n")
    make_repo(tmp_path / "hub", "me/mix", {"cyber.parquet": local, "README.md": card, "other.parquet": local},
              sha=SHA)
    return FakeHubFileSystem(tmp_path / "hub", {("me/mix", "main"): SHA, ("me/mix", "v1"): SHA})


def test_hub_dataset_through_a_fake_filesystem(fake_hub):
    source = open_batches("me/mix:cyber@v1", ["extra_info.instance_id"], filesystem=fake_hub)
    table = pa.Table.from_batches(list(source))
    assert table.column(0).to_pylist()[:2] == ["arvo_1000", "arvo_1001"]
    prov = source.provenance
    assert (prov.origin, prov.repo_id, prov.revision, prov.name) == ("hub", "me/mix", SHA, "me/mix")
    assert [(f.path, f.rows, len(f.sha256)) for f in prov.files] == [("cyber.parquet", 25, 64)]
    assert any(p.endswith("cyber.parquet") for p in fake_hub.opened)
    assert not any("other.parquet" in p for p in fake_hub.opened)
    with pytest.raises(InputError, match="revision 'nope' not found"):
        open_batches("me/mix@nope", ["n"], filesystem=fake_hub)


def test_hub_cache_offline(tmp_path, monkeypatch):
    local = tmp_path / "src.parquet"
    pq.write_table(_table(), local)
    cache = tmp_path / "hubcache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    make_hub_cache(cache, "me/mix", {"data/train-00000-of-00001.parquet": local}, SHA)
    source = open_batches("me/mix", ["extra_info.instance_id"], split="train")
    assert len(pa.Table.from_batches(list(source))) == 25
    prov = source.provenance
    assert (prov.origin, prov.revision) == ("hub-cache", SHA)
    assert prov.files[0].path == "data/train-00000-of-00001.parquet" and len(prov.files[0].sha256) == 64
    with pytest.raises(HubUnavailableError, match="no snapshot of this revision is in the Hub cache"):
        open_batches("me/other", ["n"])


def test_hub_cache_says_which_revisions_it_holds_and_when_it_holds_no_data(tmp_path, monkeypatch):
    cache = tmp_path / "hubcache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = pa.BufferOutputStream()
    pq.write_table(_table(), data)
    # downloaded by sha only: no ref names main, and which snapshot is meant is the user's to say
    make_hub_cache(cache, "me/bysha", {"train.parquet": data.getvalue().to_pybytes()}, "b" * 40, refs=())
    with pytest.raises(HubUnavailableError, match=f"read a revision it holds \\(me/bysha@{'b' * 40}\\)"):
        open_batches("me/bysha", ["n"])
    assert len(_read(f"me/bysha@{'b' * 40}", ["n"])["n"]) == 25
    # the card alone was downloaded: a partial download to fill, not a dataset without data
    make_hub_cache(cache, "me/cardonly", {"README.md": b"---\nlicense: mit\n---\n"}, SHA)
    with pytest.raises(HubUnavailableError, match="holds no data file of this dataset .*README.md.*run once with"):
        open_batches("me/cardonly", ["n"])
