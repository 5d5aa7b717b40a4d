"""Counts read as words everywhere: one plural helper, used by every layer (no `item(s)`, no `1 bench items`)."""

import re
from pathlib import Path

from overlap.stats.exact import stratified_baseline
from overlap.words import plural, verb, word_for


def test_plural_and_verb():
    assert plural(1, "bench item") == "1 bench item" and plural(3, "bench item") == "3 bench items"
    assert plural(1, "stratum") == "1 stratum" and plural(3, "stratum") == "3 strata"
    assert plural(2, "match") == "2 matches" and plural(1_507, "row") == "1,507 rows"
    assert word_for(0, "pair") == "pairs" and verb(1, "points", "point") == "points"


def test_stats_notes_say_strata():
    notes = stratified_baseline([("a", 10, 3, 0, 0), ("b", 5, 2, 0, 0), ("c", 5, 2, 0, 0), ("d", 5, 2, 1, 0)])["notes"]
    assert "3 strata without train items skipped (they contribute 0 with certainty)" in notes


def test_no_parenthesised_plurals_in_messages():
    """`(s)` plurals in the tool's own messages are gone (model.py's table-shape errors are not checked here)."""
    root = Path(__file__).resolve().parents[1] / "overlap"
    found = [f"{p.relative_to(root)}:{n}" for p in sorted(root.rglob("*.py"))
             if p.name != "model.py" for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
             if re.search(r"\b(stratum|item|file|ref|commit|object|hunk|line|bug|section)\(s\)", line)]
    assert not found, found
