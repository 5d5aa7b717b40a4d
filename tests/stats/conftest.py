"""Fixtures shared by the chance-baseline tests: a tiny ARVO-Meta clone and a network that refuses."""

import pytest
from stats_fixtures import block_network, write_meta_clone


@pytest.fixture
def meta_clone(tmp_path):
    return write_meta_clone(tmp_path / "ARVO-Meta")


@pytest.fixture
def no_network(monkeypatch):
    block_network(monkeypatch)
