"""`--ray-address` given with the local engine would be ignored, so every command that takes it refuses it in
one line before any work; RAY_ADDRESS in the environment (a Ray cluster sets it for every process) is left to
wait for `--engine ray` and the command runs on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from overlap.cli import app

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
DATA = ["-d", f"mimo-cyber={DEMO / 'mimo-cyber'}", "-d", f"cybergym={DEMO / 'cybergym'}", "-d", f"arvo={DEMO / 'arvo'}"]


def _commands(out: Path) -> dict[str, list[str]]:
    return {
        "compare": ["compare", "mimo-cyber", "cybergym", *DATA, "--pool", "none", "--no-evidence", "--out", str(out)],
        "filter": ["filter", "mimo-cyber", "cybergym", *DATA, "--out", str(out)],
        "ngram": ["ngram", "mimo-cyber", "cybergym", *DATA, "--text", "prompt:description"],
        "atlas": ["atlas", "mimo-cyber", "cybergym", *DATA, "--pool", "none", "--cache", str(out.parent / "cache"),
                  "--out", str(out)],
        "audit": ["audit", str(DEMO), "--out", str(out)],
    }


@pytest.mark.parametrize("command", ["compare", "filter", "ngram", "atlas", "audit"])
def test_ray_address_with_the_local_engine_is_refused_before_any_work(tmp_path, command):
    out = tmp_path / "out"
    done = CliRunner().invoke(app, [*_commands(out)[command], "--ray-address", "ray://head:10001"])
    assert done.exit_code == 2, done.output
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and "--ray-address ray://head:10001" in lines[0] and "--engine ray" in lines[0], lines
    assert not out.exists() and not (tmp_path / "cache").exists()


def test_ray_address_from_the_environment_waits_for_the_ray_engine(tmp_path):
    out = tmp_path / "out"
    done = CliRunner().invoke(app, _commands(out)["compare"], env={"RAY_ADDRESS": "ray://head:10001"})
    assert done.exit_code == 0, done.output
    assert (out / "summary.json").exists()
