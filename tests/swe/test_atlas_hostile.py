"""`overlap atlas` on inputs where a cache, a re-run or a push could give something other than a fresh run:
an `--out` around or inside the cache (the default one too), an empty `--cache`, a membership file read from
beside the dataset's folder, a set named beside its own subset with `--text`, and a re-push of a smaller atlas.
Each is refused before any work (one line, exit 2) or equals the fresh run."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from swe_fixtures import write_all
from typer.testing import CliRunner

from overlap.api.atlas import atlas
from overlap.cli import app
from overlap.outputs.ship import atlas_repo

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
DATA = [a for n in ("mimo-cyber", "cybergym", "arvo") for a in ("-d", f"{n}={DEMO / n}")]


def _cli(*args: str):
    return CliRunner().invoke(app, ["atlas", "mimo-cyber", "cybergym", *DATA, "--pool", "none", *args])


@pytest.mark.parametrize("out", ["cache", "cache/atlas"])
def test_out_around_the_default_cache_is_refused_before_any_work(tmp_path, monkeypatch, out):
    """The default cache (OVERLAP_CACHE/atlas) inside `--out`: the run made the cache there, then refused to
    replace a folder holding files no atlas wrote, after all the work."""
    monkeypatch.setenv("OVERLAP_CACHE", str(tmp_path / "cache"))
    done = _cli("--out", str(tmp_path / out))
    assert done.exit_code == 2 and "the atlas cache" in done.output and "inside --out" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("out", ["cache/cells", "cache/keys/x", "cache/sides"])
def test_out_inside_the_cache_entries_is_refused_before_any_work(tmp_path, out):
    done = _cli("--cache", str(tmp_path / "cache"), "--out", str(tmp_path / out))
    assert done.exit_code == 2 and "where --cache" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / "cache").exists()


def test_out_beside_the_cache_entries_is_written(tmp_path):
    done = _cli("--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "cache" / "atlas"))
    assert done.exit_code == 0, done.output
    assert (tmp_path / "cache" / "atlas" / "data" / "cells.parquet").is_file()


@pytest.mark.parametrize("cache", ["", " "])
def test_an_empty_cache_is_refused_not_the_current_folder(tmp_path, monkeypatch, cache):
    monkeypatch.chdir(tmp_path)
    done = _cli("--cache", cache, "--out", "atlas")
    assert done.exit_code == 2 and "cache: empty" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_a_membership_file_beside_the_folder_is_read_again_when_it_changes(tmp_path):
    """SWE-PolyBench's `in_verified` flag is read from a SWE-PolyBench_Verified folder beside the dataset's
    folder, outside the files the folder's digest covers: a changed file there made the cached keys (flag and
    provenance of the old file) be served."""
    folders = write_all(tmp_path / "data")
    data = {name: folders[name] for name in ("swe-rebench-v2", "swe-polybench")}
    names = list(data)
    atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    verified = folders["swe-polybench-verified"] / "test.csv"
    with (folders["swe-polybench"] / "test.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with verified.open("w", encoding="utf-8", newline="") as handle:  # every task is in Verified now
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    again = atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    fresh = atlas(names, data=data, cache=tmp_path / "fresh", pool="none")
    assert again.recomputed == fresh.recomputed == [("swe-rebench-v2", "swe-polybench")]
    assert again.provenance() == fresh.provenance()
    (bench,) = [e for e in again.entries if e.name == "swe-polybench"]
    assert bench.dataset.items["in_verified"].all()


def test_the_text_of_a_set_named_beside_its_subset_is_its_own(tmp_path):
    """`cybergym` and `cybergym:arvo` share one registered name: a cybergym whose keys came from the cache was
    read again for its texts as `cybergym:arvo` (8 bench items, not 10)."""
    data = {name: DEMO / name for name in ("mimo-cyber", "cybergym", "arvo")}
    names = ["mimo-cyber", "cybergym", "cybergym:arvo"]
    fresh = atlas(names, data=data, cache=tmp_path / "cache", pool="none", text=True)
    shutil.rmtree(tmp_path / "cache" / "cells")  # the keys are cached, the cells are joined again
    again = atlas(names, data=data, cache=tmp_path / "cache", pool="none", text=True)
    assert again.recomputed == fresh.recomputed and again.cells == fresh.cells


class FakeHub:
    """A Hub repo holding an earlier push: its files, changed by each upload as huggingface_hub changes them."""

    def __init__(self, files: list[str]):
        self.token, self.files, self.uploads = "hf_fake", set(files), []

    def whoami(self):
        return {"auth": {"accessToken": {"role": "write"}}}

    def repo_info(self, repo_id, repo_type):
        return {"id": repo_id}

    def upload_folder(self, **kwargs):
        from huggingface_hub.utils import filter_repo_objects

        self.uploads.append(kwargs)
        added = {p.relative_to(kwargs["folder_path"]).as_posix() for p in Path(kwargs["folder_path"]).rglob("*")
                 if p.is_file() and p.name not in kwargs["ignore_patterns"]}
        deleted = set(filter_repo_objects(sorted(self.files), allow_patterns=kwargs.get("delete_patterns") or []))
        self.files = (self.files - (deleted - {".gitattributes"})) | added
        return type("Info", (), {"pr_url": None, "commit_url": "https://hub.invalid/commit/1"})()


def test_a_push_leaves_no_page_of_a_cell_the_atlas_no_longer_has(tmp_path, monkeypatch):
    hub = FakeHub([".gitattributes", "README.md", "data/cells.parquet", "cells/gone-train__cybergym.html",
                   "cells/mimo-cyber__cybergym.html", "notes.md"])
    monkeypatch.setattr(atlas_repo, "_hub_api", lambda token: hub)
    done = _cli("--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "atlas"), "--push", "me/atlas")
    assert done.exit_code == 0, done.output
    written = {p.relative_to(tmp_path / "atlas").as_posix() for p in (tmp_path / "atlas").rglob("*") if p.is_file()}
    assert hub.files == (written - {".overlap-output"}) | {".gitattributes", "notes.md"}


def test_a_damaged_pool_named_explicitly_is_refused_before_any_dataset_is_read(tmp_path, monkeypatch):
    """An existing pool file that is no pool was refused only after every dataset had been read."""
    import overlap.api.atlas as atlas_module
    from overlap.errors import InputError

    pool = tmp_path / "pool.csv"
    pool.write_text("not,a,pool\n1,2,3\n", encoding="utf-8")

    def no_read(*args, **kwargs):
        raise AssertionError("a dataset was read before the pool was checked")

    monkeypatch.setattr(atlas_module, "_read", no_read)
    monkeypatch.setattr(atlas_module, "_streamed_sources", no_read)
    data = {"mimo-cyber": DEMO / "mimo-cyber", "cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}
    with pytest.raises(InputError, match="pool"):
        atlas(["mimo-cyber", "cybergym"], data=data, cache=tmp_path / "cache", pool=str(pool))
