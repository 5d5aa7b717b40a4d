"""The hand-made fixtures of the evidence tests (real formats, made-up values) live in data/."""

from pathlib import Path

DATA = Path(__file__).parent / "data"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")
