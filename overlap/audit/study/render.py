"""The per-set table of a batch audit as console text, CSV and Markdown (HTML: ``render_page``), each with the
task ids behind every cell, the image digests, and, for a set drawn from a set of known size, each count's
share and its 95 % interval for the whole set (control characters of ids escaped, as in the single-target table).

The columns are ``table.TABLE``. Sets are in the order given. The console form is a block per set that fits the
terminal's width (``COLUMNS``, else 80): the ids and every note are wrapped to it.

Ids and set names are the user's text: in the CSV an id holding white space (the separator of an ids cell) or a
leading quote is written as a JSON string; in the Markdown a set name's markup characters are backslash-escaped
and an id is a code span fenced longer than any run of backticks in it, so no id reads as another or as markup."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import textwrap

from ... import __version__
from ...words import plural
from ..report import escape
from .render_html import render_html
from .table import (
    SIDE_NOTE,
    columns,
    digests,
    drawn_text,
    estimated,
    grader_lines,
    label,
    network_lines,
    network_value,
    share,
    side_notes,
    value,
)

__all__ = ["render_console", "render_csv", "render_md", "render_html", "network_value", "SIDE_NOTE"]
NAME_WIDTH = 22


def width() -> int:
    """The console's width: ``COLUMNS`` or the terminal's, else 80 (never below 72, the widest row of a table)."""
    return max(72, shutil.get_terminal_size((80, 24)).columns)


def _wrap(text: str, limit: int, indent: str = "    ") -> list[str]:
    return textwrap.wrap(escape(text), limit, subsequent_indent=indent, break_on_hyphens=False) or [""]


def _ids_lines(name: str, ids: list[str], limit: int) -> list[str]:
    """"  NAME: id id id" wrapped to ``limit``, each id whole (an id longer than a line stands on its own)."""
    words = [escape(i) for i in ids]
    return textwrap.wrap(" ".join(words), limit, initial_indent=f"  {name}: ", subsequent_indent="      ",
                         break_long_words=False, break_on_hyphens=False)


def _short(digest: str) -> str:
    algo, _, hexed = digest.partition(":")
    return f"{algo}:{hexed[:12]}" if hexed else digest[:19]


def render_console(doc: dict) -> str:
    limit = width()
    shown = columns(doc)
    with_share = estimated(doc)
    c = doc["counts"]
    lines = [f"overlap {_version(doc)}: {plural(len(doc['sets']), 'image set')}, {c['targets']} targets "
             f"({c['ok']} audited, {c['error']} failed)"]
    for s in doc["sets"]:
        lines += ["", *_wrap(f"{s['set']}: {drawn_text(s)}; {s['audited']} audited, {s['failed']['count']} failed",
                             limit)]
        count_width = max([5, *(len(value(col, s)) for col in shown)])
        head = f"  {'':<{NAME_WIDTH}}{'tasks':>{count_width}}"
        if with_share and s.get("population"):
            head += f"  {'share':>5}  95 % interval, all {s['population']}"
        lines.append(head.rstrip())
        for col in shown:
            row = f"  {col.short:<{NAME_WIDTH}}{value(col, s):>{count_width}}"
            part, interval = share(col.cell(s))
            if part:
                row += f"  {part:>5}  {interval}"
            lines.append(row.rstrip())
        lines.append(f"  {'failed':<{NAME_WIDTH}}{s['failed']['count']:>{count_width}}")
        for col in shown:
            cell = col.cell(s)
            if cell and cell["ids"]:
                lines += _ids_lines(col.short, cell["ids"], limit)
        if s["failed"]["ids"]:
            lines += _ids_lines("failed", s["failed"]["ids"], limit)
        found = digests(doc, s["set"])
        if found:
            lines += _ids_lines("image digests", [f"{i}={_short(d)}" for i, d in found], limit)
    notes = [f"{name}: {SIDE_NOTE}: {' '.join(ids)}" for name, ids in side_notes(doc)]
    notes += grader_lines(doc) + network_lines(doc)
    notes += [f"failed: {e['set']} / {label(e)}: {e['error']}" for e in doc["targets"] if e["status"] != "ok"]
    repeated = c.get("repeated_rows", 0)
    if repeated:
        notes.append(f"{plural(repeated, 'row')} repeating an earlier row's target (audited once)")
    if notes:
        lines.append("")
    for note in notes:
        lines += _wrap(note, limit)
    lines += ["", f"VERDICT: {(doc['verdict'] or 'none').upper()}  ({c['targets']} targets, {c['ok']} audited, "
                  f"{c['error']} failed)"]
    return "\n".join(lines) + "\n"


def _version(doc: dict) -> str:
    return (doc.get("tool") or {}).get("version") or __version__


def _number(x) -> str:
    return "" if x is None else (f"{x:g}" if isinstance(x, float) else str(x))


def render_csv(doc: dict) -> str:
    """One row per set, every count a number (share, low and high as fractions beside it, empty when the set's
    size is unknown), then the ids behind each count and the image digests."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    shown = columns(doc)
    head = ["set", "tasks", "audited", "failed", "population", "drawn", "seed"]
    for col in shown:
        head += [col.id, f"{col.id}_share", f"{col.id}_low", f"{col.id}_high"]
        if col.id == "git_log_all":
            head.append("git_log_all_side_history")
        if col.id == "network":
            head.append("network_median_days")
    graders = any(((s.get("cyber") or {}).get("graders") or {}).get("distinct") for s in doc["sets"])
    head += ["graders_distinct"] if graders else []
    head += [f"{col.id}_ids" for col in shown] + ["failed_ids", "image_digests"]
    w.writerow(head)
    for s in doc["sets"]:
        sampling = s.get("sampling") or {}
        row = [s["set"], s["tasks"], s["audited"], s["failed"]["count"], _number(s.get("population")),
               _number(sampling.get("drawn")), _number(sampling.get("seed"))]
        for col in shown:
            cell = col.cell(s) or {}
            est = cell.get("estimate") or {}
            row += [_number(cell.get("count")), *(_number(est.get(k)) for k in ("share", "low", "high"))]
            if col.id == "git_log_all":
                row.append((s["columns"]["git_log_all"].get("side_history") or {}).get("count", 0))
            if col.id == "network":
                row.append(_number((s.get("network") or {}).get("median_days")))
        if graders:
            row.append(_number(((s.get("cyber") or {}).get("graders") or {}).get("distinct")))
        row += [" ".join(map(_listed, (col.cell(s) or {}).get("ids", []))) for col in shown]
        row += [" ".join(map(_listed, s["failed"]["ids"])),
                " ".join(_listed(f"{i}={d}") for i, d in digests(doc, s["set"]))]
        w.writerow(row)
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


def md_cell(col, s: dict) -> str:
    """A count with its share and interval when the set's size is known: "10 (42 %, 25 %–61 %)"."""
    part, interval = share(col.cell(s))
    shown = _md(value(col, s))
    return f"{shown} ({part}, {interval})" if part else shown


def render_md(doc: dict) -> str:
    shown = columns(doc)
    head = ["image set", "tasks", *(c.short for c in shown), "failed"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in doc["sets"]:
        cells = [_md(s["set"]), _md(drawn_text(s)), *(md_cell(c, s) for c in shown), str(s["failed"]["count"])]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if estimated(doc):
        out += ["A count's share is of the tasks audited; the interval is its 95 % Wilson score interval for the "
                "whole set (finite-population corrected).", ""]
    out += [f"- **{c.short}**: {c.title}" for c in shown] + [""]
    for s in doc["sets"]:
        for c in shown:
            cell = c.cell(s)
            if cell and cell["ids"]:
                out.append(f"- **{_md(s['set'])} / {c.short}**: " + ", ".join(_code(i) for i in cell["ids"]))
        if s["failed"]["ids"]:
            out.append(f"- **{_md(s['set'])} / failed**: " + ", ".join(_code(i) for i in s["failed"]["ids"]))
        found = digests(doc, s["set"])
        if found:
            out.append(f"- **{_md(s['set'])} / image digests**: "
                       + ", ".join(f"{_code(i)} {_code(d)}" for i, d in found))
    for name, ids in side_notes(doc):
        out.append(f"- **{_md(name)}** {SIDE_NOTE}: " + ", ".join(_code(i) for i in ids))
    out += [f"- {_md(line)}" for line in grader_lines(doc)]
    out += ["", f"overlap {_md(_version(doc))}"]
    return "\n".join(out) + "\n"
