"""`--engine ray` with an object-store input that cannot be read (unreachable store, a URI naming nothing):
one line naming the URI, and Ray is never started (its start-up lines on stderr made four lines of one
error). The store is stood in for by a filesystem that fails, or by the local one at a missing path: no
network."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from corpus_contract import cyber_data, data_args, run_checked

from overlap.text.ngram import engine_ray, engines, remote


def _unreachable(uri):
    raise OSError(f"Could not connect to {uri}")


def _invalid(uri):
    raise pa.ArrowInvalid(f"Expected a bucket name in {uri}")


def _missing(uri):
    return pafs.LocalFileSystem(), "/nonexistent-overlap-test/" + uri.split("://", 1)[1]


@pytest.mark.parametrize("uri", ["s3://bucket/train.parquet", "gs://bucket/shards/", "s3://bucket/x.jsonl"])
@pytest.mark.parametrize("store", [_unreachable, _invalid, _missing], ids=["unreachable", "invalid", "missing"])
def test_an_unreadable_uri_is_refused_before_ray_starts(tmp_path, monkeypatch, uri, store):
    started = []

    def no_ray(*args, **kwargs):
        started.append(args)
        raise AssertionError("Ray was started")

    monkeypatch.setattr(remote, "uri_filesystem", store)
    monkeypatch.setattr(engines, "uri_filesystem", store)
    monkeypatch.setattr(engine_ray, "ray_session", no_ray)
    data = cyber_data(tmp_path / "data")
    run = run_checked(f"ray-uri:{store.__name__}", ["ngram", uri, "cybergym", "--id-column", "id", "--field",
                                                     "text:description", "--engine", "ray",
                                                     *data_args(data, "cybergym", "arvo")], root=tmp_path, expect=2)
    assert uri in run.first_line and not started, run.stderr


def test_a_reachable_uri_passes_the_check(tmp_path, monkeypatch):
    """The check's other side: a URI that names files is not refused (the local filesystem stands in)."""
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["a"], "text": ["words"]}), tmp_path / "train.parquet")
    local = (pafs.LocalFileSystem(), str(tmp_path / "train.parquet"))
    monkeypatch.setattr(engines, "uri_filesystem", lambda uri: local)
    engines.check_uri(engines.TrainFiles("s3://bucket/train.parquet"))
