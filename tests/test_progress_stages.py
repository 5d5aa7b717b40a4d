"""Long commands name the step they are in under their spinner; without a spinner the library's stage calls
do nothing (no output, no error)."""

import io

from rich.console import Console

from overlap import progress


def test_stage_names_the_step_under_the_newest_spinner(monkeypatch):
    monkeypatch.setattr(progress, "progress_enabled", lambda: True)
    monkeypatch.setattr(progress, "_stderr_console", lambda: Console(file=io.StringIO(), force_terminal=True))
    with progress.status("compare") as spinner:
        progress.stage("joining ids")
        assert str(spinner.status) == "compare: joining ids"
        with progress.status("filter") as inner:
            progress.stage("writing the split")
            assert str(inner.status) == "filter: writing the split"
        progress.stage("text check")
        assert str(spinner.status) == "compare: text check"
    assert progress._active == []


def test_stage_without_a_spinner_is_a_no_op(monkeypatch, capsys):
    monkeypatch.setattr(progress, "progress_enabled", lambda: False)
    with progress.status("compare"):
        progress.stage("joining ids")
    progress.stage("outside any command")
    assert capsys.readouterr() == ("", "") and progress._active == []
