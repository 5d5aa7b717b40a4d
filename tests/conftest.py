import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
# A local Ray (tests/text/test_engines_ray.py) must not report usage statistics over the network; set before
# any Ray process starts (its workers inherit the environment).
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

# Property tests draw the same examples on every machine and keep no example database: a failure found once
# must not change what later runs (or CI, on a fresh clone) test, and nothing is written into the repository.
settings.register_profile("overlap", database=None, derandomize=True)
settings.load_profile("overlap")


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path_factory):
    """Tests never touch the network: offline mode on, caches in a temp folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OVERLAP_OFFLINE", "1")
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("OVERLAP_CACHE", str(cache / "overlap"))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache / "hub"))
    monkeypatch.delenv("HF_HOME", raising=False)


@pytest.fixture
def cyber(tmp_path):
    from fixtures import write_all

    return write_all(tmp_path / "data")


@pytest.fixture(autouse=True)
def _registry_restored():
    """The dataset registry is process-wide: declarations a test adds (`--registry`, declared paths) are
    removed after it, so no later test sees them."""
    from overlap.sources.registry import registry

    registry._load_builtin()
    saved = dict(registry._REGISTRY), dict(registry._ALIASES)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved[0])
    registry._ALIASES.clear()
    registry._ALIASES.update(saved[1])
