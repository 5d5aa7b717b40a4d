"""A list or object in a JSON id column is refused by the line it is on, whatever the rows around it hold:
beside text it would otherwise become its JSON text (a CVE inside a list matching as an id), alone it is a
column of lists (refused), and compare and filter would disagree on the same file."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from overlap.cli import app

BENCH = '{"id": "CVE-2023-1111"}\n'


@pytest.mark.parametrize(("lines", "line", "what"), [
    (['{"id": ["CVE-2023-1111"]}', '{"id": "x"}'], 1, "a list"),
    (['{"id": "y"}', '{"id": {"cve": "CVE-2023-1111"}}'], 2, "an object"),
    (['{"id": "y"}', '{"id": null}', '{"id": []}'], 3, "a list"),
])
@pytest.mark.parametrize("command", ["compare", "filter"])
def test_a_nested_id_cell_is_refused_by_its_line(tmp_path, lines, line, what, command):
    train, bench = tmp_path / "train.jsonl", tmp_path / "bench.jsonl"
    train.write_text("\n".join(lines) + "\n")
    bench.write_text(BENCH)
    out = tmp_path / "out"
    args = [command, str(train), str(bench), "--id-column", "id"]
    args += ["--out", str(out)] if command == "filter" else ["--pool", "none", "--no-report"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"train.jsonl: line {line}: column 'id' holds {what} here, not an id" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()
