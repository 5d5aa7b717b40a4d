"""One vocabulary across commands (issue 16): shared options have the same names everywhere, old spellings
still parse, --help shows real metavars and the choices, `--version` and `-h` work."""

from __future__ import annotations

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
    for command in COMMANDS:
        assert _options(command)["--format"].metavar == "table|json|csv|md", command


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
