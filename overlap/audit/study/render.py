"""The per-set table of a batch audit as console text, CSV, Markdown and HTML, each with the task ids behind
every cell (control characters of ids escaped, as in the single-target table).

Ids and set names are the user's text: in the CSV an id holding white space (the separator of an ids cell) or a
leading quote is written as a JSON string; in the Markdown a set name's markup characters are backslash-escaped
and an id is a code span fenced longer than any run of backticks in it, so no id reads as another or as markup."""

from __future__ import annotations

import csv
import html
import io
import json
import re

from ...words import plural
from ..report import escape
from .cyber import cyber_lines
from .summary import COLUMNS

HEAD = ("image set", "tasks", *(title for _, title, _ in COLUMNS), "leak", "failed")
SHORT = ("image set", "tasks", "git log --all", "hidden history", "reference stored", "newest: tests / fix",
         "leak", "failed")
# the network route's column (--check-index), last: shown when the run checked the index
NETWORK = "fix one install away"


def _network_shown(doc: dict) -> bool:
    return any(s.get("network") is not None for s in doc["sets"])


def network_value(summary: dict | None) -> str:
    """The cell: tasks a package release already hands the fix, with the median days after the task was opened
    ("closed" when every task's environment declares no network)."""
    if summary is None:
        return ""
    routes = summary["routes"]
    if routes and set(routes) == {"closed"}:
        return "closed"
    count = summary["open"]["count"]
    return f"{count} (median {summary['median_days']:g} d)" if count and summary["median_days"] is not None \
        else str(count)


def _with_network(cells: list, s: dict, shown: bool) -> list:
    if not shown:
        return cells
    summary = s.get("network")
    return [*cells, (NETWORK, network_value(summary), summary["open"]["ids"] if summary else [])]


def _cells(s: dict) -> list[tuple[str, str, list[str]]]:
    """(column, shown value, ids behind it) of one set's row."""
    c = s["columns"]
    newest = c["newest_files"]
    return [("tasks", str(s["tasks"]), []),
            *((title, _count(c[cid]), c[cid]["ids"]) for cid, title, _ in COLUMNS[:-1]),
            (COLUMNS[-1][1] + ": tests", f"{newest['tests']['count']} / {newest['fix']['count']}",
             newest["tests"]["ids"]),
            (COLUMNS[-1][1] + ": fix", "", newest["fix"]["ids"]),
            ("leak", str(s["verdicts"]["leak"]["count"]), s["verdicts"]["leak"]["ids"]),
            ("failed", str(s["failed"]["count"]), s["failed"]["ids"])]


SIDE_NOTE = ("† counted only for side history dated before the base, holding no fixed content (an old release "
             "tag `git log --all` shows): clean")


def _count(cell: dict) -> str:
    return f"{cell['count']}†" if cell.get("side_history") else str(cell["count"])


def _side_notes(doc: dict) -> list[tuple[str, list[str]]]:
    """(set, ids) of the sets whose `git log --all` cell holds side history only (the † of the table)."""
    return [(s["set"], s["columns"]["git_log_all"]["side_history"]["ids"]) for s in doc["sets"]
            if s["columns"]["git_log_all"].get("side_history")]


def _row(s: dict, shown: bool = False) -> list[str]:
    cells = _with_network(_cells(s), s, shown)
    return [escape(s["set"]), *(v for name, v, _ in cells if not name.endswith(": fix"))]


def _network_lines(doc: dict) -> list[str]:
    """One line per task the route was checked for: the first release and the pin, or why there is none."""
    lines = []
    for e in doc["targets"]:
        n = e.get("network")
        if not isinstance(n, dict):
            continue
        who = f"{e['set']} / {e['instance_id'] or e.get('image') or e.get('path')}"
        f = n.get("first_release")
        if n.get("route") == "open" and f:
            days = f" (+{f['days_after_created']:g} d)" if f.get("days_after_created") is not None else ""
            how = ", reformatted (tokens)" if f.get("match") == "tokens" else ""
            how += ", yanked" if f.get("yanked") else ""
            lines.append(escape(f"network: {who}: {n['ecosystem']}:{n['package']} {f['version']}{days}{how}; "
                                f"pin {n['pin']}"))
        else:
            lines.append(escape(f"network: {who}: {n.get('route')}: {n.get('reason')}"))
    return lines


def render_console(doc: dict) -> str:
    shown = _network_shown(doc)
    head = [*SHORT, NETWORK] if shown else list(SHORT)
    rows = [head, *(_row(s, shown) for s in doc["sets"])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for s in doc["sets"]:
        for name, _, ids in _with_network(_cells(s), s, shown):
            if ids:
                lines.append(escape(f"{s['set']} / {name}: {' '.join(ids)}"))
    for name, ids in _side_notes(doc):
        lines.append(escape(f"{name} / {SIDE_NOTE}: {' '.join(ids)}"))
    lines += _network_lines(doc)
    lines += [escape(line) for line in cyber_lines(doc)]
    for e in doc["targets"]:
        if e["status"] != "ok":
            lines.append(escape(f"failed: {e['set']} / {e['instance_id'] or e.get('image') or e.get('path')}: "
                                f"{e['error']}"))
    c = doc["counts"]
    repeated = c.get("repeated_rows", 0)
    again = f", {plural(repeated, 'row')} repeating an earlier row's target" if repeated else ""
    lines.append(f"VERDICT: {(doc['verdict'] or 'none').upper()}  ({c['targets']} targets, {c['ok']} audited, "
                 f"{c['error']} failed{again})")
    return "\n".join(lines) + "\n"


def render_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    shown = _network_shown(doc)
    cells = [_with_network(_cells(s), s, shown) for s in doc["sets"]]
    names = [n for n, _, _ in cells[0]] if cells else []
    w.writerow(["image set", *(n for n in names if not n.endswith(": fix")), *(f"{n} ids" for n in names[1:])])
    for s, row in zip(doc["sets"], cells, strict=True):
        shown = [v for n, v, _ in row if not n.endswith(": fix")]
        w.writerow([s["set"], *shown, *(" ".join(map(_listed, ids)) for _, _, ids in row[1:])])
    return buf.getvalue()


def _listed(item_id: str) -> str:
    """An id in a space-separated ids cell: as written, or as a JSON string when it could be read as two."""
    return json.dumps(item_id) if item_id.startswith('"') or any(c.isspace() for c in item_id) else item_id


_MARKUP = re.compile(r"([\\`*_\[\]<>&|~#!])")


def _md(text: str) -> str:
    """Text in a Markdown table cell or list: control characters escaped, markup and `|` backslash-escaped."""
    return _MARKUP.sub(r"\\\1", escape(text))


def _code(text: str) -> str:
    """An id as a Markdown code span: fenced by more backticks than its longest run, padded when it starts or
    ends with one (code spans show their text as written: no other escape works inside them)."""
    text = escape(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render_md(doc: dict) -> str:
    # column titles are the tool's own Markdown (`git log --all` is code): only their pipes are escaped
    shown = _network_shown(doc)
    head = [*HEAD, NETWORK] if shown else list(HEAD)
    out = ["| " + " | ".join(h.replace("|", "\\|") for h in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_md(c) for c in _row(s, shown)) + " |" for s in doc["sets"]]
    out.append("")
    for s in doc["sets"]:
        for name, _, ids in _with_network(_cells(s), s, shown):
            if ids:
                out.append(f"- **{_md(s['set'])} / {name}**: " + ", ".join(_code(i) for i in ids))
    for name, ids in _side_notes(doc):
        out.append(f"- **{_md(name)}** {SIDE_NOTE}: " + ", ".join(_code(i) for i in ids))
    out += [f"- {_md(line)}" for line in cyber_lines(doc)]
    return "\n".join(out) + "\n"


def render_html(doc: dict) -> str:
    def td(value: str, ids: list[str]) -> str:
        if not ids:
            return f"<td>{html.escape(value)}</td>"
        items = "".join(f"<li>{html.escape(escape(i))}</li>" for i in ids)
        return f"<td><details><summary>{html.escape(value)}</summary><ul>{items}</ul></details></td>"

    shown = _network_shown(doc)
    rows = []
    for s in doc["sets"]:
        cells = _with_network(_cells(s), s, shown)
        tests, fix = cells[4], cells[5]
        tds = [f"<td>{html.escape(escape(s['set']))}</td>", td(cells[0][1], [])]
        tds += [td(v, ids) for _, v, ids in cells[1:4]]
        tds.append(f"<td>{td(str(len(tests[2])), tests[2])[4:-5]} / {td(str(len(fix[2])), fix[2])[4:-5]}</td>")
        tds += [td(v, ids) for _, v, ids in cells[6:]]
        rows.append("<tr>" + "".join(tds) + "</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in [*HEAD, *([NETWORK] if shown else [])])
    notes = "".join(f"<p>{html.escape(escape(name))} {html.escape(SIDE_NOTE)}: "
                    f"{html.escape(' '.join(escape(i) for i in ids))}</p>\n" for name, ids in _side_notes(doc))
    return ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>overlap audit: image sets</title></head>\n"
            f"<body><table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody></table>\n" + notes + "</body></html>\n")
