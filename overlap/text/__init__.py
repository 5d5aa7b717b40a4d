"""Text evidence: word n-gram filter view (index + scan), boilerplate, pair runs, identifiers.

The n-gram engine (bench index, hashing, boilerplate, the streamed scan, its workers and its local and Ray
engines) is the subpackage :mod:`overlap.text.ngram`; the modules here are the text check around it.
Submodules load lazily so the scan workers import numpy and pyarrow only (no pandas):
``overlap.text.text_check`` / ``TextResult`` come from :mod:`overlap.text.api`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TextResult", "text_check"]

# The largest word n-gram size (`--ngram`, `--drop ngram:<n>`, the library's `ns`): the scan holds n hashes
# per window, and no decontamination rule uses more.
MAX_NGRAM = 64


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api  # imported on first use: `import overlap.text` stays cheap (CLI start-up)

        return getattr(api, name)
    raise AttributeError(name)
