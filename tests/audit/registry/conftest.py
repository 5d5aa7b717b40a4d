"""Session fixtures: one real registry with three images pushed to it (a leaking one, a single-commit one
sharing its base layer, and a base-only one), and a fresh fault proxy per test."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from regkit import Builder, Proxy, Registry, make_repo, need_tools


@dataclass
class Images:
    registry: Registry
    fix_patch: Path
    base_layer: str  # digest of the layer both task images share

    @property
    def host(self) -> str:
        return self.registry.host


@pytest.fixture(scope="session")
def images(tmp_path_factory) -> Images:
    need_tools()
    root = tmp_path_factory.mktemp("registry")
    reg = Registry(root / "registry")
    try:
        b = Builder(root / "build")

        def base(rootfs: Path) -> None:
            (rootfs / "etc").mkdir(exist_ok=True)
            (rootfs / "etc" / "os-release").write_text('ID=test\nNAME="test base"\n')
            (rootfs / "usr" / "share").mkdir(parents=True, exist_ok=True)
            # incompressible, so the shared layer is the bulk of each image's bytes
            (rootfs / "usr" / "share" / "base.bin").write_bytes(os.urandom(1 << 18))

        b.derive("empty", "base", base, workdir=None)
        patch = {}

        def leak(rootfs: Path) -> None:
            patch["text"] = make_repo(rootfs / "testbed", leak=True)

        def clean(rootfs: Path) -> None:
            make_repo(rootfs / "testbed", leak=False)

        b.derive("base", "leak", leak)
        b.derive("base", "clean", clean)
        for tag in ("base", "leak", "clean"):
            b.push(tag, reg.host, f"task/{tag}:1")
        fix = root / "fix.patch"
        fix.write_text(patch["text"])
        shutil.rmtree(root / "build")
        _, base_manifest = reg.manifest("task/base", "1")
        yield Images(reg, fix, base_manifest["layers"][-1]["digest"])
    finally:
        reg.stop()


@pytest.fixture
def proxy(images):
    p = Proxy(images.registry.port)
    yield p
    p.close()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A private blob cache for one test; offline switches off and short timeouts."""
    c = tmp_path / "cache"
    monkeypatch.setenv("OVERLAP_CACHE", str(c))
    monkeypatch.delenv("OVERLAP_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("OVERLAP_REGISTRY_TIMEOUT", "2")
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(tmp_path / "no-auth.json"))
    return c
