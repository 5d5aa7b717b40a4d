"""A CSV training file that is not UTF-8 is refused by `compare` as by `filter`, wherever the bad byte sits:
the streamed reader converts only the id column, so a latin-1 byte in another column must still stop it
(the filter, which copies whole records, refuses the same file)."""

from __future__ import annotations

import gzip

import pytest

import overlap
from overlap.errors import InputError

BENCH = '{"id": "CVE-2023-1111"}\n{"id": "django__django-100"}\n'


def _files(tmp_path, body: bytes, name: str = "train.csv"):
    (tmp_path / "bench.jsonl").write_text(BENCH, encoding="utf-8")
    train = tmp_path / name
    train.write_bytes(gzip.compress(body, mtime=0) if name.endswith(".gz") else body)
    return train, tmp_path / "bench.jsonl"


@pytest.mark.parametrize("name", ["train.csv", "train.csv.gz"])
def test_compare_refuses_latin1_outside_the_id_column(tmp_path, name):
    train, bench = _files(tmp_path, b"id,note\nCVE-2023-1111,caf\xe9\ndjango__django-7,ok\n", name)
    with pytest.raises(InputError, match=r"line 2: not UTF-8"):
        overlap.compare(train, bench, id_column="id", pool=None, evidence=False)


def test_compare_refuses_a_bad_byte_in_the_last_block(tmp_path):
    # The bad byte after many good rows, and a multi-byte character cut at the very end of the file.
    rows = b"".join(b"CVE-2023-%d,\xc3\xa9t\xc3\xa9\n" % (1000 + i) for i in range(20000))
    train, bench = _files(tmp_path, b"id,note\n" + rows + b"CVE-2023-9999,\xc3")
    with pytest.raises(InputError, match=r"line 20002: not UTF-8"):
        overlap.compare(train, bench, id_column="id", pool=None, evidence=False)


def test_filter_and_compare_agree_on_a_utf8_file_with_a_bom(tmp_path):
    train, bench = _files(tmp_path, "\ufeffid,note\nCVE-2023-1111,café\nx,y\n".encode("utf-8"))
    result = overlap.compare(train, bench, id_column="id", pool=None, evidence=False)
    assert result.summary()["benches"][0]["bench_items_matched"] == 1
    split = overlap.filter_train(str(train), [str(bench)], tmp_path / "out", id_column="id")
    assert len(split.decision.removed) == 1
