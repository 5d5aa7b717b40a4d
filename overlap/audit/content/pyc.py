"""Bytecode from another version of the source (L3).

A pyc's header (magic, flags, source mtime and size or SipHash) is read in process. When the magic is
the auditor's own, an isolated child (``python -I -S``, memory and CPU limits, a timeout; ``marshal`` is
not safe on hostile data) unmarshals it and compares the code object with ``compile()`` of the current
source and of the fixed source, using the pyc's own ``co_filename``.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import struct
import subprocess
import sys
from dataclasses import dataclass

_CHILD = r"""
import base64, json, marshal, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
out = []
for item in json.loads(sys.stdin.read()):
    res = {}
    try:
        code = marshal.loads(base64.b64decode(item["pyc"])[16:])
        res["filename"] = code.co_filename
        for name in ("current", "fixed"):
            src = item.get(name)
            if src is not None:
                try:
                    res[name] = compile(base64.b64decode(src), code.co_filename, "exec", dont_inherit=True) == code
                except (SyntaxError, ValueError):
                    res[name] = None
    except Exception as exc:  # a hostile or foreign pyc: reported as unreadable
        res = {"error": type(exc).__name__}
    out.append(res)
print(json.dumps(out))
"""


@dataclass
class PycHeader:
    magic_ok: bool
    hash_based: bool
    mtime: int | None
    size: int | None


def read_header(data: bytes) -> PycHeader | None:
    if len(data) < 16:
        return None
    flags = struct.unpack("<I", data[4:8])[0]
    hash_based = bool(flags & 1)
    mtime, size = (None, None) if hash_based else struct.unpack("<II", data[8:16])
    return PycHeader(data[:4] == importlib.util.MAGIC_NUMBER, hash_based, mtime, size)


def source_of(rel: str) -> str | None:
    """``pkg/__pycache__/mod.cpython-311.pyc`` → ``pkg/mod.py``; a legacy ``mod.pyc`` → ``mod.py``."""
    head, _, name = rel.rpartition("/")
    if not name.endswith(".pyc"):
        return None
    if head.endswith("__pycache__") and (head == "__pycache__" or head.endswith("/__pycache__")):
        folder = head[: -len("__pycache__")].rstrip("/")
        mod = name.split(".", 1)[0]
        return f"{folder}/{mod}.py" if folder else f"{mod}.py"
    return rel[:-1]


def compare(items: list[dict[str, bytes | None]], timeout: float = 60.0) -> list[dict]:
    """For each ``{"pyc", "current", "fixed"}`` (bytes or None): whether the code equals each source."""
    if not items:
        return []
    payload = json.dumps([{k: base64.b64encode(v).decode() if v is not None else None for k, v in it.items()}
                          for it in items])
    try:
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", _CHILD], input=payload, capture_output=True,
                              text=True, timeout=timeout, env={"PATH": os.environ.get("PATH", "")}, cwd="/")
        return json.loads(proc.stdout) if proc.returncode == 0 else [{"error": "child failed"}] * len(items)
    except (subprocess.TimeoutExpired, json.JSONDecodeError, OSError):
        return [{"error": "child failed"}] * len(items)
