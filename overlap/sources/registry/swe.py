"""What the rest of overlap uses of the SWE task sets (GitHub pull requests at a base commit): the item column of
the issue text, and the columns some sets fetch later (`later_columns`). The sets themselves are declarations
(`declarations/<name>.toml`) read by the one reader (`declared`).
"""

from __future__ import annotations

from .later_columns import TEXT, ensure_columns, fetch_columns, lazy_columns

__all__ = ["TEXT", "ensure_columns", "fetch_columns", "lazy_columns"]
