"""The per-set table's columns, declared once for every format (console, CSV, Markdown, HTML).

A column reads one cell of a set's summary: a count with the task ids behind it and, when the set's tasks were
drawn from a set of known size, the estimate for the whole set. ``TABLE`` lists them in the order shown; a
column whose ``shown`` says no for a run (the network route's, when the run did not check the index) is left
out of every format. A new column is one more ``Column`` here (and its cell in ``summary.set_summary``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...words import plural
from .estimate import interval_text, percent


def _always(_doc: dict) -> bool:
    return True


@dataclass(frozen=True)
class Column:
    id: str  # the CSV's and the JSON's name
    short: str  # the console's and the Markdown header's name (at most 24 characters)
    title: str  # the legend: what a task counted here has (Markdown: `code` spans)
    cell: Callable[[dict], dict | None]  # the set's summary -> {"count", "ids", "estimate"?}, None when not run
    shown: Callable[[dict], bool] = _always  # the document -> whether this run's table has the column
    mark: Callable[[dict], str] = lambda _s: ""  # a mark after the count ("†")


def _network_shown(doc: dict) -> bool:
    return any(s.get("network") is not None for s in doc["sets"])


def _cyber_shown(doc: dict) -> bool:
    """The cyber columns (builds of the fixed code, PoC inputs: a set summary's ``cyber`` cells) are shown when any
    set has one."""
    return any(isinstance(s.get("cyber"), dict) and any(
        isinstance(c, dict) and c.get("count") for c in s["cyber"].values()) for s in doc["sets"])


def _cyber(cid: str) -> Callable[[dict], dict | None]:
    return lambda s: (s.get("cyber") or {}).get(cid)


def _side_mark(s: dict) -> str:
    return "†" if s["columns"]["git_log_all"].get("side_history") else ""


def _newest(part: str) -> Callable[[dict], dict]:
    return lambda s: s["columns"]["newest_files"][part]


TABLE: tuple[Column, ...] = (
    Column("git_log_all", "git log --all", "commits outside the base's history visible to `git log --all`",
           lambda s: s["columns"]["git_log_all"], mark=_side_mark),
    Column("hidden_history", "hidden history", "history a reference walk misses (reflogs, unreachable objects)",
           lambda s: s["columns"]["hidden_history"]),
    Column("reference_stored", "reference stored", "fixed files or hidden tests stored in the environment",
           lambda s: s["columns"]["reference_stored"]),
    Column("newest_tests", "newest: hidden tests", "the newest files set apart hold every hidden-test file",
           _newest("tests")),
    Column("newest_fix", "newest: fixed files", "the newest files set apart hold every file the fix changes",
           _newest("fix")),
    Column("newest_other", "newest: other group", "a newest group set apart that holds neither of those "
           "(unconfirmed: look at the files)",
           _newest("other")),
    Column("fixed_builds", "fixed builds", "a second build of the task's target from the fixed code",
           _cyber("fixed_builds"), shown=_cyber_shown),
    Column("fixed_builds_readable", "fixed builds: agent", "such a build the agent's user can read",
           _cyber("fixed_builds_readable"), shown=_cyber_shown),
    Column("pocs", "PoC inputs", "a proof-of-concept or reproducer input (the answer of a cyber task)",
           _cyber("pocs"), shown=_cyber_shown),
    Column("pocs_readable", "PoC inputs: agent", "such an input the agent's user can read",
           _cyber("pocs_readable"), shown=_cyber_shown),
    Column("suspect", "suspect", "the task's verdict is suspect (worth a look; no leak shown)",
           lambda s: s["verdicts"]["suspect"]),
    Column("leak", "leak", "the task's verdict is leak (any route, leftovers included)",
           lambda s: s["verdicts"]["leak"]),
    Column("network", "fix one install away", "a package release after the base already carries the fix "
           "(--check-index; the median days from the task's creation to that release)",
           lambda s: (s.get("network") or {}).get("open"), shown=_network_shown),
)
SIDE_NOTE = ("† counted only for side history dated before the base, holding no fixed content (an old release "
             "tag `git log --all` shows): clean")


def columns(doc: dict) -> list[Column]:
    """The columns this run's table shows."""
    return [c for c in TABLE if c.shown(doc)]


def network_value(summary: dict | None) -> str:
    """The network cell: tasks a package release already hands the fix, with the median days after the task was
    opened ("closed" when every task's environment declares no network)."""
    if summary is None:
        return ""
    routes = summary["routes"]
    if routes and set(routes) == {"closed"}:
        return "closed"
    count = summary["open"]["count"]
    return f"{count} (median {summary['median_days']:g} d)" if count and summary["median_days"] is not None \
        else str(count)


def value(column: Column, s: dict) -> str:
    """The cell as the console and the Markdown show it: the count and its mark (the network's own words)."""
    if column.id == "network":
        return network_value(s.get("network"))
    cell = column.cell(s)
    return "" if cell is None else f"{cell['count']}{column.mark(s)}"


def share(cell: dict | None) -> tuple[str, str]:
    """(share, interval) of a cell as text; ("", "") when the set's size is unknown."""
    est = (cell or {}).get("estimate")
    return (percent(est["share"]), interval_text(est)) if est else ("", "")


def estimated(doc: dict) -> bool:
    """Whether any set of the run was drawn from a set of known size (the tables then show the estimates)."""
    return any(s.get("population") for s in doc["sets"])


def drawn_text(s: dict) -> str:
    """How the set's tasks were drawn, in words: "24 of 2602 tasks drawn (seed 0)"."""
    sampling = s.get("sampling") or {}
    population = s.get("population")
    if not population:
        return plural(s["tasks"], "task")
    if sampling.get("method") == "all":
        return f"all {population} tasks"
    return f"{sampling.get('drawn', s['tasks'])} of {population} tasks drawn at random (seed {sampling.get('seed')})"


def label(entry: dict) -> str:
    return entry["instance_id"] or entry.get("image") or entry.get("path") or "?"


def digests(doc: dict, set_name: str) -> list[tuple[str, str]]:
    """(task, image digest) of a set's audited images, in the document's order."""
    return [(label(e), e["digest"]) for e in doc["targets"] if e["set"] == set_name and e.get("digest")]


def side_notes(doc: dict) -> list[tuple[str, list[str]]]:
    """(set, ids) of the sets whose `git log --all` cell holds side history only (the † of the table)."""
    return [(s["set"], s["columns"]["git_log_all"]["side_history"]["ids"]) for s in doc["sets"]
            if s["columns"]["git_log_all"].get("side_history")]


def grader_lines(doc: dict) -> list[str]:
    """How many distinct graders each cyber set's images hold (one expected: more means the grading differs)."""
    return [f"{s['set']}: graders: {s['cyber']['graders']['distinct']} distinct" for s in doc["sets"]
            if isinstance((s.get("cyber") or {}).get("graders"), dict) and s["cyber"]["graders"].get("distinct")]


def network_lines(doc: dict) -> list[str]:
    """One line per task the route was checked for: the first release and the pin, or why there is none."""
    lines = []
    for e in doc["targets"]:
        n = e.get("network")
        if not isinstance(n, dict):
            continue
        who = f"{e['set']} / {label(e)}"
        f = n.get("first_release")
        if n.get("route") == "open" and f:
            days = f" (+{f['days_after_created']:g} d)" if f.get("days_after_created") is not None else ""
            how = ", reformatted (tokens)" if f.get("match") == "tokens" else ""
            how += ", yanked" if f.get("yanked") else ""
            lines.append(f"network: {who}: {n['ecosystem']}:{n['package']} {f['version']}{days}{how}; pin {n['pin']}")
        else:
            lines.append(f"network: {who}: {n.get('route')}: {n.get('reason')}")
    return lines
