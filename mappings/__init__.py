"""Package anchor for the identity data the tool ships (`repo_renames.csv`), importable as `overlap._mappings`.

pyproject.toml maps this folder to `overlap._mappings` so the same lookup (`overlap.resources.renames_file`)
works in an editable and a regular install. It holds no code.
"""
