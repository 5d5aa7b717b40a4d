"""A blob cache whose `locks` or `tmp` folder is a symlink (to a folder elsewhere, to a file, to nothing): the link is
never followed, so no lock file is created where it points; the download goes on without the lock (two
processes may then fetch one blob twice, nothing worse), and a `locks` folder that is a folder still locks."""

from __future__ import annotations

import hashlib
import os

import pytest

from overlap.audit.image.blobcache import BlobCache, BlobMismatch
from overlap.errors import InputError

DATA = b"a manifest, or a layer\n"
DIGEST = "sha256:" + hashlib.sha256(DATA).hexdigest()


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("points_to", ["folder", "file", "nothing", "itself"])
def test_a_symlinked_locks_folder_is_not_followed(tmp_path, points_to):
    cache_root, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache_root.mkdir()
    elsewhere.mkdir()
    target = {"folder": elsewhere, "file": elsewhere / "f", "nothing": elsewhere / "gone",
              "itself": cache_root / "locks"}[points_to]
    if points_to == "file":
        target.write_text("x")
    os.symlink(target, cache_root / "locks")
    before = _tree(elsewhere)
    cache = BlobCache(cache_root)
    with cache.claim(DIGEST):
        cache.put(DIGEST, DATA)
    assert _tree(elsewhere) == before  # nothing created where the link points
    assert cache.read(DIGEST, 1 << 20) == DATA  # the blob was still stored
    assert os.path.islink(cache_root / "locks")


def test_a_locks_folder_still_locks(tmp_path):
    cache = BlobCache(tmp_path / "cache")
    with cache.claim(DIGEST):
        cache.put(DIGEST, DATA)
    lock = tmp_path / "cache" / "locks" / DIGEST.split(":")[1]
    assert lock.is_file() and not lock.is_symlink() and lock.stat().st_size == 0


def test_a_lock_file_that_is_a_symlink_is_not_followed(tmp_path):
    cache_root, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    (cache_root / "locks").mkdir(parents=True)
    elsewhere.mkdir()
    os.symlink(elsewhere / "planted", cache_root / "locks" / DIGEST.split(":")[1])
    with BlobCache(cache_root).claim(DIGEST):
        pass
    assert not (elsewhere / "planted").exists()


@pytest.mark.parametrize("points_to", ["folder", "file", "nothing", "itself"])
def test_a_symlinked_tmp_folder_is_not_followed(tmp_path, points_to):
    cache_root, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache_root.mkdir()
    elsewhere.mkdir()
    target = {"folder": elsewhere, "file": elsewhere / "f", "nothing": elsewhere / "gone",
              "itself": cache_root / "tmp"}[points_to]
    if points_to == "file":
        target.write_text("x")
    os.symlink(target, cache_root / "tmp")
    before = _tree(elsewhere)
    cache = BlobCache(cache_root)
    with pytest.raises(InputError, match=r"tmp: cannot write into the blob cache's temporary folder") as caught:
        cache.put(DIGEST, DATA)
    assert "\n" not in str(caught.value) and "OVERLAP_CACHE" in str(caught.value)
    assert _tree(elsewhere) == before  # nothing written where the link points
    assert cache.read(DIGEST, 1 << 20) is None and os.path.islink(cache_root / "tmp")


def test_a_tmp_folder_holds_nothing_once_a_blob_is_in(tmp_path):
    cache = BlobCache(tmp_path / "cache")
    cache.put(DIGEST, DATA)
    with pytest.raises(BlobMismatch), cache.writer(DIGEST, len(DATA)) as w:  # a blob that fails is not kept
        w.write(DATA[:-1] + b"?")
        w.commit()
    assert cache.read(DIGEST, 1 << 20) == DATA and list((tmp_path / "cache" / "tmp").iterdir()) == []
