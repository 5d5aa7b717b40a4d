"""Dataset names that look like Hub ids but are not valid ones (non-ASCII letters, `..`, `--`, a leading or
trailing `.`/`-`, too long) are one line, never the Hub client's validation error; a `file://` URI of a real
file reads that file, for compare and for the n-gram scan."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from corpus_contract import FAST, run_checked
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.sources.places.naming import parse_hub_id

NOT_HUB_IDS = ["ownér/data", "owner/dätä", "владелец/набор", "owner/数据", "a/..", "a..b/c", "a/b..c", "a--b/c",
               "-a/b", "a/b-", "a./b", "a/.b", "x" * 97 + "/b"]

ROWS = [{"id": f"CVE-2020-{i:04d}", "text": f"words about the bug number {i} in the parser"} for i in range(4)]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("name", NOT_HUB_IDS)
@pytest.mark.parametrize("side", ["train", "bench"])
def test_invalid_hub_id_is_one_line(name, side, tmp_path):
    _write(tmp_path / "ok.jsonl", ROWS)
    pair = [name, "ok.jsonl"] if side == "train" else ["ok.jsonl", name]
    run = run_checked(f"hub-id:{name}", ["compare", "--id-column", "id", "--no-report", *FAST, "--", *pair],
                      root=tmp_path, expect=2)
    assert name in run.first_line, run.first_line


def _hub_valid(text: str) -> bool:
    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ09_.-é/", min_size=3, max_size=12).filter(lambda t: t.count("/") == 1))
def test_hub_id_parsing_agrees_with_the_hub_rule(text):
    """An `owner/name` taken as a Hub id is one the Hub's own validator accepts; one it accepts is taken, unless
    its owner starts with `_`, `.` or `-` (no Hub account does)."""
    taken = parse_hub_id(text) is not None
    if taken:
        assert _hub_valid(text), text
    elif text[0].isascii() and text[0].isalnum():
        assert not _hub_valid(text), text


def test_valid_hub_ids_still_parse():
    assert parse_hub_id("owner/name.v2_x-y:config@main") == ("owner/name.v2_x-y", "config", "main")
    assert parse_hub_id("hf://datasets/a/b@0123abc") == ("a/b", None, "0123abc")


def _uris(path):
    quoted = urllib.parse.quote(str(path))
    return {"file-three-slashes": f"file://{quoted}", "file-localhost": f"file://localhost{quoted}",
            "file-upper": f"FILE://{quoted}"}


@pytest.mark.parametrize("form", ["file-three-slashes", "file-localhost", "file-upper"])
def test_file_uri_of_a_real_file_reads_it(form, tmp_path):
    train = tmp_path / "my train.jsonl"  # a space: percent-encoded in the URI
    _write(train, ROWS)
    _write(tmp_path / "bench.jsonl", ROWS[1:3])
    uri = _uris(train)[form]
    compare = ["compare", "--id-column", "id", "--no-report", "--format", "json", *FAST]
    by_path = run_checked("compare-path", [*compare, train.name, "bench.jsonl"], root=tmp_path, expect=0)
    by_uri = run_checked(f"compare-{form}", [*compare, uri, "bench.jsonl"], root=tmp_path, expect=0)
    matched = [json.loads(r.stdout)["benches"][0]["bench_items_matched"] for r in (by_path, by_uri)]
    assert matched == [2, 2]  # the two bench rows are rows of the train file
    ngram = ["ngram", "--field", "text:text", "--id-column", "id", "--format", "json"]
    scans = [run_checked(f"ngram-{what}", [*ngram, train_arg, "bench.jsonl"], root=tmp_path, expect=0)
             for what, train_arg in (("path", train.name), (form, uri))]
    assert json.loads(scans[0].stdout)["train"] == json.loads(scans[1].stdout)["train"]
    assert json.loads(scans[1].stdout)["train"]["items"] == len(ROWS)


def test_file_uri_of_another_host_is_one_line(tmp_path):
    _write(tmp_path / "bench.jsonl", ROWS)
    run = run_checked("file-uri-host", ["compare", "file://example.org/data.jsonl", "bench.jsonl", "--id-column", "id",
                                        "--no-report", *FAST], root=tmp_path, expect=2)
    assert "file://example.org/data.jsonl" in run.first_line
