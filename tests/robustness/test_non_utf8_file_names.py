"""A data file whose name is not UTF-8 (bytes Python keeps as surrogates) is named as such: Arrow cannot open
it, and its error ("surrogates not allowed") was reported as a file that cannot be read as JSON lines."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from overlap.api.demo import DEMO_ROOT
from overlap.cli import app


@pytest.mark.parametrize("command", ["compare", "filter"])
def test_a_file_name_that_is_not_utf8_is_said_to_be_one(tmp_path, command):
    folder = tmp_path / "train"
    folder.mkdir()
    try:
        with open(os.path.join(os.fsencode(folder), b"bad\xff.jsonl"), "wb") as handle:
            handle.write(b'{"id": "arvo:1"}\n')
    except OSError:
        pytest.skip("this file system takes UTF-8 names only")
    (tmp_path / "bench.jsonl").write_text('{"id": "arvo:1"}\n')
    args = [command, str(folder), str(tmp_path / "bench.jsonl"), "--id-column", "id", "-d",
            f"arvo={DEMO_ROOT / 'arvo'}"]
    args += ["--out", str(tmp_path / "out")] if command == "filter" else ["--pool", "none", "--no-report"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    assert "bad\\xff.jsonl: the file's name is not UTF-8 text" in done.output
    assert "Traceback" not in done.output and not (tmp_path / "out").exists()
