"""Reading an untrusted HTTP body without hanging, one way for the registry client and the package-index
client: ``read1`` in chunks of at most ``CHUNK`` bytes (each socket read bounded by the read timeout), the whole
under a minimum average rate once ``RATE_GRACE`` seconds have passed, and the connection closed undrained
whatever happens (a hostile body is never read to its end)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import urllib3

CHUNK = 1 << 20
MIN_RATE, RATE_GRACE = 16 << 10, 30.0


class BodyBroken(Exception):
    """The body stopped or dripped: ``args`` are the one-line message and what the user can do."""


def reason(exc: BaseException) -> str:
    """A urllib3 or socket failure as a few words (never a traceback's worth of text)."""
    text = str(exc)
    # NewConnectionError is a ConnectTimeoutError subclass: tested first
    for cls, what in ((urllib3.exceptions.NewConnectionError, "cannot connect"),
                      (urllib3.exceptions.ReadTimeoutError, "no answer within the read timeout"),
                      (urllib3.exceptions.ConnectTimeoutError, "no connection within the connect timeout"),
                      (urllib3.exceptions.SSLError, "TLS failed"),
                      (urllib3.exceptions.ProtocolError, "connection broken")):
        if isinstance(exc, cls):
            return f"{what} ({text[:160]})" if cls is urllib3.exceptions.SSLError else what
    return text.splitlines()[0][:160] if text else type(exc).__name__


def discard(r: urllib3.BaseHTTPResponse) -> None:
    """Close without reading the rest: a hostile body is never drained."""
    try:
        r.close()
        r.release_conn()
    except Exception:  # noqa: BLE001 - closing a broken connection must not raise over the real error
        pass


def read_chunks(r: urllib3.BaseHTTPResponse, what: str,
                counted: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """The body of ``r`` in bounded chunks (``counted`` hears each chunk's size); raises :class:`BodyBroken`."""
    start, got = time.monotonic(), 0
    try:
        while True:
            chunk = r.read1(CHUNK, decode_content=False)
            if not chunk:
                break
            got += len(chunk)
            if counted is not None:
                counted(len(chunk))
            elapsed = time.monotonic() - start
            if elapsed > RATE_GRACE and got / elapsed < MIN_RATE:
                raise BodyBroken(f"{what}: too slow ({got:,} bytes in {elapsed:.0f} s)", "try again later")
            yield chunk
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise BodyBroken(f"{what}: {reason(exc)} after {got:,} bytes", "the download broke off; try again") \
            from None
    finally:
        discard(r)
