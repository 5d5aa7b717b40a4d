"""Output folders are owned (no data loss): `--out` writes only into a folder that does
not exist, is empty, or holds a previous output of the same command (its `.overlap-output` marker); anything
else is refused with exit 2 and one line before any work, and nothing is deleted or changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from corpus_contract import FAST, check_contract, cyber_data, data_args, invoke, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.errors import InputError
from overlap.outputs.atomic import MARKER, atomic_folder, check_out_folder, folder_owner, read_marker

CYBER = ("mimo-cyber", "cybergym", "arvo")


@pytest.fixture
def work(tmp_path):
    """A work folder holding the cyber datasets (`data/`) and a folder with a user's only copy of a file."""
    data = cyber_data(tmp_path / "data")
    mydata = tmp_path / "mydata"
    mydata.mkdir()
    (mydata / "only-copy.parquet").write_text("x")
    return tmp_path, data


def _commands(data: dict[str, Path], out) -> dict[str, list]:
    """A command line of every folder-writing command, writing to `out`."""
    cyber = data_args(data, *CYBER)
    return {
        "compare": ["compare", "mimo-cyber", "cybergym", *cyber, *FAST, "--out", out],
        "demo": ["demo", "--out", out],
        "filter": ["filter", "mimo-cyber", "cybergym", *cyber, "--out", out],
        "ngram": ["ngram", "mimo-cyber", "cybergym", *cyber, "--field", "prompt:description", "--out", out],
        "matrix": ["matrix", "cybergym", "sec-bench", *data_args(data, "cybergym", "sec-bench", "arvo"),
                   "--out", out],
    }


def _refused(run, *words):
    check_contract(run, expect=2)
    for word in words:
        assert word in run.first_line, run.first_line
    return run.first_line


@pytest.mark.parametrize("command", ["compare", "demo", "filter", "ngram", "matrix"])
def test_a_folder_with_user_files_is_refused_and_untouched(work, command):
    root, data = work
    run = invoke(command, _commands(data, "mydata")[command], root=root)
    _refused(run, "--out mydata", "only-copy.parquet")
    assert (root / "mydata" / "only-copy.parquet").read_text() == "x"


@pytest.mark.parametrize("command", ["compare", "filter", "ngram", "matrix"])
def test_the_benchmark_input_folder_is_refused(work, command):
    root, data = work
    run = invoke(command, _commands(data, data["cybergym"])[command], root=root)
    _refused(run, "holds the input")


def test_a_folder_holding_an_input_is_refused(work):
    root, data = work
    run = invoke("compare", _commands(data, root / "data")["compare"], root=root)
    _refused(run, "holds the input")


@pytest.mark.parametrize(("out", "why"), [(".", "current folder"), ("..", "current folder"), ("/", "root folder"),
                                         ("~", "home folder")])
def test_current_root_and_home_folders_are_refused(work, monkeypatch, out, why):
    root, data = work
    (root / "home").mkdir()
    monkeypatch.setenv("HOME", str(root / "home"))
    target = str(Path(out).expanduser())
    for command in ("compare", "demo"):
        _refused(invoke(command, _commands(data, target)[command], root=root), why)


def test_a_file_a_symlink_and_a_path_under_a_file_are_refused(work):
    root, data = work
    (root / "afile").write_text("keep")
    (root / "link").symlink_to(root / "mydata")
    assert "is a file" in _refused(invoke("file", ["demo", "--out", "afile"], root=root))
    assert "symbolic link" in _refused(invoke("link", ["demo", "--out", "link"], root=root))
    assert "afile is a file" in _refused(invoke("under", ["demo", "--out", "afile/sub/out"], root=root))
    assert (root / "afile").read_text() == "keep"


@pytest.mark.parametrize("command", ["compare", "ngram", "matrix"])
def test_rerunning_into_a_previous_output_of_the_same_command_works(work, command):
    root, data = work
    args = _commands(data, "out")[command]
    check_contract(invoke(command, args, root=root), expect=0)
    marker = json.loads((root / "out" / MARKER).read_text())
    assert marker["command"] == command and marker["tool"] == "overlap" and "version" in marker
    assert sorted(marker["files"]) == sorted(p.name for p in (root / "out").iterdir() if p.name != MARKER)
    before = snapshot(root / "out")
    check_contract(invoke(command, args, root=root), expect=0)
    assert snapshot(root / "out") == before  # deterministic, and replaced whole


def test_demo_writes_a_compare_output(work):
    root, data = work
    check_contract(invoke("compare", _commands(data, "d")["compare"], root=root), expect=0)
    check_contract(invoke("demo", ["demo", "--out", "d"], root=root), expect=0)
    assert folder_owner(root / "d") == "compare"  # the demo writes a compare report


def test_filter_rerun_into_its_own_output_works(work):
    root, data = work
    args = _commands(data, "split")["filter"]
    check_contract(invoke("filter", args, root=root), expect=0)
    check_contract(invoke("filter again", args, root=root), expect=0)


@pytest.mark.parametrize(("first", "second"), [("compare", "matrix"), ("compare", "ngram"), ("ngram", "compare"),
                                               ("matrix", "demo")])
def test_another_commands_output_is_refused(work, first, second):
    root, data = work
    commands = _commands(data, "out")
    check_contract(invoke(first, commands[first], root=root), expect=0)
    before = snapshot(root / "out")
    owner = "compare" if first == "demo" else first
    _refused(invoke(second, commands[second], root=root), f"holds the output of `overlap {owner}`")
    assert snapshot(root / "out") == before


def test_a_user_file_added_to_a_previous_output_is_kept(work):
    root, data = work
    args = _commands(data, "out")["compare"]
    check_contract(invoke("compare", args, root=root), expect=0)
    (root / "out" / "my-notes.txt").write_text("mine")
    _refused(invoke("compare again", args, root=root), "my-notes.txt")
    assert (root / "out" / "my-notes.txt").read_text() == "mine"


def test_card_and_report_own_their_folders_and_nest_in_a_compare_output(work):
    root, data = work
    args = _commands(data, "res")["compare"]
    check_contract(invoke("compare", args, root=root), expect=0)
    (root / "ds").mkdir()
    (root / "ds" / "README.md").write_text("# my dataset\n")
    (root / "ds" / "train.parquet").write_text("data")
    # the case: the input card's own folder as --out
    _refused(invoke("card into input", ["card", "res", "--card", "ds/README.md", "--out", "ds"], root=root),
             "--out ds")
    card = ["card", "res", "--card", "ds/README.md"]
    check_contract(invoke("card", card, root=root, out=root / "res" / "card"), expect=0)
    assert folder_owner(root / "res" / "card") == "card"
    assert (root / "res" / "card" / "README.md").is_file()
    check_contract(invoke("card again", card, root=root, out=root / "res" / "card"), expect=0)
    check_contract(invoke("report in place", ["report", "res"], root=root, out=root / "res"), expect=0)
    for _ in range(2):
        check_contract(invoke("report", ["report", "res", "--out", "rep"], root=root), expect=0)
    assert folder_owner(root / "rep") == "report"
    _refused(invoke("report into data", ["report", "res", "--out", "ds"], root=root), "README.md")
    other = _commands(data, "other")["compare"]
    check_contract(invoke("another compare", other, root=root), expect=0)
    before = snapshot(root / "other")
    _refused(invoke("report into another compare", ["report", "res", "--out", "other"], root=root),
             "another compare's output")
    assert snapshot(root / "other") == before
    _refused(invoke("report into its input", ["report", "res", "--out", "."], root=root), "current folder")
    # a compare re-run replaces its folder, the card output nested in it included, but never a user's file
    # inside that nested output: replacing the folder would delete it
    (root / "res" / "card" / "NOTES.md").write_text("mine")
    _refused(invoke("compare over a user's file in its card", args, root=root), "card/NOTES.md")
    assert (root / "res" / "card" / "NOTES.md").read_text() == "mine"
    (root / "res" / "card" / "NOTES.md").unlink()
    check_contract(invoke("compare again", args, root=root), expect=0)
    assert (root / "ds" / "README.md").read_text() == "# my dataset\n"


# --- atomic_folder and check_out_folder, the library side --------------------------------------------


def test_atomic_folder_without_command_keeps_working_and_writes_no_marker(tmp_path):
    with atomic_folder(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("a")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.txt"]


def test_atomic_folder_rechecks_ownership_before_replacing(tmp_path):
    out = tmp_path / "out"
    with atomic_folder(out, command="compare") as tmp:
        (tmp / "a.txt").write_text("old")
    with pytest.raises(InputError, match="new.txt"), atomic_folder(out, command="compare") as tmp:
        (tmp / "a.txt").write_text("new")
        (out / "new.txt").write_text("the user's, written while the command ran")
    assert (out / "a.txt").read_text() == "old" and (out / "new.txt").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temp folder left


def test_atomic_folder_never_replaces_a_folder_it_does_not_own(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("x")
    with pytest.raises(InputError, match="not an output of overlap"), atomic_folder(out) as tmp:
        (tmp / "a").write_text("a")  # pragma: no cover - refused before the body runs
    with pytest.raises(InputError, match="overlap compare"), atomic_folder(out, command="compare"):
        pass  # pragma: no cover
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (out / "x").read_text() == "x"


names = st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=20).filter(
    lambda n: n not in (".", "..", MARKER))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(names, st.binary(max_size=50), min_size=1, max_size=5),
       marker=st.one_of(st.none(), st.binary(max_size=80),
                        st.sampled_from([b'{"command": "compare", "tool": "other", "files": []}',
                                         b'{"command": "matrix", "tool": "overlap", "files": []}',
                                         b'{"command": "compare", "tool": "overlap"}', b"[]", b"null"])))
def test_any_folder_overlap_did_not_write_is_refused_and_untouched(tmp_path_factory, files, marker):
    out = tmp_path_factory.mktemp("gen") / "out"
    out.mkdir()
    for name, content in files.items():
        (out / name).write_bytes(content)
    if marker is not None:
        (out / MARKER).write_bytes(marker)
    before = snapshot(out.parent)
    with pytest.raises(InputError) as refused:
        check_out_folder(out, "compare")
    assert "\n" not in str(refused.value)
    with pytest.raises(InputError), atomic_folder(out, command="compare"):
        pass  # pragma: no cover
    assert snapshot(out.parent) == before


def test_marker_reading_is_strict(tmp_path):
    assert read_marker(tmp_path) is None and folder_owner(tmp_path / "missing") is None
    (tmp_path / MARKER).write_text('{"command": "ngram", "tool": "overlap", "files": ["a"], "version": "0"}')
    assert folder_owner(tmp_path) == "ngram"
    os.chmod(tmp_path / MARKER, 0o644)
    check_out_folder(tmp_path / "new" / "deeper", "compare")  # a path to create is fine
