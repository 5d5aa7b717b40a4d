"""Crash types: one canonical name per kind of crash across ASan/MSan/UBSan/LSan reports, ClusterFuzz
`Crash Type:` lines and crash specs, and which types count as the same (families)."""

from __future__ import annotations

import re

_TYPE_ALIASES = {
    "segv-on-unknown-address": "segv",
    "sigsegv": "segv",
    "segmentation-fault": "segv",
    "heap-double-free": "double-free",
    "attempting-double-free": "double-free",
    "attempting-free": "bad-free",
    "invalid-free": "bad-free",
    "bad-free": "bad-free",
    "direct-leak": "memory-leak",
    "indirect-leak": "memory-leak",
    "leak": "memory-leak",
    "memory-leaks": "memory-leak",
    "detected-memory-leaks": "memory-leak",
    "signed-integer-overflow": "integer-overflow",
    "integer-divide-by-zero": "divide-by-zero",
    "division-by-zero": "divide-by-zero",
    "float-divide-by-zero": "divide-by-zero",
    "floating-point-exception": "fpe",
    "sigfpe": "fpe",
    "stack-exhaustion": "stack-overflow",
    "uninitialized-value": "use-of-uninitialized-value",
    "use-of-uninitialized-memory": "use-of-uninitialized-value",
    "abort": "abrt",
    "sigabrt": "abrt",
    "assertion-failure": "assert",
    "assertion-failed": "assert",
    "check-failed": "check-failure",
    "dcheck-failure": "check-failure",
    "security-dcheck-failure": "check-failure",
    "security-check-failure": "check-failure",
    "undefined-behaviour": "undefined-behavior",
    "illegal-instruction": "ill",
    "sigill": "ill",
    "sigbus": "bus",
    "requested-allocation-size": "allocation-size-too-big",
    "malloc-limit": "out-of-memory",
    "out-of-memory-(malloc": "out-of-memory",
    "fatal-error": "fatal-signal",
    "rust-panic": "panic",
}


_TYPE_FAMILY = {
    "segv": "segv",
    "null-dereference": "segv",
    "unknown": "segv",
    "bus": "segv",
    "abrt": "abort",
    "deadly-signal": "abort",
    "fatal-signal": "abort",
    "panic": "abort",
    "assert": "abort",
    "check-failure": "abort",
    "out-of-memory": "oom",
    "allocation-size-too-big": "oom",
    "calloc-overflow": "oom",
    "divide-by-zero": "fpe",
    "fpe": "fpe",
    "unsigned-integer-overflow": "integer-overflow",
}


#: Types UBSan reports; a generic `undefined-behavior` matches any of them.
UB_TYPES = frozenset(
    {
        "integer-overflow", "unsigned-integer-overflow", "index-out-of-bounds", "invalid-shift-exponent",
        "invalid-shift-base", "divide-by-zero", "misaligned-address", "null-dereference", "pointer-overflow",
        "invalid-bool-value", "invalid-enum-value", "incorrect-function-pointer-type", "float-cast-overflow",
        "non-positive-vla-bound-value", "implicit-conversion", "unreachable", "object-size", "bad-cast",
        "missing-return", "invalid-builtin-use", "null-argument",
    }
)  # fmt: skip


_UBSAN_MESSAGES = (
    (r"misaligned address", "misaligned-address"),
    (
        r"applying (?:non-)?zero offset|pointer index expression|(?:addition|subtraction) of unsigned offset",
        "pointer-overflow",
    ),
    (r"unsigned integer overflow", "unsigned-integer-overflow"),
    (r"signed integer overflow|negation of .* cannot be represented", "integer-overflow"),
    (r"out of bounds for type|^index -?\d+ out of bounds", "index-out-of-bounds"),
    (r"shift exponent", "invalid-shift-exponent"),
    (r"left shift of", "invalid-shift-base"),
    (r"division by zero|divide by zero|remainder by zero", "divide-by-zero"),
    (r"null pointer passed as argument|null pointer returned from function", "null-argument"),
    (r"null pointer", "null-dereference"),
    (r"not a valid value for type '(?:bool|_Bool)'", "invalid-bool-value"),
    (r"not a valid value for type", "invalid-enum-value"),
    (r"incorrect function type", "incorrect-function-pointer-type"),
    (r"outside the range of representable values", "float-cast-overflow"),
    (r"variable length array bound", "non-positive-vla-bound-value"),
    (r"implicit conversion", "implicit-conversion"),
    (r"unreachable program point", "unreachable"),
    (r"insufficient space for an object", "object-size"),
    (r"downcast of|does not point to an object|vptr", "bad-cast"),
    (r"end of a value-returning function", "missing-return"),
    (r"passing zero to", "invalid-builtin-use"),
)


_UBSAN_COMPILED = tuple((re.compile(p), t) for p, t in _UBSAN_MESSAGES)


def ubsan_type(message: str) -> str:
    """Crash type of a UBSan `runtime error:` message (`undefined-behavior` when unrecognised)."""
    for pattern, kind in _UBSAN_COMPILED:
        if pattern.search(message):
            return kind
    return "undefined-behavior"


def canonical_crash_type(raw: str | None) -> str | None:
    """`Heap-buffer-overflow READ 4` -> `heap-buffer-overflow`; `SEGV on unknown address 0x0` ->
    `segv`; `Out-of-memory (exceeds 2560 MB)` -> `out-of-memory`; `Direct-leak` -> `memory-leak`."""
    if not raw:
        return None
    t = " ".join(str(raw).split())
    t = re.sub(r"^(?:\w*Sanitizer|libFuzzer)\s*:\s*", "", t)
    t = re.sub(r"^(\d+ byte\(s\) leaked|detected memory leaks).*$", "memory-leak", t)
    t = re.sub(r"\s+\{?\*?(?:READ|WRITE|UNKNOWN|READ/WRITE)\b.*$", "", t)
    t = re.sub(r"\s+on\s+(?:unknown\s+)?address\b.*$", "", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+on\s+0x[0-9a-fA-F]+.*$", "", t)
    t = re.sub(r"\s*\(.*$", "", t)
    t = re.sub(r"\s+/\S.*$", "", t)
    t = t.split(": ", 1)[0].strip().rstrip(":.")
    if not t:
        return None
    t = re.sub(r"[\s_]+", "-", t.lower()).strip("-")
    if t.startswith("out-of-memory"):
        return "out-of-memory"
    if t.startswith("requested-allocation-size"):
        return "allocation-size-too-big"
    return _TYPE_ALIASES.get(t, t)


def types_match(a: str | None, b: str | None) -> bool:
    """Canonical types agree: equal, same family (segv/null-dereference, abrt/panic/assert, ...), or one
    is a generic `undefined-behavior` and the other a UBSan type."""
    if not a or not b:
        return False
    if a == b or _TYPE_FAMILY.get(a, a) == _TYPE_FAMILY.get(b, b):
        return True
    return (a == "undefined-behavior" and b in UB_TYPES) or (b == "undefined-behavior" and a in UB_TYPES)
