"""Shared fixtures for the output tests: the demo compare, and a copy of the demo data in a temp folder
(so tests may change files without touching the package)."""

import shutil

import pytest
from outputs_helpers import FakeHfApi

from overlap.api import compare
from overlap.api.demo import DEMO_ROOT, demo_data


@pytest.fixture
def demo_result():
    # The bare compare: tests add the evidence columns they exercise themselves.
    return compare("mimo-cyber", ["cybergym"], data=demo_data(), evidence=False, text=[])


@pytest.fixture
def demo_copy(tmp_path):
    root = tmp_path / "demo"
    shutil.copytree(DEMO_ROOT, root)
    return {name: root / name for name in ("mimo-cyber", "cybergym", "arvo")}


@pytest.fixture
def fake_api():
    return FakeHfApi()
