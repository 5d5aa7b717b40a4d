"""The audit's fixtures, built once per session with real git in a temp folder.

The shell recipes live in ``fixtures/*.sh``; commits carry pinned dates, so object IDs are stable.
"""

from __future__ import annotations

import shutil

import pytest
from audit_helpers import Fixtures, build, load_ids


@pytest.fixture(scope="session")
def gitfix(tmp_path_factory) -> Fixtures:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    L = tmp_path_factory.mktemp("audit") / "L"
    L.mkdir()
    build(L, "git.sh", "times.sh", "leftovers.sh", "image.sh")
    ids = load_ids(L)
    return Fixtures(L, ids["BASE"], ids["FIX"])
