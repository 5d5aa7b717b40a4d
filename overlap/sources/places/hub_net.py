"""Whether the Hub can be reached, asked once per run with one short TCP connect.

Without it, a run with no network and `HF_HUB_OFFLINE` unset spends half a minute in huggingface_hub's
retries (five, with back-off) before saying anything, or fails with an HTTP client error nobody expects.
With it, an unreachable Hub is known in a few seconds: the Hub cache is read as with `HF_HUB_OFFLINE=1`,
and what is not cached is one line saying the network is down.
"""

from __future__ import annotations

import os

from ...reach import probe

_ANSWERS: dict[str, str | None] = {}


def endpoint() -> str:
    """The Hub's address (HF_ENDPOINT, else huggingface_hub's default)."""
    if os.environ.get("HF_ENDPOINT"):
        return os.environ["HF_ENDPOINT"].rstrip("/")
    from huggingface_hub import constants

    return constants.ENDPOINT.rstrip("/")


def unreachable() -> str | None:
    """Why the Hub cannot be reached (e.g. "cannot connect to huggingface.co: Connection refused"), or None
    when a TCP connection to it opens within CONNECT_SECONDS. Asked once per endpoint and process."""
    url = endpoint()
    if url not in _ANSWERS:
        _ANSWERS[url] = probe(url)
    return _ANSWERS[url]


def down_hint(reason: str) -> str:
    return f"the network is down or the Hub unreachable ({reason})"
