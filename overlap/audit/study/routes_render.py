"""The routes table (``routes.routes_table``) as console text (80 columns, ``COLUMNS``), CSV (numbers only in its
count columns), Markdown and an HTML page in the report's style with a plot of every share and its interval."""

from __future__ import annotations

import csv
import html
import io

from ..report import escape
from .estimate import interval_text, percent
from .render import width
from .render_html import PAGE_STYLE, report_style
from .table import drawn_text

NAME_WIDTH = 26


def worst_text(cell: dict) -> str:
    w = cell.get("worst")
    if not w:
        return ""
    if w.get("check") == "train":
        return f"in {w.get('key')}"
    if w.get("check") == "network":
        return str(w.get("key"))
    return f"{w.get('check')} {w.get('severity')}"


def _count(cell: dict) -> str:
    return "not checked" if not cell["checked"] else str(cell["count"])


def _drawn(row: dict) -> str:
    return drawn_text({"tasks": row["audited"], "population": row.get("population"),
                       "sampling": row.get("sampling")})


def render_routes_console(table: dict) -> str:
    limit = width()
    lines = []
    titles = {r["id"]: r["title"].split(" (")[0] for r in table["routes"]}
    for row in table["sets"]:
        lines += ["" if lines else None, escape(f"{row['set']}: {_drawn(row)}; {row['audited']} audited")[:limit]]
        lines.append(f"  {'route':<{NAME_WIDTH}}{'tasks':>11}  {'share':>5}  {'95 % interval':<13}  worst finding")
        for rid, cell in row["routes"].items():
            est = cell.get("estimate")
            share = percent(est["share"]) if est else ""
            line = f"  {titles[rid]:<{NAME_WIDTH}}{_count(cell):>11}  {share:>5}  {interval_text(est):<13}  "
            worst = escape(worst_text(cell))
            room = limit - len(line)
            lines.append((line + (worst if len(worst) <= room else worst[:max(0, room - 1)] + "…")).rstrip())
    return "\n".join(line for line in lines if line is not None) + "\n"


def render_routes_csv(table: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    ids = [r["id"] for r in table["routes"]]
    head = ["set", "audited", "population"]
    for rid in ids:
        head += [rid, f"{rid}_share", f"{rid}_low", f"{rid}_high", f"{rid}_worst"]
    w.writerow([*head, *(f"{rid}_ids" for rid in ids)])
    for row in table["sets"]:
        out = [row["set"], row["audited"], "" if row.get("population") is None else row["population"]]
        for rid in ids:
            cell = row["routes"][rid]
            est = cell.get("estimate") or {}
            out += ["" if cell["count"] is None else cell["count"], *(est.get(k, "") for k in ("share", "low", "high")),
                    _worst_full(cell)]
        w.writerow([*out, *(" ".join(row["routes"][rid]["ids"]) for rid in ids)])
    return buf.getvalue()


def _worst_full(cell: dict) -> str:
    w = cell.get("worst")
    if not w:
        return ""
    return f"{worst_text(cell)} ({w['key']})" if w.get("check") not in ("train", "network") and w.get("key") \
        else worst_text(cell)


def _cell_text(cell: dict) -> str:
    if not cell["checked"]:
        return "not checked"
    est = cell.get("estimate")
    text = f"{cell['count']} ({percent(est['share'])}, {interval_text(est)})" if est else str(cell["count"])
    worst = _worst_full(cell)
    return f"{text}; {worst}" if worst else text


def render_routes_md(table: dict) -> str:
    titles = [r["title"] for r in table["routes"]]
    out = ["| image set | tasks | " + " | ".join(titles) + " |", "|" + "---|" * (len(titles) + 2)]
    for row in table["sets"]:
        cells = [_cell_text(row["routes"][r["id"]]).replace("|", "\\|") for r in table["routes"]]
        out.append(f"| {escape(row['set']).replace('|', chr(92) + '|')} | {_drawn(row)} | " + " | ".join(cells)
                   + " |")
    return "\n".join(out) + "\n"


def _plot(table: dict) -> str:
    """Every route's share per set as a bar with its interval as a whisker (SVG, no plotting library)."""
    rows = [(row["set"], r["title"].split(" (")[0], row["routes"][r["id"]]) for row in table["sets"]
            for r in table["routes"] if row["routes"][r["id"]]["checked"]]
    if not rows:
        return ""
    bar, left, scale = 18, 330, 400
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + scale + 40}" height="{bar * len(rows) + 30}" '
             'role="img" aria-label="share of the tasks per route, with 95 % intervals" font-size="12">']
    for i, (name, title, cell) in enumerate(rows):
        y = 10 + i * bar
        est = cell.get("estimate") or {"share": None}
        parts.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{html.escape(escape(name))} · '
                     f"{html.escape(title)}</text>")
        if est["share"] is not None:
            parts.append(f'<rect x="{left}" y="{y + 3}" width="{est["share"] * scale:.1f}" height="{bar - 6}" '
                         'fill="#1f6fb2"/>')
            parts.append(f'<line x1="{left + est["low"] * scale:.1f}" x2="{left + est["high"] * scale:.1f}" '
                         f'y1="{y + bar / 2}" y2="{y + bar / 2}" stroke="#1d2329" stroke-width="2"/>')
        parts.append(f'<text x="{left + scale + 4}" y="{y + 12}">{cell["count"]}</text>')
    axis = 10 + len(rows) * bar
    parts.append(f'<line x1="{left}" x2="{left + scale}" y1="{axis}" y2="{axis}" stroke="#56606b"/>')
    parts += [f'<text x="{left + p * scale / 100}" y="{axis + 14}" text-anchor="middle">{p} %</text>'
              for p in (0, 50, 100)]
    return "\n".join([*parts, "</svg>"])


def render_routes_html(table: dict) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["image set", "tasks", *(r["title"] for r in
                                                                                   table["routes"])])
    body = [f"<tr><td>{html.escape(escape(row['set']))}</td><td>{html.escape(_drawn(row))}</td>"
            + "".join(f"<td>{html.escape(_cell_text(row['routes'][r['id']]))}</td>" for r in table["routes"])
            + "</tr>" for row in table["sets"]]
    version = html.escape(str((table.get("tool") or {}).get("version", "")))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>overlap audit: routes per image set</title>\n"
            f"<style>{report_style()}{PAGE_STYLE}</style>\n</head>\n<body>\n<main>\n<h1>Routes per image set</h1>\n"
            '<p class="caption">Table 1. Per image set and route: the tasks the answer reaches the agent by that '
            "route, their share of the audited tasks with its 95 % Wilson score interval for the whole set, and the "
            "worst finding behind the count.</p>\n"
            f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>\n"
            '<figure>\n' + _plot(table) + '\n<figcaption>Figure 1. Share per route (bar) and its 95 % interval '
            "(line).</figcaption>\n</figure>\n"
            f"<footer>overlap {version} · {html.escape(table['schema'])}</footer>\n</main>\n</body>\n</html>\n")
