"""Robustness corpus, options: every command's options given values out of range, NaN, negative, huge, empty,
unicode, generated text. A bad value is exit 2 with one line, found before any work; a gate (`--fail-on`)
never silently passes or always fails."""

from __future__ import annotations

import subprocess

import pytest
from corpus_contract import FAST, cyber_data, data_args, run_checked
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

HOSTILE = ["", " ", "nan", "NaN", "inf", "-inf", "-1", "0", "-0", "1e400", "99999999999999999999", "1.5", "０", "١",
           "\u202e5", "5\x00", "%", "5%%", "-5%", "nan%", "inf%", "101%", "1e-400%", "\n", "x" * 5000]


@pytest.fixture
def cyber(tmp_path):
    return cyber_data(tmp_path / "data")


def _compare(cyber, *extra):
    return ["compare", "mimo-cyber", "cybergym", *data_args(cyber), "--no-report", "--format", "json", *FAST, *extra]


@pytest.mark.parametrize("value", ["nan%", "nan", "inf", "inf%", "-1", "-1%", "-0.5%", "101%", "1e400", "", "%",
                                   "０", "1,5", "1.5"])
def test_fail_on_values_that_are_no_gate(value, cyber, tmp_path):
    """`--fail-on nan%` never failed (a CI gate that always passes), `-1` always did: both are refused."""
    run_checked(f"option:--fail-on={value!r}", _compare(cyber, "--fail-on", value), root=tmp_path, expect=2)


@pytest.mark.parametrize("value,expect", [("0", {0, 1}), ("0%", {0, 1}), ("100%", {0}), ("4", {1}), ("99999", {0}),
                                          (" 4 ", {1}), ("57%", {1})])
def test_fail_on_valid_values(value, expect, cyber, tmp_path):
    run_checked(f"option:--fail-on={value!r}", _compare(cyber, "--fail-on", value), root=tmp_path, expect=expect)


@pytest.mark.parametrize("option,value", [
    ("--ngram", "0"), ("--ngram", "-1"), ("--ngram", "65"), ("--ngram", "99999999999999999999"), ("--ngram", "nan"),
    ("--ngram", "1.5"), ("--ngram", ""), ("--permutations", "99999999999"), ("--permutations", "-1"),
    ("--permutations", "1e9"), ("--permutations", "nan"), ("--seed", "-1"), ("--seed", "99999999999999999999999"),
    ("--seed", "0x10"), ("--seed", "nan"), ("--pool", "nowhere"),
    ("--pool", ""), ("--fix-join", "sometimes"), ("--fix-join", ""), ("--text", "a:b:c"), ("--text", ":"),
    ("--text", ""), ("--text", "nosuchfield:description"), ("--reference", "nowhere"),
    ("--format", "xml"), ("--format", ""), ("--data", "="), ("--data", "arvo="), ("--data", "=x"),
    ("--data", "nosuch=."), ("--data", "arvo=/nonexistent/x.csv"), ("--data", "cybergym=\x00"),
])
def test_compare_option_out_of_range(option, value, cyber, tmp_path):
    base = ["compare", "mimo-cyber", "cybergym", *data_args(cyber), "--no-report", "--format", "json", "--no-evidence"]
    if option not in ("--pool", "--strata"):
        base += ["--pool", "none"]
    if option != "--text":
        base += ["--text", "none"]
    if option == "--format":
        base.remove("--format")
        base.remove("json")
    run_checked(f"option:compare:{option}={value!r}", [*base, option, value], root=tmp_path, expect=2)


@pytest.mark.parametrize("args", [
    ["compare", "--reference", "cybergym"], ["compare", "--reference", "multi-swe-rl-discarded"],
    ["compare", "--reference-range"], ["compare", "--fix-join", "on"], ["compare", "--ngram", "64"],
    ["compare", "--ngram", "1"], ["compare", "--text", "prompt:description", "--ngram", "1"],
    ["ngram", "--boilerplate-threshold", "99999999999999999999"], ["ngram", "--id-column", ""],
    ["ngram", "--n", "64"], ["ngram", "--n", "1", "--boilerplate-threshold", "2"],
    ["filter", "--config", "../../x"], ["filter", "--drop", "ngram:1"], ["filter", "--drop", "spec:harness"],
])
def test_odd_but_meaningful_values(args, cyber, tmp_path):
    """Values at the edge of their range or without effect here: 0 or 2, never a traceback."""
    command, *extra = args
    full = {"compare": ["compare", "mimo-cyber", "cybergym", *data_args(cyber), "--no-report", "--format", "json",
                        "--pool", "none", "--no-evidence"],
            "ngram": ["ngram", "mimo-cyber", "cybergym", *data_args(cyber), "--field", "prompt:description"],
            "filter": ["filter", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "f"]}[command]
    run_checked(f"option:{command}:{extra!r}", [*full, *extra], root=tmp_path, expect={0, 2})


@pytest.mark.parametrize("strata", ["no-such-column", "", "\u202e", "project;drop"])
def test_strata_unknown_column_with_a_pool(strata, cyber, tmp_path):
    """With a pool that loads, an unknown --strata column is a usage error (not a silently skipped baseline)."""
    import shutil

    from overlap.api.demo import DEMO_ROOT

    shutil.copytree(DEMO_ROOT / "arvo-meta", tmp_path / "arvo-meta")
    args = ["compare", "mimo-cyber", "cybergym", *data_args(cyber), "--data", f"arvo-meta={tmp_path / 'arvo-meta'}",
            "--no-report", "--format", "json", "--no-evidence", "--text", "none", "--permutations", "10",
            "--strata", strata]
    run_checked(f"option:compare:--strata={strata!r}", args, root=tmp_path, expect=2)


def test_valid_small_permutations_and_seed(cyber, tmp_path):
    args = ["compare", "mimo-cyber", "cybergym", *data_args(cyber), "--no-report", "--format", "json",
            "--no-evidence", "--text", "none", "--permutations", "10", "--seed", str(2**32 - 1)]
    run_checked("option:compare:valid-permutations", args, root=tmp_path, expect=0)


@pytest.mark.parametrize("option,value", [("--n", "0"), ("--n", "99999999999999999999"), ("--n", "-3"),
                                          ("--boilerplate-threshold", "0"), ("--boilerplate-threshold", "-1"),
                                          ("--field", "prompt"), ("--field", ":"), ("--field", "a:b:c"),
                                          ("--field", "nosuch:description"), ("--format", "xml"),
                                          ("--background", "nowhere.txt"), ("--background", ".")])
def test_ngram_option_out_of_range(option, value, cyber, tmp_path):
    args = ["ngram", "mimo-cyber", "cybergym", *data_args(cyber)]
    if option != "--field":
        args += ["--field", "prompt:description"]
    run_checked(f"option:ngram:{option}={value!r}", [*args, option, value], root=tmp_path, expect=2)


def test_ngram_background_not_utf8(cyber, tmp_path):
    (tmp_path / "bg.txt").write_bytes(b"\xff\xfe\x00\x01 not text")
    args = ["ngram", "mimo-cyber", "cybergym", *data_args(cyber), "--field", "prompt:description", "--background",
            "bg.txt"]
    run_checked("option:ngram:background-binary", args, root=tmp_path, expect=2)


@pytest.mark.parametrize("option,value", [("--drop", "nonsense"), ("--drop", ""), ("--drop", "ngram:0"),
                                          ("--drop", "ngram:99999999999999999999"), ("--drop", "ngram:nan"),
                                          ("--drop", "id:nosuchkind")])
def test_filter_option_out_of_range(option, value, cyber, tmp_path):
    args = ["filter", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "f", option, value]
    run_checked(f"option:filter:{option}={value!r}", args, root=tmp_path, expect=2)


@pytest.mark.parametrize("option,value", [("--network", "sometimes"), ("--fail-on", "nan"), ("--fail-on", "-1"),
                                          ("--format", "xml"), ("--limit", "nonsense"),
                                          ("--limit", "git_timeout=-1"), ("--limit", "git_timeout=nan"),
                                          ("--limit", "git_timeout=99999999999999999999"), ("--limit", "nosuch=1"),
                                          ("--base", "-rf"), ("--base", "HEAD;rm -rf /"), ("--fix", "nowhere.diff"),
                                          ("--instance", "nowhere.json"), ("--git", "/nonexistent/git")])
def test_audit_option_out_of_range(option, value, tmp_path):
    # a repository: a folder without one is audited too (by the checks that need no git), and these options must
    # be refused where they are used
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("x\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    run_checked(f"option:audit:{option}={value!r}", ["audit", "repo", option, value], root=tmp_path, expect=2)


def test_datasets_and_ids_bad_format(tmp_path):
    run_checked("option:datasets:--format", ["datasets", "--format", "xml"], root=tmp_path, expect=2)
    run_checked("option:ids:none", ["ids"], root=tmp_path, expect=2)
    run_checked("option:unknown-command", ["frobnicate"], root=tmp_path, expect=2)
    run_checked("option:unknown-option", ["compare", "--frobnicate"], root=tmp_path, expect=2)


@SETTINGS
@given(option=st.sampled_from(["--fail-on", "--ngram", "--permutations", "--seed", "--strata", "--fix-join",
                               "--text", "--pool"]),
       value=st.one_of(st.sampled_from(HOSTILE), st.text(max_size=20),
                       st.floats(allow_nan=True, allow_infinity=True).map(repr),
                       st.integers(min_value=-(2**80), max_value=2**80).map(str)))
def test_generated_compare_option_values(option, value, tmp_path):
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp(dir=tmp_path, prefix="case-"))
    cyber = cyber_data(root / "data")
    base = ["compare", "mimo-cyber", "cybergym", *data_args(cyber), "--no-report", "--format", "json",
            "--no-evidence"]
    if option != "--pool":
        base += ["--pool", "none"]
    if option != "--text":
        base += ["--text", "none"]
    if option == "--permutations":
        # Accepted values run the draws: keep the accepted ones small (the range check is what is fuzzed).
        try:
            if 1000 < int(value) <= 10**7:
                value = "1000"
        except ValueError:
            pass
    if option == "--pool" and value not in ("none", "auto"):
        value = str(root / "nowhere" / value.replace("/", "_").replace("\x00", "")) if value.strip() else value
    run = run_checked(f"option:compare-generated:{option}={value!r}", [*base, option, value], root=root)
    if option == "--fail-on" and run.code in (0, 1):
        text = value.strip().removesuffix("%")
        number = float(text)  # accepted: it must be a finite non-negative number
        assert number == number and number >= 0 and number != float("inf"), f"--fail-on {value!r} accepted"


@SETTINGS
@given(name=st.text(min_size=1, max_size=30))
def test_generated_dataset_names(name, tmp_path):
    """Any text as a dataset argument: an unknown name, a path that does not exist, unicode, `../..`."""
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp(dir=tmp_path, prefix="case-"))
    cyber = cyber_data(root / "data")
    args = ["compare", "mimo-cyber", "--", name]
    run_checked("option:dataset-name-generated", args[:2] + data_args(cyber) + ["--no-report", *FAST] + args[2:],
                root=root)
