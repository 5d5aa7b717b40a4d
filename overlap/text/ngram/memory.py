"""Giving freed heap pages back to the operating system between large numpy steps."""

from __future__ import annotations

_LIBC = None


def release_memory() -> None:
    """Give freed heap pages back to the OS (glibc keeps numpy's freed temporaries otherwise).

    Keeps the resident size flat at what one chunk needs. A no-op where glibc is not there.
    """
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes  # imported here: only where glibc is there to call

            _LIBC = ctypes.CDLL("libc.so.6")
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)
