"""Whether the Hub can be reached, asked once per run with one short TCP connect.

Without it, a run with no network and `HF_HUB_OFFLINE` unset spends half a minute in huggingface_hub's
retries (five, with back-off) before saying anything, or fails with an HTTP client error nobody expects.
With it, an unreachable Hub is known in a few seconds: the Hub cache is read as with `HF_HUB_OFFLINE=1`,
and what is not cached is one line saying the network is down.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

CONNECT_SECONDS = 3.0
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


def probe(url: str, timeout: float = CONNECT_SECONDS) -> str | None:
    """None when a TCP connection to the host of `url` opens within `timeout` seconds, else why not."""
    parts = urlsplit(url if "://" in url else f"https://{url}")
    host = parts.hostname or ""
    try:
        port = parts.port or (80 if parts.scheme == "http" else 443)
    except ValueError:
        return f"{url} is not a valid address"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return f"cannot resolve {host} (no network or no DNS)"
    except TimeoutError:
        return f"no answer from {host}:{port} within {timeout:g} s"
    except OSError as exc:
        return f"cannot connect to {host}:{port} ({exc.strerror or type(exc).__name__})"


def down_hint(reason: str) -> str:
    return f"the network is down or the Hub unreachable ({reason})"
