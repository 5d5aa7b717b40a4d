"""Pull-request identities: canonical repos (case, renames), PR numbers, base commits, task ids, keys."""

from __future__ import annotations

import math

import numpy as np
import pytest

from overlap.errors import InputError
from overlap.ids.github import (
    RENAMES_FILE,
    canonical_repo,
    instance_id_for,
    known_renames,
    normalize_base,
    parse_instance_id,
    parse_pr,
    parse_renames,
    pr_keys,
    split_key,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_shipped_renames_have_a_source_column_and_the_documented_renames():
    header = RENAMES_FILE.read_text(encoding="utf-8").splitlines()[0]
    assert header == "old,new,source"
    assert known_renames() == {"kbknapp/clap-rs": "clap-rs/clap", "jlongster/prettier": "prettier/prettier"}


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("kbknapp/clap-rs", "clap-rs/clap"),
        ("KBKnapp/Clap-RS", "clap-rs/clap"),
        ("jlongster/prettier", "prettier/prettier"),
        ("BurntSushi/ripgrep", "burntsushi/ripgrep"),
        ("burntsushi/ripgrep", "burntsushi/ripgrep"),
        (" Kotlin/kotlinx.coroutines ", "kotlin/kotlinx.coroutines"),
        ("https://github.com/BurntSushi/ripgrep.git", "burntsushi/ripgrep"),
        ("github.com/tokio-rs/tokio/", "tokio-rs/tokio"),
    ],
)
def test_canonical_repo(written, canonical):
    assert canonical_repo(written) == canonical


@pytest.mark.parametrize("bad", [None, "", "ripgrep", "a/b/c", "own er/repo", float("nan"), "/repo"])
def test_not_a_repo(bad):
    assert canonical_repo(bad) is None


def test_renames_chain_and_reject_conflicts_and_cycles():
    table = parse_renames("old,new,source\nA/x,B/x,s\nb/x,C/y,s\n")
    assert table == {"a/x": "c/y", "b/x": "c/y"}
    assert canonical_repo("a/X", table) == "c/y"
    with pytest.raises(InputError, match="both"):
        parse_renames("old,new,source\na/x,b/x,s\na/x,c/x,s\n")
    with pytest.raises(InputError, match="cycle"):
        parse_renames("old,new,source\na/x,b/x,s\nb/x,a/x,s\n")
    with pytest.raises(InputError, match="header"):
        parse_renames("a/x,b/x\n")


@pytest.mark.parametrize(
    ("value", "number"),
    [(941, 941), ("941", 941), (19284.0, 19284), ("19284.0", 19284), (" 7 ", 7), (np.int64(12), 12),
     (np.float64(3.0), 3)],
)
def test_parse_pr(value, number):
    assert parse_pr(value) == number


# "+5": ids have no sign.
@pytest.mark.parametrize("value", [None, "", "abc", "#12", 1.5, "1.5", -3, 0, "0", True, math.nan, "12a", "+5"])
def test_parse_pr_rejects(value):
    assert parse_pr(value) is None


def test_base_commits_lowercased_and_empty_never_a_key():
    assert normalize_base(SHA.upper()) == SHA
    assert normalize_base(f"  {SHA} ") == SHA
    for bad in (None, "", "   ", "N/A", "not-a-sha", math.nan):
        assert normalize_base(bad) is None


@pytest.mark.parametrize(
    ("instance_id", "parsed"),
    [
        ("kbknapp__clap-rs-941", ("kbknapp", "clap-rs", 941)),
        ("Kotlin__kotlinx.coroutines-3000", ("Kotlin", "kotlinx.coroutines", 3000)),
        ("keras-team__keras-19284", ("keras-team", "keras", 19284)),
        ("owner__name__with__underscores-7", ("owner", "name__with__underscores", 7)),
        ("not-an-id", None),
        ("instance_ansible__ansible-f327e65d11bb905ed9f15996024f857a95592629-vba6da65a0f3b", None),
        ("owner__repo-", None),
        (None, None),
    ],
)
def test_parse_instance_id(instance_id, parsed):
    assert parse_instance_id(instance_id) == parsed


def test_instance_id_for_and_split_key():
    assert instance_id_for("clap-rs/clap", 941) == "clap-rs__clap-941"
    assert split_key("clap-rs/clap#941") == ("clap-rs/clap", 941)
    assert split_key(SHA) == (SHA, None)


def test_keys_of_a_full_task():
    keys = pr_keys("kbknapp/clap-rs", "941", SHA.upper())
    assert keys == [
        ("repo_pr", "clap-rs/clap#941", "kbknapp/clap-rs#941"),
        ("repo_pr_exact", "kbknapp/clap-rs#941", "kbknapp/clap-rs#941"),
        ("base_pr", f"{SHA}#941", f"{SHA.upper()}#941"),
        ("base", SHA, SHA.upper()),
    ]


def test_keys_of_partial_tasks():
    assert [k for k, _, _ in pr_keys("a/b", 5, "")] == ["repo_pr", "repo_pr_exact"]
    assert [k for k, _, _ in pr_keys(None, 5, SHA)] == ["base_pr", "base"]
    assert [k for k, _, _ in pr_keys("a/b", "abc", SHA)] == ["base"]
    assert pr_keys(None, None, None) == []
    assert pr_keys("a/b", 5, "N/A") == [("repo_pr", "a/b#5", "a/b#5"), ("repo_pr_exact", "a/b#5", "a/b#5")]
