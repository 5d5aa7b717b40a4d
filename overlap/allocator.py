"""How an `overlap` process allocates: memory it frees is kept for reuse, not handed back to the OS at once.

The streamed join and the n-gram scan work batch after batch, each batch allocating and freeing the same few
hundred MB of temporaries (Arrow's buffers through Arrow's mimalloc pool, numpy's through the C allocator).
Handed back to the OS after each batch, those pages are faulted in and zeroed by the kernel again on the next
one: at 10M rows of the streamed join, ~340k page faults and about a tenth of its CPU time. Kept, they are
reused (~47k faults) for ~30 MB more peak memory (`benchmarks/stream_join_bench.py` runs with it).

`keep_freed_memory()` is the first thing the `overlap` command does (Arrow reads its allocator setting when it
loads). A library user who wants the same calls it first thing in their process; a setting the user made
already (the environment variables below) is left as it is.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_GLIBC = (
    # a block below 32 MB (a batch's arrays) comes from the heap, reused, not from a fresh mapping
    ("MALLOC_MMAP_THRESHOLD_", _M_MMAP_THRESHOLD, 32 << 20),
    # the heap keeps up to 1 GB free at its top rather than returning it after each batch
    ("MALLOC_TRIM_THRESHOLD_", _M_TRIM_THRESHOLD, 1 << 30),
    # and grows 64 MB at a time
    ("MALLOC_TOP_PAD_", _M_TOP_PAD, 64 << 20),
)
_DONE: list[bool] = []


def keep_freed_memory() -> None:
    """Keep freed memory for reuse in this process (once; later calls do nothing)."""
    if _DONE:
        return
    _DONE.append(True)
    if "pyarrow" not in sys.modules:  # read by Arrow's mimalloc when it loads: never purge freed pages
        os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")
    if not sys.platform.startswith("linux") or "malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library with mallopt (not glibc): its defaults stay
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    for variable, parameter, value in _GLIBC:
        if variable not in os.environ:
            mallopt(parameter, value)


@contextmanager
def objects_frozen() -> Iterator[None]:
    """The objects alive on entry (modules, the libraries' tables, the caller's data: ~160k at a compare) left
    out of the collector's passes until exit. A long scan allocates many short-lived objects, and each full
    pass the collector makes would walk them all again: at 10M rows of the streamed join, 0.29 CPU s of
    collecting became 0.14. A process that froze objects itself is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
