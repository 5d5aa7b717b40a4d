"""Object-store URIs (`s3://`, `gs://`) read by a scan without hanging (a Ray cluster's address is checked in
`overlap.reach`).

pyarrow's cloud clients retry for up to 15 minutes when the network is down, inside C++ code where a SIGTERM
is not seen. So an object store is opened with a retry limit of seconds, and listed in a helper thread while
the main thread waits: a signal (SIGTERM, Ctrl-C) ends the run at once, whatever the listing is doing.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from ...reach import CONNECT_SECONDS

RETRY_SECONDS = 10


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


