"""Counts in words, for every message and table: `1,507`, `1 row` / `2 rows`, `1 stratum` / `3 strata`.

It sits on the floor of the layers so that any layer (stats notes, audit titles, CLI lines, reports) says a
count the same way; `overlap.outputs.report.cell_text` builds the report's cells on it.
"""

from __future__ import annotations

from typing import Any

# Plurals that are not the word plus "s"; anything else gets an "s".
IRREGULAR = {"match": "matches", "query": "queries", "stratum": "strata", "entry": "entries", "copy": "copies",
             "repository": "repositories", "summary": "summaries"}


def count(n: Any) -> str:
    """`1,507`: an integer with thousands separators; floats with one decimal unless whole; None → `n/a`."""
    if n is None:
        return "n/a"
    if isinstance(n, bool):
        return str(n)
    if isinstance(n, float):
        return f"{n:,.0f}" if n.is_integer() else f"{n:,.1f}"
    try:
        return f"{int(n):,}"
    except (TypeError, ValueError):
        return str(n)


def word_for(n: Any, word: str, plural_form: str | None = None) -> str:
    """`word` or its plural, agreeing with `n` (1 → singular, anything else → plural)."""
    if n == 1:
        return word
    if plural_form:
        return plural_form
    head, _, last = word.rpartition(" ")
    return f"{head} {IRREGULAR.get(last, last + 's')}".lstrip()


def plural(n: Any, word: str, plural_form: str | None = None) -> str:
    """`1 row`, `2 rows`, `1,507 bench items` (the last word of `word` is made plural)."""
    return f"{count(n)} {word_for(n, word, plural_form)}"


def verb(n: Any, singular: str, plural_form: str) -> str:
    """The verb agreeing with `n`: `1 ref points`, `2 refs point`."""
    return singular if n == 1 else plural_form
