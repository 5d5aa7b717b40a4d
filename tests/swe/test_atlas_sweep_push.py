"""`overlap atlas --push` against a fake Hub: a push that cannot succeed (an id the Hub refuses, no token, a
read-only one) is refused before the atlas is made, `--create-pr` alone is a usage error, and an upload that
fails on the way is one line naming the repo and the folder already written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from overlap.cli import app
from overlap.outputs.ship import atlas_repo

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


class FakeHub:
    def __init__(self, token: str | None = "hf_fake", role: str = "write", fail: Exception | None = None):
        self.token, self.role, self.fail, self.uploads = token, role, fail, []

    def whoami(self):
        return {"auth": {"accessToken": {"role": self.role}}}

    def repo_info(self, repo_id, repo_type):
        return {"id": repo_id}

    def upload_folder(self, **kwargs):
        if self.fail is not None:
            raise self.fail
        self.uploads.append(kwargs)
        return type("Info", (), {"pr_url": None, "commit_url": "https://hub.invalid/commit/1"})()


def _run(tmp_path, monkeypatch, hub: FakeHub, *args: str):
    monkeypatch.setattr(atlas_repo, "_hub_api", lambda token: hub)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no token file of the machine's
    data = [a for n in ("mimo-cyber", "cybergym", "arvo") for a in ("-d", f"{n}={DEMO / n}")]
    return CliRunner().invoke(app, ["atlas", "mimo-cyber", "cybergym", *data, "--pool", "none",
                                    "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "atlas"), *args])


@pytest.mark.parametrize("repo", ["not a repo", "a/b/c", "../x", ""])
def test_a_repo_id_the_hub_cannot_take_is_refused_before_any_work(tmp_path, monkeypatch, repo):
    hub = FakeHub()
    done = _run(tmp_path, monkeypatch, hub, "--push", repo)
    assert done.exit_code == 2 and "not a Hub dataset repo id" in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not hub.uploads and not (tmp_path / "atlas").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize("hub, words", [(FakeHub(token=None), "no Hugging Face token"),
                                        (FakeHub(role="read"), "read-only")])
def test_a_push_without_write_access_is_refused_before_any_work(tmp_path, monkeypatch, hub, words):
    done = _run(tmp_path, monkeypatch, hub, "--push", "me/atlas")
    assert done.exit_code == 2 and words in done.output, done.output
    assert not (tmp_path / "atlas").exists() and not (tmp_path / "cache").exists()


def test_create_pr_without_push_is_a_usage_error(tmp_path, monkeypatch):
    done = _run(tmp_path, monkeypatch, FakeHub(), "--create-pr")
    assert done.exit_code == 2 and "--create-pr needs --push" in done.output, done.output
    assert not (tmp_path / "atlas").exists()


def test_an_upload_that_fails_on_the_way_names_the_repo_and_the_folder(tmp_path, monkeypatch):
    import requests

    hub = FakeHub(fail=requests.ConnectionError("connection reset"))
    done = _run(tmp_path, monkeypatch, hub, "--push", "me/atlas")
    assert done.exit_code == 2, done.output
    (line,) = [x for x in done.output.splitlines() if x.startswith("overlap: error")]
    assert "me/atlas" in line and "connection reset" in line and str(tmp_path / "atlas") in line
    assert (tmp_path / "atlas" / "data" / "cells.parquet").is_file()  # the atlas is whole, only the push failed
    assert os.environ.get("HF_TOKEN") is None
