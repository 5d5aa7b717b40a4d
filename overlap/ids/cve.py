"""CVE ids: `cve-2023-50246`, `CVE-2023-50246`, `jq.cve-2023-50246` → `CVE-2023-50246`.

A CVE id is `CVE-YYYY-NNNN+`: any case, dashes only (`cve_2023_1234` is not one), ASCII digits only
(`\\d` would also take `２０２３`), a year from 1999 (the first CVE list) and 4 to 12 digits. It must stand
as its own word: `xcve-2023-1234` and `cve-2023-12345678901234` are not CVE ids.
"""

from __future__ import annotations

import re

FIRST_YEAR = 1999
# `[^\W_]` (Unicode letters and digits) around it: no letter or digit of any script may touch the id.
_CVE = re.compile(r"(?<![^\W_])[Cc][Vv][Ee]-([0-9]{4})-([0-9]{4,12})(?![^\W_])")


def _match(text: object) -> re.Match[str] | None:
    """The first well-formed CVE id inside `text` (the one parser both functions below use)."""
    if not isinstance(text, str):
        return None
    for match in _CVE.finditer(text):
        if int(match.group(1)) >= FIRST_YEAR:
            return match
    return None


def find_cve(text: object) -> str | None:
    """The canonical (upper-case) CVE id inside `text`, or None."""
    match = _match(text)
    return f"CVE-{match.group(1)}-{match.group(2)}" if match else None


def raw_cve(text: object) -> str | None:
    """The CVE id exactly as written inside `text` (for the plain join), or None."""
    match = _match(text)
    return match.group(0) if match else None
