# ruff: noqa: F811  (the swe_data fixture is a test argument of the same name)
"""Following one `train` argument through `overlap compare`, call by call: every call's stack passes through
overlap's folders in layer order (cli > api > sources > ids …) and never comes back to a folder it left (no
callback from a lower layer into a higher one, no reader that hands rows back and forth between `sources/` and
`ids/`). The trace is sys.setprofile over the real command on fixture data."""

from __future__ import annotations

import collections
import os
import sys

from swe_fixtures import swe_data  # noqa: F401

import overlap
from overlap.cli import app

ROOT = os.path.dirname(overlap.__file__)


def _folder(path: str) -> str:
    parts = os.path.relpath(path, ROOT).split(os.sep)
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def trace(args: list[str]) -> collections.Counter:
    """{folder path of a call's stack, e.g. 'cli > api > sources > ids': calls} of one command run."""
    paths: collections.Counter = collections.Counter()
    stack: list[str | None] = []

    def profile(frame, event, arg):
        if event == "call":
            name = frame.f_code.co_filename
            inside = name.startswith(ROOT)
            stack.append(_folder(name) if inside else None)
            if inside:
                seen: list[str] = []
                for folder in stack:
                    if folder and (not seen or seen[-1] != folder):
                        seen.append(folder)
                paths[" > ".join(seen)] += 1
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    try:
        app(args, standalone_mode=False)
    finally:
        sys.setprofile(None)
    return paths


def test_a_train_argument_goes_down_the_layers_once(swe_data, capsys):
    args = ["compare", "swe-rebench-v2", "swe-bench", "--data", f"swe-rebench-v2={swe_data['swe-rebench-v2']}",
            "--data", f"swe-bench={swe_data['swe-bench']}", "--no-report", "--pool", "none", "--no-evidence",
            "--text", "none", "--format", "json"]
    paths = trace(args)
    capsys.readouterr()
    back = [p for p in paths if len(p.split(" > ")) != len(set(p.split(" > ")))]
    assert back == [], f"stacks that return to a folder they left: {back}"
    # The train set is read by the one reader (sources) whose ids are recognised below it (ids), and joined.
    assert paths["cli > api > sources > ids"] > 0 and paths["cli > api > join"] > 0
    assert not [p for p in paths if p.startswith("cli > api > sources > ids > sources")]
