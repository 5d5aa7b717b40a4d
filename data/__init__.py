"""Package anchor for the shipped demo inputs (`data/demo/`), importable as `overlap._data`.

pyproject.toml maps this folder to `overlap._data` so the same lookup (`overlap.resources.demo_root`)
works in an editable and a regular install. It holds no code.
"""
