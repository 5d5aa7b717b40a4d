"""One vocabulary across commands: shared options have the same names everywhere, old spellings
still parse, --help shows real metavars and the choices, `--version` and `-h` work."""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner

from overlap.cli import app

COMMANDS = ["compare", "datasets", "ids", "demo", "ngram", "matrix", "filter", "card", "report", "audit"]
# option (its names) → the commands that take it
SHARED = {
    ("--data", "-d"): ["compare", "ids", "ngram", "matrix", "filter"],
    ("--text",): ["compare", "ngram"],
    ("--ngram", "-n"): ["compare", "ngram"],
    ("--out", "-o"): ["compare", "demo", "ngram", "matrix", "filter", "card", "report", "audit"],
    ("--format", "-f"): COMMANDS,
    ("--push",): ["card", "filter"],
    ("--repo",): ["card", "filter"],
}
CHOICES = {("compare", "--fix-join"): "auto|on|off",
           ("compare", "--strata"): "project|sanitizer|crash_type|fuzzer|none",
           ("audit", "--network"): "any|none", ("audit", "--fail-on"): "leak|suspect"}


def _group():
    return typer.main.get_command(app)


def _options(command: str) -> dict[str, object]:
    params = _group().commands[command].params
    return {name: p for p in params for name in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}


@pytest.mark.parametrize(("names", "commands"), list(SHARED.items()), ids=[n[0] for n in SHARED])
def test_shared_options_have_the_same_names_everywhere(names, commands):
    for command in commands:
        options = _options(command)
        params = {id(options.get(name)) for name in names}
        assert all(name in options for name in names), (command, names)
        assert len(params) == 1, f"{command}: {names} are not one option"


def test_format_has_the_same_choices_on_every_command():
    # the commands a CI step runs also print the CI formats (docs/ci.md)
    ci_commands = {"audit", "compare", "filter"}
    for command in COMMANDS:
        expected = "table|json|csv|md" + ("|sarif|junit" if command in ci_commands else "")
        assert _options(command)["--format"].metavar == expected, command


def test_version_and_short_help():
    runner = CliRunner()
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and re.fullmatch(r"overlap \d+\.\d+\.\d+\S*\n", version.stdout)
    assert runner.invoke(app, ["-h"]).stdout.startswith("Usage: overlap")
    for command in COMMANDS:
        res = runner.invoke(app, [command, "-h"], env={"COLUMNS": "200"})
        assert res.exit_code == 0 and res.stdout.startswith(f"Usage: overlap {command}"), command


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_metavars_and_choices(command):
    text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout
    usage = text.splitlines()[0]
    assert "{" not in usage and "<" not in usage, usage
    assert not re.search(r"<(str|int|path|list\[[^]]*\])>", text), text
    assert "{train}" not in text and "<list[str]>" not in text
    for (cmd, option), choices in CHOICES.items():
        if cmd == command:
            assert re.search(rf"{re.escape(option)} {re.escape(choices)}", text), (option, text)
    # hidden aliases are not shown (they still parse, see below)
    assert "--field" not in text and not re.search(r"--n\b", text)


def test_compare_usage_names_the_arguments():
    text = CliRunner().invoke(app, ["compare", "--help"]).stdout
    assert text.splitlines()[0] == "Usage: overlap compare [OPTIONS] TRAIN BENCH..."


ALIASES = [
    # old spelling → canonical spelling (same parameter)
    ("ngram", "--field", "--text"), ("ngram", "--n", "--ngram"), ("ngram", "-n", "--ngram"),
    ("compare", "-n", "--ngram"), ("audit", "--output", "--out"), ("audit", "-o", "--out"),
]


@pytest.mark.parametrize(("command", "old", "new"), ALIASES, ids=[f"{c} {o}" for c, o, _ in ALIASES])
def test_old_spellings_are_aliases(command, old, new):
    options = _options(command)
    assert options[old] is options[new]


def test_old_spellings_parse(tmp_path):
    """Old spellings from README.md and tests still run: they reach the command body (which then fails on
    the missing dataset, one line, exit 2) instead of a usage error."""
    runner = CliRunner()
    for args in (["ngram", "no-such-a", "no-such-b", "--field", "a:b", "--n", "8"],
                 ["ngram", "no-such-a", "no-such-b", "--text", "a:b", "-n", "8"],
                 ["compare", "no-such-a", "no-such-b", "--no-report", "-n", "8", "--text", "none"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "--help`)" not in res.stderr, (args, res.stderr)
    # filter --push-to-hub REPO is --push --repo REPO (checked before any work, so no network here)
    res = runner.invoke(app, ["filter", "a", "b", "--push-to-hub", "me/x", "--repo", "me/y", "-o", str(tmp_path / "f")])
    assert res.exit_code == 2 and "give the repo once" in res.stderr, res.stderr


def test_ngram_without_text_is_a_one_line_usage_error():
    res = CliRunner().invoke(app, ["ngram", "a", "b"])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == ["overlap: error: Missing option '--text'. (see `overlap ngram --help`)"]


def test_filter_push_needs_a_repo(tmp_path):
    res = CliRunner().invoke(app, ["filter", "a", "b", "--push", "--out", str(tmp_path / "f")])
    assert res.exit_code == 2 and "--push needs --repo" in res.stderr, res.stderr


def test_audit_format_choices_are_checked_at_parse_time():
    res = CliRunner().invoke(app, ["audit", ".", "--format", "xml"])
    assert res.exit_code == 2 and "--format" in res.stderr and "--help`)" in res.stderr


# --- progress and input problems on stderr -------------------------------------------------------------------


@pytest.fixture
def fake_terminal(monkeypatch):
    """stderr is a terminal: progress is on and drawn by a rich Console that believes it is one."""
    import sys

    from rich.console import Console

    import overlap.progress as progress

    progress.set_quiet(False)  # an earlier --format json run in this process turned it off
    monkeypatch.setattr(progress, "progress_enabled", lambda: not progress._quiet)
    monkeypatch.setattr(progress, "_stderr_console", lambda: Console(file=sys.stderr, force_terminal=True, width=100))
    yield
    progress.set_quiet(False)


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_compare_and_filter_show_progress_on_a_terminal(cyber, tmp_path, fake_terminal):
    from fixtures import data_args

    res = _run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "r", "--permutations", "0")
    assert res.exit_code == 0, res.stderr
    assert "comparing mimo-cyber with cybergym" in res.stderr
    res = _run("filter", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "f")
    assert res.exit_code == 0, res.stderr
    assert "filtering mimo-cyber" in res.stderr


def test_ngram_shows_a_scan_bar_on_a_terminal(cyber, fake_terminal):
    from fixtures import data_args

    res = _run("ngram", "mimo-cyber", "cybergym", *data_args(cyber), "--text", "prompt:description", "-n", "8")
    assert res.exit_code == 0, res.stderr
    assert "n-gram scan of mimo-cyber" in res.stderr


def test_no_progress_when_stderr_is_not_a_terminal_or_the_output_is_json(cyber, tmp_path, fake_terminal,
                                                                          monkeypatch):
    from fixtures import data_args

    res = _run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--no-report", "--format", "json",
               "--permutations", "0")
    assert res.exit_code == 0 and "comparing" not in res.stderr
    import overlap.progress as progress

    progress.set_quiet(False)
    monkeypatch.setattr(progress, "progress_enabled", lambda: False)
    res = _run("filter", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "f")
    assert res.exit_code == 0 and "filtering" not in res.stderr and "\x1b" not in res.stderr, res.stderr


def test_input_problems_are_summarised_on_stderr(cyber, tmp_path):
    """The fixture's MiMo set holds a malformed id and the mapping a malformed row: each problem kind is one
    stderr line with its count and first example, then where the rest is."""
    from fixtures import data_args

    out = tmp_path / "r"
    res = _run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", out, "--permutations", "0")
    assert res.exit_code == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text())
    problems = summary["train"]["problems"]
    assert problems, "the fixture should have input problems"
    lines = res.stderr.splitlines()
    assert "overlap: input problems (counted, not fatal):" in lines
    first = problems[0]
    assert any(line.startswith(f"overlap: mimo-cyber: {first['count']:,} × {first['what'].replace('_', ' ')}")
               and str(first["example"])[:20] in line for line in lines), res.stderr
    assert lines[-1].endswith(f"see {out / 'summary.json'}") or any("see " in line for line in lines)


def test_problem_lines_are_capped():
    from overlap.model import Problem
    from overlap.progress import MAX_PROBLEM_LINES, problem_lines

    many = [("big", [Problem(f"kind_{i}", i + 1, f"ex{i}") for i in range(20)])]
    lines = problem_lines(many, "summary.json")
    assert len(lines) == MAX_PROBLEM_LINES + 2
    assert lines[1] == "big: 1 × kind 0 (first: ex0)"
    assert lines[-1] == "… 12 more; see summary.json"
    assert problem_lines([("clean", [])], "summary.json") == []
