"""The corpus, grown by trying the tool as a hostile or careless user would: no network, looping links,
broken CSV, declarations of the wrong types, numbers as ids, huge or binary files, escapes in names, bad
cluster addresses and unreachable object stores. Every case keeps the command-line contract (one line, exit
2, never an "internal error", never a hang) and most are checked to answer quickly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from corpus_contract import FAST, cyber_data, data_args, invoke, run_checked

from overlap.errors import InputError, OverlapError
from overlap.sources.formats.batches import open_batches
from overlap.sources.places import hub_net
from overlap.sources.places.local_glob import expand_glob

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))
from fake_hub import make_hub_cache  # noqa: E402

DOWN = "http://127.0.0.1:1"  # nothing listens on port 1: a network that is down, without touching one


def _rows(*ids) -> str:
    return "".join(json.dumps({"id": i, "text": "a heap overflow"}) + "\n" for i in ids)


@pytest.fixture
def work(tmp_path):
    data = cyber_data(tmp_path / "data")
    train = tmp_path / "train.jsonl"
    train.write_text(_rows("arvo:10055", "arvo:1"))
    return tmp_path, data, train


def _compare(train, data, *extra) -> list:
    return ["compare", str(train), "cybergym", "--id-column", "id", *data_args(data, "cybergym", "arvo"),
            "--no-report", *FAST, *extra]


# --- the Hub without a network (HF_HUB_OFFLINE unset) ---------------------------------------------------


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", DOWN)
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "ENDPOINT", DOWN)
    hub_net._ANSWERS.clear()
    yield tmp_path
    hub_net._ANSWERS.clear()


def test_a_cached_hub_dataset_is_read_from_the_cache_when_the_network_is_down(work, no_network):
    root, data, train = work
    make_hub_cache(Path(os.environ["HF_HUB_CACHE"]), "me/mix", {"data/train.jsonl": train.read_bytes()}, "b" * 40)
    started = time.monotonic()
    run = run_checked("hub:cached-offline", _compare("me/mix", data, "--format", "json"), root=root, expect=0)
    assert time.monotonic() - started < 20
    assert json.loads(run.stdout)["train"]["provenance"]["origin"] == "hub-cache"


def test_an_uncached_hub_id_with_no_network_says_so_not_that_it_is_no_hub_id(work, no_network):
    root, data, _ = work
    for command in ("compare", "filter"):
        args = [command, "me/other", "cybergym", "--id-column", "id", *data_args(data, "cybergym", "arvo")]
        args += ["--no-report", *FAST] if command == "compare" else ["--out", "out"]
        run = run_checked(f"hub:uncached-offline-{command}", args, root=root, expect=2)
        assert "in the Hub cache" in run.first_line and "network is down" in run.first_line, run.first_line
        assert "not a" not in run.first_line


def test_an_uncached_hub_id_with_offline_set_says_it_is_not_cached(work):
    root, data, _ = work
    run = run_checked("hub:uncached-offline-flag", ["filter", "me/other", "cybergym", "--id-column", "id",
                                                    *data_args(data, "cybergym", "arvo"), "--out", "out"],
                      root=root, expect=2)
    assert "in the Hub cache" in run.first_line and "HF_HUB_OFFLINE" in run.first_line


def test_a_registered_dataset_with_no_network_fails_fast_without_retries(work, no_network):
    root, data, _ = work
    started = time.monotonic()
    run = run_checked("hub:registered-offline", ["compare", "mimo-cyber", "cybergym",
                                                 *data_args(data, "cybergym", "arvo"), "--no-report", *FAST],
                      root=root, expect=2)
    assert time.monotonic() - started < 15, "retried instead of failing fast"
    assert "in the Hub cache" in run.first_line and "Retrying" not in run.stderr


# --- globs and links ------------------------------------------------------------------------------------


def test_a_double_star_glob_reads_each_file_once_through_looping_links(work, tmp_path):
    root, data, train = work
    folder = tmp_path / "g" / "sub"
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(_rows("arvo:10055"))
    for name, target in (("self", "."), ("again", "."), ("up", "..")):
        os.symlink(target, folder / name)
    assert expand_glob(str(tmp_path / "g" / "**" / "*.jsonl")) == [folder / "a.jsonl"]
    run = run_checked("glob:self-links", _compare("g/**/*.jsonl", data, "--format", "json"), root=root, expect=0,
                      timeout=30)
    assert json.loads(run.stdout)["train"]["provenance"]["files"][0]["rows"] == 1
    assert len(json.loads(run.stdout)["train"]["provenance"]["files"]) == 1


def test_filter_takes_a_glob_that_compare_takes(work):
    root, data, train = work
    (root / "shards").mkdir()
    (root / "shards" / "a.jsonl").write_text(_rows("arvo:10055", "arvo:1"))
    (root / "shards" / "b.jsonl").write_text(_rows("arvo:2"))
    run_checked("glob:filter", ["filter", "shards/*.jsonl", "cybergym", "--id-column", "id",
                                  *data_args(data, "cybergym", "arvo"), "--out", "out"], root=root, expect=0)
    assert (root / "out" / "data" / "shards" / "b.jsonl").read_text() == _rows("arvo:2")


# --- CSV ------------------------------------------------------------------------------------------------


def test_a_csv_with_an_unclosed_quote_is_exit_2_naming_file_and_line(work):
    root, data, _ = work
    (root / "t.csv").write_text('id,text\narvo:10055,"abc\narvo:1,x\n')
    for side in ("train", "bench"):
        args = _compare("t.csv", data) if side == "train" else [
            "compare", "t2.jsonl", "t.csv", "--id-column", "id", *data_args(data, "arvo"), "--no-report", *FAST]
        (root / "t2.jsonl").write_text(_rows("arvo:10055"))
        run = run_checked(f"csv:unclosed-{side}", args, root=root, expect=2)
        assert "t.csv: line 2" in run.first_line and "quote" in run.first_line


def test_a_literal_quote_inside_an_unquoted_csv_cell_is_not_an_unclosed_quote(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('id,text\narvo:1,a 5" screen\narvo:2,"multi\nline"\n')
    assert sum(b.num_rows for b in open_batches(str(path), ["id"])) == 2


def test_a_csv_header_over_64_kib_is_read(work):
    root, data, _ = work
    (root / "wide.csv").write_text("x" * 70_000 + ",id\n1,arvo:10055\n")
    run = run_checked("csv:wide-header", _compare("wide.csv", data, "--format", "json"), root=root, expect=0)
    assert json.loads(run.stdout)["train"]["provenance"]["files"][0]["rows"] == 1


# --- declarations ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("field,value", [("aliases", '"abc"'), ("path", "5"), ("path", '["a", "b"]'),
                                         ("repo", "5"), ("title", "5"), ("detect", '"id"')])
def test_a_declaration_field_of_the_wrong_type_is_one_line_naming_it(work, field, value):
    root, data, train = work
    place = "" if field in ("path", "repo") else 'path = "train.jsonl"\n'
    (root / "d.toml").write_text(f'name = "mine"\n{place}{field} = {value}\n[columns]\nid = "id"\n')
    run = run_checked(f"decl:{field}", ["compare", "mine", "cybergym", "--registry", "d.toml",
                                        *data_args(data, "cybergym", "arvo"), "--no-report", *FAST],
                      root=root, expect=2)
    assert "d.toml" in run.first_line and field in run.first_line


def test_a_declaration_title_cannot_write_terminal_escapes(work):
    root, _, _ = work
    (root / "d.toml").write_text('name = "mine"\ntitle = "x \\u001b]0;owned\\u0007 \\u001b[31mred \\u202e"\n'
                                 'path = "train.jsonl"\n[columns]\nid = "id"\n')
    run = run_checked("decl:escapes", ["datasets", "--registry", "d.toml"], root=root, expect=0)
    assert "\x1b" not in run.stdout + run.stderr and "\x07" not in run.stdout and "\u202e" not in run.stdout
    assert "mine" in run.stdout


# --- numbers as ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize("ids", [[10055, 10055.0], [12345678901234567890], [10055, "arvo:1"]])
def test_json_number_ids_in_a_benchmark_are_read(work, ids):
    root, data, train = work
    (root / "bench.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))
    (root / "bench.json").write_text(json.dumps([{"id": i} for i in ids]))
    for bench in ("bench.jsonl", "bench.json"):
        args = ["compare", "train.jsonl", bench, "--id-column", "id", "--id-scheme", "ossfuzz",
                *data_args(data, "arvo"), "--no-report", "--format", "json", *FAST]
        run = run_checked(f"ids:numbers-{bench}", args, root=root, expect={0, 2})
        if run.code == 0:
            assert "e+19" not in run.stdout and "10055.0" not in run.stdout


def test_a_20_digit_json_integer_keeps_every_digit(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text('{"id": 12345678901234567890}\n')
    values = [v for b in open_batches(str(path), ["id"]) for v in b.column(0).to_pylist()]
    assert [str(v) for v in values] == ["12345678901234567890"]


# --- huge, binary and strange text ----------------------------------------------------------------------


def test_a_2gb_sparse_jsonl_is_refused_before_it_is_read(work):
    root, data, _ = work
    sparse = root / "sparse.jsonl"
    with open(sparse, "wb") as handle:
        handle.truncate(2 << 30)  # a hole: no 2 GB written
    started = time.monotonic()
    run = run_checked("huge:sparse", _compare("sparse.jsonl", data), root=root, expect=2, subprocess_run=True,
                      timeout=60)
    assert time.monotonic() - started < 30
    assert "sparse.jsonl" in run.first_line


def test_a_line_longer_than_the_cap_is_refused_while_streaming(tmp_path, monkeypatch):
    from overlap.sources.formats import json_rows
    from overlap.sources.places import streams

    monkeypatch.setattr(streams, "MAX_LINE_BYTES", 1 << 16)
    monkeypatch.setattr(json_rows, "MAX_LINE_BYTES", 1 << 16)
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"id": "a", "t": "x" * (1 << 17)}) + "\n")
    with pytest.raises(InputError, match="line 1 is longer than"):
        list(streams.capped_lines(open(path, "rb"), "long.jsonl", 1 << 16))


def test_a_lone_surrogate_escape_in_a_text_field_is_read(work):
    root, data, _ = work
    (root / "s.jsonl").write_text('{"id": "arvo:10055", "text": "bad \\ud800 text"}\n')
    args = ["ngram", "s.jsonl", "cybergym", "--id-column", "id", "--text", "text:description",
            *data_args(data, "cybergym", "arvo"), "--out", "out"]
    run_checked("text:lone-surrogate", args, root=root, expect=0)
    run_checked("text:lone-surrogate-compare", _compare("s.jsonl", data), root=root, expect=0)


# --- engines and URIs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("address", ["not an address", "127.0.0.1:1", "ray://127.0.0.1:1", "host:99999"])
def test_a_bad_or_dead_ray_address_is_one_line_in_seconds(address):
    from overlap.reach import check_ray_address

    started = time.monotonic()
    with pytest.raises(OverlapError, match="ray-address"):
        check_ray_address(address)
    assert time.monotonic() - started < 10


def test_a_ray_address_from_the_environment_is_checked_before_ray_starts(work, monkeypatch):
    pytest.importorskip("ray")
    root, _, train = work
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    started = time.monotonic()
    run = run_checked("ray:env-address", ["ngram", "train.jsonl", "train.jsonl", "--id-column", "id", "--text",
                                          "text:text", "--engine", "ray", "--out", "out"], root=root, expect=2)
    assert time.monotonic() - started < 30 and "127.0.0.1:1" in run.first_line


def test_an_unreachable_object_store_fails_in_seconds(work, monkeypatch):
    import pyarrow.fs as pafs

    from overlap.text.ngram import remote

    root, data, _ = work

    class Unreachable(pafs.LocalFileSystem):  # stands for a cloud store whose requests fail
        pass

    def fail(uri):
        raise OSError(f"Could not connect to {uri}")

    monkeypatch.setattr(remote, "uri_filesystem", fail)
    monkeypatch.setattr("overlap.text.ngram.engines.uri_filesystem", fail)
    run = run_checked("uri:unreachable", ["ngram", "gs://bucket/x.parquet", "cybergym", "--id-column", "id",
                                          "--text", "text:description", *data_args(data, "cybergym", "arvo"),
                                          "--out", "out"], root=root, expect=2)
    assert "gs://bucket/x.parquet" in run.first_line


def test_sigterm_ends_a_blocked_listing_at_once(tmp_path):
    code = textwrap.dedent("""
        import signal, sys, time
        from overlap.text.ngram.remote import interruptible
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
        print("ready", flush=True)
        interruptible(lambda: time.sleep(120), "blocked")
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    assert proc.stdout.readline().strip() == "ready"
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    assert time.monotonic() - started < 5


def test_a_folder_of_shards_holding_a_csv_filters_and_reads_back(work):
    root, data, _ = work
    (root / "mix").mkdir()
    (root / "mix" / "a.csv").write_text("id,text\narvo:10055,x\narvo:2,y\n")
    (root / "mix" / "b.jsonl").write_text(_rows("arvo:3"))
    run = invoke("filter:csv-in-folder", ["filter", "mix", "cybergym", "--id-column", "id",
                                          *data_args(data, "cybergym", "arvo"), "--out", "out"], root=root)
    assert "internal error" not in run.stderr and "PAR1" not in run.stderr, run.stderr
