"""`overlap atlas` on local inputs the reader refuses must refuse them on every run, the cached ones too: a
cell cached for a folder is not served once the folder holds what `compare` would refuse (a link to nothing,
a FIFO)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from overlap.api.atlas import atlas
from overlap.errors import InputError
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def _jsonl(path: Path, ids: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")


@pytest.fixture
def declared(tmp_path) -> dict[str, Path]:
    _jsonl(tmp_path / "train" / "t.jsonl", ["arvo:10055", "CVE-2021-1234"])
    _jsonl(tmp_path / "bench" / "b.jsonl", ["arvo:10055", "foo/bar#1"])
    (tmp_path / "reg.toml").write_text(
        '[[dataset]]\nname = "sweep-train"\nrole = "training"\npath = "train"\ncolumns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-bench"\nrole = "benchmark"\npath = "bench"\ncolumns = {id = "id"}\n',
        encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    return {"arvo": DEMO / "arvo", "sweep-train": tmp_path / "train"}


@pytest.mark.parametrize("odd", ["dangling link", "fifo"])
def test_a_folder_the_reader_refuses_is_refused_after_a_cached_run(declared, tmp_path, odd):
    names = ["sweep-train", "sweep-bench"]
    first = atlas(names, data=declared, cache=tmp_path / "cache", pool="none")
    assert first.cells[0]["bench_items_matched"] == 1
    target = tmp_path / "train" / "more.jsonl"
    if odd == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(target)
    else:
        target.symlink_to(tmp_path / "train" / "gone.jsonl")
    with pytest.raises(InputError, match="more.jsonl"):
        atlas(names, data=declared, cache=tmp_path / "cache", pool="none")


def _cli(tmp_path: Path, *args: str):
    from typer.testing import CliRunner

    from overlap.cli import app

    return CliRunner().invoke(app, ["atlas", "sweep-train", "sweep-bench", "--registry", str(tmp_path / "reg.toml"),
                                    "-d", f"arvo={DEMO / 'arvo'}", "--pool", "none", *args])


@pytest.mark.parametrize("out", ["train/atlas", "bench/sub/atlas"])
def test_out_inside_a_declared_path_is_refused(tmp_path, out):
    """A declared dataset's folder is an input as a `-d` folder is: an atlas written into it would be read as
    the dataset's rows on the next run."""
    _jsonl(tmp_path / "train" / "t.jsonl", ["arvo:10055"])
    _jsonl(tmp_path / "bench" / "sub" / "b.jsonl", ["arvo:10055"])
    (tmp_path / "reg.toml").write_text(
        '[[dataset]]\nname = "sweep-train"\nrole = "training"\npath = "train"\ncolumns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-bench"\nrole = "benchmark"\npath = "bench/*/*.jsonl"\ncolumns = {id = "id"}\n',
        encoding="utf-8")
    done = _cli(tmp_path, "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / out))
    assert done.exit_code == 2 and "is inside the input folder" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / out).exists() and not (tmp_path / "cache").exists()


def test_a_cache_inside_out_is_refused_before_any_work(declared, tmp_path):
    out = tmp_path / "atlas"
    done = _cli(tmp_path, "--cache", str(out / "cache"), "--out", str(out))
    assert done.exit_code == 2 and "--cache" in done.output and "inside --out" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not out.exists()  # nothing read, nothing cached, no folder left behind


def test_a_name_that_is_also_a_local_folder_is_fingerprinted_by_that_folder(declared, tmp_path, monkeypatch):
    """`load_dataset` reads a name that is also a path in the current folder from that path, so the cache key
    is that path's files: a change there makes the cells again."""
    from overlap.api.atlas_cache import fingerprint

    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "sweep-train" / "t.jsonl", ["arvo:10055"])
    before = fingerprint("sweep-train", {})
    _jsonl(tmp_path / "sweep-train" / "t.jsonl", ["arvo:10102"])
    assert fingerprint("sweep-train", {}) != before


@pytest.mark.parametrize("name, words", [("sets/t.jsonl", "declare it in a --registry file"),
                                         ("", "empty dataset name")])
def test_a_name_that_is_a_path_or_empty_is_said_as_such(declared, tmp_path, monkeypatch, name, words):
    from typer.testing import CliRunner

    from overlap.cli import app

    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "sets" / "t.jsonl", ["arvo:10055"])
    done = CliRunner().invoke(app, ["atlas", name, "sweep-bench", "--registry", "reg.toml", "--pool", "none",
                                    "--cache", "cache", "--out", "atlas"])
    assert done.exit_code == 2 and words in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1 and not (tmp_path / "atlas").exists()


def test_one_declaration_file_spelt_two_ways_is_one_declaration(declared, tmp_path, monkeypatch):
    """`--registry reg.toml` beside `--registry /abs/reg.toml` (or a link to it) declares nothing twice; another
    file declaring the same name still is refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.toml").symlink_to(tmp_path / "reg.toml")
    assert [s.name for s in registry.add_declarations(["reg.toml", "link.toml"])] == ["sweep-train", "sweep-bench"] * 2
    (tmp_path / "other.toml").write_text((tmp_path / "reg.toml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(InputError, match="already declared"):
        registry.add_declarations(["other.toml"])


@pytest.mark.parametrize("args, words", [
    (["sweep-train", "sweep-bench", "--out", "train/mx"], "inside the input folder"),
    (["", "sweep-bench", "--out", "mx"], "empty dataset name")])
def test_matrix_out_inside_a_declared_path_or_an_empty_name(declared, tmp_path, monkeypatch, args, words):
    from typer.testing import CliRunner

    from overlap.cli import app

    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["matrix", *args, "--registry", "reg.toml", "-d", f"arvo={DEMO / 'arvo'}"])
    assert done.exit_code == 2 and words in done.output, done.output
    assert not (tmp_path / "train" / "mx").exists() and not (tmp_path / "mx").exists()


@pytest.mark.parametrize("pool, words", [("", "pool: empty"), ("no/such/dir", "no such file or folder"),
                                         ("nosuch", "no registered pool")])
def test_a_pool_that_names_nothing_is_said_as_such(declared, tmp_path, monkeypatch, pool, words):
    from typer.testing import CliRunner

    from overlap.cli import app

    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["atlas", "sweep-train", "sweep-bench", "--registry", "reg.toml", "--pool", pool,
                                    "--cache", "cache", "--out", "atlas"])
    assert done.exit_code == 2 and words in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not (tmp_path / "atlas").exists() and not (tmp_path / "cache").exists()


def test_a_cache_that_is_a_file_is_refused_before_any_work(declared, tmp_path):
    (tmp_path / "cachefile").write_text("x", encoding="utf-8")
    done = _cli(tmp_path, "--cache", str(tmp_path / "cachefile"), "--out", str(tmp_path / "atlas"))
    assert done.exit_code == 2 and "is a file, not a folder" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1 and not (tmp_path / "atlas").exists()


@pytest.mark.parametrize("where", ["data", "declared"])
def test_a_cache_inside_an_input_folder_is_refused_before_any_work(declared, tmp_path, where):
    """Its files would be read as the dataset's rows (and written into the user's data)."""
    folder = tmp_path / ("train" if where == "data" else "bench")
    extra = ["-d", f"sweep-train={folder}"] if where == "data" else []
    done = _cli(tmp_path, *extra, "--cache", str(folder / "cache"), "--out", str(tmp_path / "atlas"))
    assert done.exit_code == 2 and "is inside the input folder" in done.output, done.output
    assert not (folder / "cache").exists() and not (tmp_path / "atlas").exists()


@pytest.mark.parametrize("command", ["compare", "filter"])
def test_compare_and_filter_out_inside_a_declared_path_is_refused(tmp_path, command):
    """Every command that writes --out treats a named dataset's declared folder as an input (one check)."""
    from typer.testing import CliRunner

    from overlap.cli import app

    _jsonl(tmp_path / "train" / "t.jsonl", ["arvo:10055"])
    _jsonl(tmp_path / "bench" / "b.jsonl", ["arvo:10055"])
    (tmp_path / "reg.toml").write_text(
        '[[dataset]]\nname = "sweep-train"\nrole = "training"\npath = "train"\ncolumns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-bench"\nrole = "benchmark"\npath = "bench"\ncolumns = {id = "id"}\n',
        encoding="utf-8")
    out = tmp_path / "bench" / "out"
    done = CliRunner().invoke(app, [command, "sweep-train", "sweep-bench", "--registry", str(tmp_path / "reg.toml"),
                                    "-d", f"arvo={DEMO / 'arvo'}", "--out", str(out)])
    assert done.exit_code == 2 and "is inside the input folder" in done.output, done.output
    assert not out.exists()
