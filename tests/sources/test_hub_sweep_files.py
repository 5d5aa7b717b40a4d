"""What a local copy of a Hub repo holds instead of rows: Git LFS pointer files (a clone made without Git LFS,
the commonest way to get a repo's files wrong) are one error saying so and how to fetch the data, wherever
they are read; a folder linked into the copy (`data -> /mnt/shards`) is read, not skipped without a word."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError
from overlap.sources.formats.batches import open_batches
from overlap.sources.formats.whole_file import read_records
from overlap.sources.places.files import LocalFolder
from overlap.sources.places.listing import list_files

POINTER = ("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
           "ca24d17e2393\nsize 12345\n")
LFS = r"a Git LFS pointer file, not the data .*git lfs pull"


@pytest.mark.parametrize("name", ["data/train-00000-of-00001.parquet", "data/train.jsonl", "data/train.csv",
                                  "data/train.json"])
def test_an_lfs_pointer_in_a_clone_is_named(tmp_path, name):
    (tmp_path / name).parent.mkdir(parents=True)
    (tmp_path / name).write_text(POINTER)
    with pytest.raises(InputError, match=rf"{name}: {LFS}"):
        list(open_batches(tmp_path, ["id"]))
    with pytest.raises(InputError, match=LFS):
        read_records(tmp_path / name, ["id"])


def _run(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "overlap.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_an_lfs_pointer_in_a_registered_datasets_folder_is_named(tmp_path):
    """The registered readers (cybergym's tasks.json, ARVO's mapping CSV) say it too, exit 2, no traceback."""
    bench = tmp_path / "cybergym"
    bench.mkdir()
    (bench / "tasks.json").write_text(POINTER)
    done = _run("compare", DEMO_ROOT / "mimo-cyber" / "cyber.parquet", "cybergym", "--id-column",
                "extra_info.instance_id", f"--data=cybergym={bench}", f"--data=arvo={DEMO_ROOT / 'arvo'}",
                "--pool", "none", "--no-report", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "tasks.json: a Git LFS pointer file, not the data" in done.stderr
    mapping = tmp_path / "arvo" / "arvo" / "oss_fuzz_mappings.csv"
    mapping.parent.mkdir(parents=True)
    mapping.write_text(POINTER)
    done = _run("ids", "arvo:10055", f"--data=arvo={tmp_path / 'arvo'}", cwd=tmp_path)
    assert done.returncode == 2 and "oss_fuzz_mappings.csv: a Git LFS pointer file" in done.stderr


def _write(path: Path, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"n": n}) + "\n")


def test_a_linked_folder_is_read(tmp_path):
    shards = tmp_path / "elsewhere"
    _write(shards / "train-00000-of-00001.jsonl", 1)
    clone = tmp_path / "clone"
    _write(clone / "top.jsonl", 0)
    (clone / "data").symlink_to(shards, target_is_directory=True)
    (clone / "loop").symlink_to(clone, target_is_directory=True)  # a loop is walked once, never forever
    rows = pa.Table.from_batches(list(open_batches(clone, ["n"]))).column("n").to_pylist()
    assert sorted(rows) == [0, 1]
    assert list_files(LocalFolder(origin="local-folder", root=clone), ".jsonl") == \
        ["data/train-00000-of-00001.jsonl", "top.jsonl"]


def test_a_cached_blob_cut_short_at_a_line_end_is_refused(tmp_path, monkeypatch):
    """A JSON lines blob cut at a line end read as fewer rows, exit 0, under the whole file's sha256."""
    from fake_hub import make_hub_cache

    from overlap.errors import HubUnavailableError
    from overlap.sources.places.files import HubRepo

    rows = "".join(json.dumps({"id": f"arvo:{i}"}) + "\n" for i in range(1, 11)).encode()
    snapshot = make_hub_cache(tmp_path / "cache", "o/cut", {"data/train.jsonl": rows, "data/whole.jsonl": rows[:50]},
                              "d" * 40)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    blob = Path(os.path.realpath(snapshot / "data/train.jsonl"))
    blob.write_bytes(b"".join(rows.splitlines(True)[:4]))
    with pytest.raises(HubUnavailableError, match=r"o/cut@dddddddddddd: data/train.jsonl in the Hub cache is not "
                                                  r"the file that was downloaded .*delete "):
        list(open_batches("o/cut", ["id"]))
    with pytest.raises(HubUnavailableError, match=r"data/train.jsonl in the Hub cache is not the file"):
        HubRepo(origin="hub", repo_id="o/cut", revision="d" * 40).fetch("data/train.jsonl")
    assert len(list(open_batches("o/cut", ["id"], split="whole"))) == 1  # a whole blob reads as before


def test_a_blob_named_by_its_git_sha1_is_checked_as_git_does(tmp_path):
    """A file stored without LFS is cached under its git blob id (what huggingface_hub's own cache verify
    compares), so a whole one passes and a cut one is refused."""
    from huggingface_hub.utils.sha import git_hash

    from overlap.errors import HubUnavailableError
    from overlap.sources.places.hub_cache import check_blob

    data = b'{"id": "arvo:1"}\n{"id": "arvo:2"}\n'
    blob = tmp_path / "blobs" / git_hash(data)
    blob.parent.mkdir()
    blob.write_bytes(data)
    (tmp_path / "train.jsonl").symlink_to(blob)
    check_blob(tmp_path / "train.jsonl", "train.jsonl", "o/x")
    blob.write_bytes(data[:17])
    with pytest.raises(HubUnavailableError, match="train.jsonl in the Hub cache is not the file"):
        check_blob(tmp_path / "train.jsonl", "train.jsonl", "o/x")


def test_show_names_what_it_prints_and_a_folder_names_its_layout(tmp_path):
    """`--show` of a Hub id or a folder said it was "not a Hub id"; a folder missing a declared root folder
    named the layout without it."""
    done = _run("datasets", "--show", "owner/name", cwd=tmp_path)
    assert done.returncode == 2 and "--show owner/name: not a registered dataset" in done.stderr
    done = _run("compare", "multi-swe-rl", "swe-bench-verified", f"--data=multi-swe-rl={tmp_path}",
                f"--data=swe-bench-verified={tmp_path}", "--no-report", cwd=tmp_path)
    assert done.returncode == 2 and "no data_20240601_20250331/<subset>/*.jsonl files found" in done.stderr


def test_a_folder_one_level_off_the_repo_says_which_to_give(tmp_path):
    from overlap.sources.load import load_dataset

    with pytest.raises(InputError, match=r"expected 'tasks.json' inside .*; .*cybergym is laid out so: give that "
                                         r"folder"):
        load_dataset("cybergym", data={"cybergym": DEMO_ROOT})
    done = _run("ids", "arvo:10055", f"--data=arvo={DEMO_ROOT / 'arvo' / 'arvo'}", cwd=tmp_path)
    assert done.returncode == 2 and "this folder holds oss_fuzz_mappings.csv itself: give " in done.stderr
