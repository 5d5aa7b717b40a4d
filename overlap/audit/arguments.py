"""The audit's arguments checked: a library call's types and the ``--limit`` values.

User mistakes raise ``InputError`` naming the argument (the CLI gives only text, a library call anything).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from ..errors import InputError
from .context import DEFAULT_LIMITS

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


MAX_TIMEOUT = 86_400


def parse_limits(limits: Mapping[str, object] | Iterable[str] | None) -> dict[str, int]:
    out = dict(DEFAULT_LIMITS)
    if not limits:
        return out
    limits = [limits] if isinstance(limits, str) else limits  # one "name=value", not its letters
    pairs = limits.items() if isinstance(limits, Mapping) else [str(x).partition("=")[::2] for x in limits]
    for name, value in pairs:
        if name not in DEFAULT_LIMITS:
            raise InputError(f"--limit {name}: unknown limit (known: {', '.join(sorted(DEFAULT_LIMITS))})")
        m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(value))
        if not m:
            raise InputError(f"--limit {name}={value}: expected a whole number, optionally with K, M or G")
        out[name] = int(m.group(1)) * _SUFFIX[m.group(2).lower()]
        # a timeout past a day, or a size past 2**53 bytes, bounds nothing (and a huge one overflows the clock)
        most = MAX_TIMEOUT if name.endswith("_timeout") else 1 << 53
        if out[name] > most:
            raise InputError(f"--limit {name}={value}: at most {most:,}{' seconds' if most == MAX_TIMEOUT else ''}")
    return out


def _listed(value, name: str = "") -> list[str]:
    """One path (or id) or several: a str or path is one item, never its letters; None is none. Anything else
    (a number, bytes) is an InputError naming the argument `name`."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [_text(value, name)]
    if isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise _wrong_type(name, value, "a str or path, or a list of them")
    return [_text(v, name) for v in value]


def _text(value, name: str) -> str:
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, str):
            return text
    raise _wrong_type(name, value, "a str or path")


def _wrong_type(name: str, value, expected: str) -> InputError:
    return InputError(f"audit({name}={value!r:.60}): expected {expected}, not {type(value).__name__}")


def _check_types(path, options: dict) -> None:
    """A library call's arguments of the wrong type, each one InputError naming it (the CLI gives only text)."""
    _text(path, "path")
    for name in ("base", "fix_commit", "repo_path", "image", "platform", "network"):
        if (options[name] is not None or name == "network") and not isinstance(options[name], str):
            raise _wrong_type(name, options[name], "a str")
    for name in ("instance", "git"):
        if options[name] is not None:
            _text(options[name], name)
    if not isinstance(options["rootfs"], bool):
        raise _wrong_type("rootfs", options["rootfs"], "True or False")
    if options["stage"] is not None and not callable(options["stage"]):
        raise _wrong_type("stage", options["stage"], "a function taking a line of text")
