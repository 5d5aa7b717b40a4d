"""The per-set table as an HTML page in the report's style (its stylesheet is read from the report's template,
a file shipped with the package: the audit layer imports nothing of ``overlap.outputs``), with a caption, the
legend, how each set was drawn, every image's digest and the tool's version, so a paper can cite it as it is."""

from __future__ import annotations

import html
import re
from functools import cache
from importlib.resources import files

from ... import __version__
from ..report import escape
from .table import (
    SIDE_NOTE,
    columns,
    digests,
    drawn_text,
    estimated,
    grader_lines,
    label,
    network_lines,
    share,
    side_notes,
    value,
)

TEMPLATE = "outputs/report/templates/report.html.j2"
PAGE_STYLE = """
.count details { display: inline; }
.count summary { cursor: pointer; }
.count ul { margin: 4px 0 0; padding-left: 18px; font-size: 0.9em; }
.est { display: block; color: #56606b; font-size: 0.9em; white-space: nowrap; }
td.num { text-align: right; }
code, .digest { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.92em; }
dt { font-weight: 600; margin-top: 4px; }
footer { margin-top: 2em; color: #56606b; font-size: 0.85em; }
"""


@cache
def report_style() -> str:
    """The report's stylesheet (between <style> and </style> in its template); "" when the file is missing."""
    try:
        text = files("overlap").joinpath(TEMPLATE).read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError):
        return ""
    found = re.search(r"<style>(.*?)</style>", text, re.S)
    return found.group(1) if found else ""


def _text(text: str) -> str:
    """The tool's own words: HTML-escaped, `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def _user(text: str) -> str:
    """The user's text (a set name, an id): control characters escaped, then HTML-escaped."""
    return html.escape(escape(text))


def _count(shown: str, ids: list[str], cell: dict | None) -> str:
    part, interval = share(cell)
    est = f'<span class="est">{html.escape(part)} ({html.escape(interval)})</span>' if part else ""
    if not ids:
        return f'<td class="num count">{html.escape(shown)}{est}</td>'
    items = "".join(f"<li>{_user(i)}</li>" for i in ids)
    return (f'<td class="num count"><details><summary>{html.escape(shown)}</summary><ul>{items}</ul></details>'
            f"{est}</td>")


def _table(doc: dict) -> list[str]:
    shown = columns(doc)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["image set", "tasks", *(c.short for c in shown), "failed"])
    caption = ("Tasks counted in each column per image set" + (
        "; below each count, its share of the audited tasks and the 95 % Wilson score interval of that share "
        "for the whole set (finite-population corrected)." if estimated(doc) else "."))
    out = [f'<p class="caption">Table 1. {html.escape(caption)}</p>', "<table>", f"<thead><tr>{head}</tr></thead>",
           "<tbody>"]
    for s in doc["sets"]:
        tds = [f"<td>{_user(s['set'])}</td>", f"<td>{html.escape(drawn_text(s))}; {s['audited']} audited</td>"]
        for col in shown:
            cell = col.cell(s)
            tds.append(_count(value(col, s), (cell or {}).get("ids", []), cell))
        tds.append(_count(str(s["failed"]["count"]), s["failed"]["ids"], None))
        out.append("<tr>" + "".join(tds) + "</tr>")
    out += ["</tbody>", "</table>"]
    return out


def _legend(doc: dict) -> list[str]:
    out = ["<h2>Columns</h2>", "<dl>"]
    for col in columns(doc):
        out.append(f"<dt>{html.escape(col.short)}</dt><dd>{_text(col.title)}</dd>")
    out += ["<dt>failed</dt><dd>targets that could not be audited (left out of every share)</dd>", "</dl>"]
    for name, ids in side_notes(doc):
        out.append(f"<p>{_user(name)}: {_text(SIDE_NOTE)}: {', '.join(_user(i) for i in ids)}</p>")
    return out


def _images(doc: dict) -> list[str]:
    rows = [(s["set"], i, d) for s in doc["sets"] for i, d in digests(doc, s["set"])]
    if not rows:
        return []
    out = ["<h2>Images</h2>", '<p class="caption">Each audited image by its config digest (its image id).</p>',
           "<table>", "<thead><tr><th>image set</th><th>task</th><th>digest</th></tr></thead>", "<tbody>"]
    out += [f'<tr><td>{_user(s)}</td><td>{_user(i)}</td><td class="digest">{_user(d)}</td></tr>' for s, i, d in rows]
    return [*out, "</tbody>", "</table>"]


def _notes(doc: dict) -> list[str]:
    notes = grader_lines(doc) + network_lines(doc)
    notes += [f"failed: {e['set']} / {label(e)}: {e['error']}" for e in doc["targets"] if e["status"] != "ok"]
    return ["<h2>Notes</h2>", "<ul>", *(f"<li>{_user(n)}</li>" for n in notes), "</ul>"] if notes else []


def render_html(doc: dict) -> str:
    version = (doc.get("tool") or {}).get("version") or __version__
    verdict = (doc.get("verdict") or "none").upper()
    c = doc["counts"]
    body = ["<h1>Image-set audit</h1>",
            f"<p>Worst verdict: <strong>{verdict}</strong> ({c['targets']} targets, {c['ok']} audited, "
            f"{c['error']} failed).</p>", *_table(doc), *_legend(doc), *_images(doc), *_notes(doc),
            f"<footer>overlap {html.escape(version)} · {html.escape(str(doc.get('schema', '')))}</footer>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>overlap audit: image sets</title>\n"
            f"<style>{report_style()}{PAGE_STYLE}</style>\n</head>\n<body>\n<main>\n" + "\n".join(body)
            + "\n</main>\n</body>\n</html>\n")
