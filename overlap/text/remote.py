"""Reaching other machines from a scan without hanging: a Ray cluster's address, checked before `ray.init`,
and object-store URIs (`s3://`, `gs://`) opened with short timeouts.

Ray, given an address where nothing listens, retries for minutes; pyarrow's cloud clients retry for up to
15 minutes when the network is down, inside C++ code where a SIGTERM is not seen. So:

- a Ray address is checked for its form (`HOST:PORT`, `ray://HOST:PORT`, `auto`, `local`) and its port
  probed with one TCP connect of a few seconds; either failing is one line;
- an object store is opened with a retry limit of seconds, and listed in a helper thread while the main
  thread waits: a signal (SIGTERM, Ctrl-C) ends the run at once, whatever the listing is doing.
"""

from __future__ import annotations

import os
import re
import threading
from datetime import timedelta
from typing import Any

from ..errors import HubUnavailableError, InputError
from ..sources.hub_net import probe

CONNECT_SECONDS = 3.0
RETRY_SECONDS = 10
_ADDRESS = re.compile(r"^(?:ray://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):\d{1,5}$")


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


def uri_filesystem(uri: str) -> tuple[Any, str]:
    """(pyarrow filesystem, path) of an object-store URI, with retries bounded to RETRY_SECONDS."""
    import pyarrow.fs as pafs

    scheme = uri.split("://", 1)[0].lower()
    path = uri.split("://", 1)[1]
    if scheme in ("gs", "gcs"):
        return pafs.GcsFileSystem(retry_time_limit=timedelta(seconds=RETRY_SECONDS)), path
    if scheme == "s3":
        fs, path = pafs.FileSystem.from_uri(uri)  # the bucket's region and credentials, as pyarrow finds them
        return pafs.S3FileSystem(region=getattr(fs, "region", None), connect_timeout=CONNECT_SECONDS,
                                 request_timeout=RETRY_SECONDS,
                                 retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=2)), path
    return pafs.FileSystem.from_uri(uri)


def interruptible(work, what: str):
    """`work()` run in a helper thread while this thread waits for it: a signal handler (SIGTERM → exit)
    runs at once even when `work` blocks in C++ code; the helper is a daemon and dies with the process."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name=f"overlap-{what}", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if "error" in box:
        raise box["error"]
    return box.get("value")


def env_address(address: str | None) -> tuple[str | None, str]:
    """The Ray address to use (the option, else RAY_ADDRESS) and where it came from, for messages."""
    if address:
        return address, "--ray-address"
    env = os.environ.get("RAY_ADDRESS") or None
    return env, "RAY_ADDRESS"
