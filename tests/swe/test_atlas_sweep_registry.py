"""`--registry` declarations nobody wrote on purpose: a name repeated among its own aliases, an empty
`[[dataset]]` list, a refused declaration's names (none of them left behind, leading nowhere)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from overlap.cli import app
from overlap.errors import InputError
from overlap.sources.registry import registry

TRAIN = 'role = "training"\npath = "t.jsonl"\n[columns]\nid = "id"\n'


@pytest.mark.parametrize("head, repeated", [('name = "sweep-t"\naliases = ["SWEEP-T"]\n', "SWEEP-T"),
                                            ('name = "sweep-t"\naliases = ["x1", "X1"]\n', "X1")])
def test_a_name_given_twice_in_one_declaration_is_one_clear_line(tmp_path, head, repeated):
    (tmp_path / "reg.toml").write_text(head + TRAIN, encoding="utf-8")
    done = CliRunner().invoke(app, ["datasets", "--registry", str(tmp_path / "reg.toml")])
    assert done.exit_code == 2 and f"{repeated!r} is given twice" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1


def test_an_empty_dataset_list_is_said_of_its_file(tmp_path):
    (tmp_path / "reg.toml").write_text("dataset = []\n", encoding="utf-8")
    with pytest.raises(InputError, match="declares no dataset"):
        registry.add_declarations([tmp_path / "reg.toml"])


def test_a_refused_declaration_leaves_none_of_its_names(tmp_path):
    (tmp_path / "reg.toml").write_text('name = "sweep-t"\naliases = ["cybergym"]\n' + TRAIN, encoding="utf-8")
    with pytest.raises(InputError, match="already declared"):
        registry.add_declarations([tmp_path / "reg.toml"])
    assert not registry.is_known("sweep-t")  # else a later lookup of it fails deep inside (no declaration)


def test_a_pipe_named_toml_in_a_registry_folder_is_passed_over_not_waited_on(tmp_path):
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "a-pipe.toml")  # opened for reading, it would block until some writer came
    (tmp_path / "b.toml").write_text('name = "sweep-pipe-t"\n' + TRAIN, encoding="utf-8")
    done = CliRunner().invoke(app, ["datasets", "--registry", str(tmp_path)])
    assert done.exit_code == 0 and "sweep-pipe-t" in done.output, done.output
    (tmp_path / "b.toml").unlink()
    with pytest.raises(InputError, match="no .toml declaration"):
        registry.declarations_at(tmp_path)
