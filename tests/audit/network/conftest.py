"""Fixtures of the network route's tests: fix scenarios (scenarios.py) released to real index servers on
loopback."""

from __future__ import annotations

import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("OVERLAP_CACHE", str(folder))
    monkeypatch.delenv("OVERLAP_OFFLINE", raising=False)
    for var in ("PIP_INDEX_URL", "NPM_CONFIG_REGISTRY", "GOPROXY", "PIP_CONFIG_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return folder
