"""CVE ids: `cve-2023-50246`, `CVE-2023-50246`, `jq.cve-2023-50246` → `CVE-2023-50246`."""

from __future__ import annotations

import re

_CVE = re.compile(r"cve-(\d{4})-(\d{4,})", re.IGNORECASE)


def find_cve(text: object) -> str | None:
    """The canonical (upper-case) CVE id inside `text`, or None."""
    if text is None:
        return None
    match = _CVE.search(str(text))
    if not match:
        return None
    return f"CVE-{match.group(1)}-{match.group(2)}"


def raw_cve(text: object) -> str | None:
    """The CVE id exactly as written inside `text` (for the plain join), or None."""
    if text is None:
        return None
    match = _CVE.search(str(text))
    return match.group(0) if match else None
