"""When a server asks to be asked again, for the registry and the package-index clients alike: 429 and 502–504
are retried up to 3 times, after what ``Retry-After`` says (seconds or an HTTP date) or 1, 2, 4 s; a server
that asks for more than 30 s is not waited for (a task must not hang on one server), the caller says so."""

from __future__ import annotations

import time

MAX_RETRIES = 3
RETRY_AFTER_CAP = 30.0
RETRYABLE = (429, 502, 503, 504)


def retry_wait(status: int, header: str | None, retries_done: int) -> float | None:
    """Seconds to wait before asking again after an answer `status` with `Retry-After: header`, when it is
    retried (`retries_done` of `MAX_RETRIES` used); None when it is not. A wait past `RETRY_AFTER_CAP` is
    returned as asked: the caller refuses it in its own words."""
    if status not in RETRYABLE or retries_done >= MAX_RETRIES:
        return None
    return retry_after(header, 2.0 ** retries_done)


def retry_after(value: str | None, default: float) -> float:
    """Seconds from a Retry-After header (seconds or an HTTP date); ``default`` when absent or unreadable."""
    if not value:
        return default
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        from email.utils import parsedate_to_datetime

        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return default
