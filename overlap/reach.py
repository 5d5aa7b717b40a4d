"""Reaching another machine without hanging: one short TCP connect to see whether anything answers, and a
Ray session whose address is checked before `ray.init` (which, where nothing listens, retries for minutes).
At the floor of the layers: the Hub reader, the text scan's Ray engine and the audit's Ray engine use it."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from .errors import HubUnavailableError, InputError

CONNECT_SECONDS = 3.0
_ADDRESS = re.compile(r"^(?:ray://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):\d{1,5}$")


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


def check_ray_address(address: str | None, where: str = "--ray-address") -> None:
    """One InputError line when `address` is not a Ray address, or nothing answers at it."""
    if address is None or address in ("auto", "local"):
        return
    text = address.strip()
    if not _ADDRESS.match(text) or not 0 < int(text.rsplit(":", 1)[1]) < 65536:
        raise InputError(f"{where} {address!r}: not a Ray address; give HOST:PORT (the head's GCS, e.g. "
                         "10.0.0.5:6379) or ray://HOST:PORT (Ray Client, e.g. ray://head:10001), or leave it out "
                         "for a local Ray")
    why = probe(text if text.startswith("ray://") else f"ray://{text}", timeout=CONNECT_SECONDS)
    if why is not None:
        raise HubUnavailableError(f"{where} {address}: no Ray cluster answers there ({why}); start it "
                                  "(`ray start --head`) or check the address")


def env_address(address: str | None) -> tuple[str | None, str]:
    """The Ray address to use (the option, else RAY_ADDRESS) and where it came from, for messages."""
    if address:
        return address, "--ray-address"
    env = os.environ.get("RAY_ADDRESS") or None
    return env, "RAY_ADDRESS"


def import_ray(data: bool = False):
    """Ray (with Ray Data when `data`), or a one-line error saying how to install it."""
    try:
        import ray  # optional extra: pip install 'overlap[ray]'

        if data:
            import ray.data  # noqa: F401
    except ImportError:
        raise InputError("the ray engine needs Ray: pip install 'overlap[ray]'") from None
    return ray


@contextmanager
def ray_session(address: str | None, workers: int | None = None, *, data: bool = False) -> Iterator[Any]:
    """Ray, ready: the session already initialised in this process, else the cluster at `address` (or
    `RAY_ADDRESS`; checked first, as `ray.init` retries for minutes where nothing answers), else a local Ray
    with `workers` CPUs that sends no usage statistics unless the user asked for them. A session started here
    is shut down on the way out."""
    address, where = env_address(address)
    ray = import_ray(data)
    started = False
    if not ray.is_initialized():
        check_ray_address(address, where)
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address="local", num_cpus=workers or None, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()
