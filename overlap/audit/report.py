"""The audit report as the human table; its JSON form is ``model.report_dict``.

One row per finding, cells cut to the terminal width, and every control character of the input escaped
(a commit subject can carry terminal escapes).
"""

from __future__ import annotations

import shutil
from typing import Any

from ..words import plural
from .model import ROUTES, AuditReport, Finding, escape  # escape: also the CLI's, for its csv and md cells


def _first(f: Finding) -> dict[str, Any] | None:
    """The item the row shows: the first one as severe as the finding (checks list items worst first, but a
    row must never show a medium item while the high one that graded it hides in "+N more")."""
    items = f.evidence.get("items")
    if not (isinstance(items, list) and items and isinstance(items[0], dict)):
        return None
    return next((i for i in items if isinstance(i, dict) and i.get("severity") == f.severity), items[0])


def _jaccard(ev: dict[str, Any]) -> str:
    """J of the time checks: Jaccard index of the set-apart files and the reference's files (1.00: the same)."""
    return f"Jaccard {ev['jaccard']:.2f} with the reference's files" if "jaccard" in ev else ""


def evidence_cell(f: Finding) -> str:
    """A one-line summary of a finding's evidence for the table."""
    ev, first = f.evidence, _first(f)
    more = ev.get("total", 1) - 1 if isinstance(ev.get("total"), int) else 0
    tail = f" (+{more} more)" if more > 0 else ""
    if f.check in ("G6", "G3") and first:
        return f"{first['sha'][:7]} \"{first.get('subject', first.get('message', ''))}\"{tail}"
    if f.check == "G1" and first:
        return f"{first['ref']} -> {first['target'][:7]}" + (" (absent)" if not first["object_present"] else "") + tail
    if f.check == "G2" and first:
        return f"line {first['line']}: {first['old'][:7]}->{first['new'][:7]} \"{first['message']}\"{tail}"
    if f.check in ("G4", "G12") and first and "sha" in first:
        present = f.check == "G4" and first.get("object_present")  # G12 lists only IDs the store lacks
        state = "present" if present else "object absent: an ID only"
        return f"{first['sha'][:7]} ({state}){tail}"
    if f.check in ("T1", "T2") and ev.get("items") is None and ev.get("group"):
        paths = ", ".join(g["path"] for g in ev["group"])
        j = f"; {_jaccard(ev)}" if "jaccard" in ev else ""
        return f"{paths} (gap {ev['gap']:.0f} s{j})"
    if f.check == "T2" and first:
        j = f" ({_jaccard(ev)})" if "jaccard" in ev else ""
        return ", ".join(i["path"] for i in ev["items"]) + j
    return f.title


def _base_cell(base: dict[str, Any]) -> str:
    """The header's base: the commit audited against and where it came from; a given base that is not in
    the store is named as given (the HEAD used instead is not the argument)."""
    sha = (base.get("sha") or "?")[:7]
    if base.get("repository") is False:
        return "none (no repository: the task's files are the base)"
    if base.get("missing"):
        return f"{base['missing'][:7]} ({base.get('source')}, not in store) -> HEAD {sha}"
    return f"{sha} ({base.get('source')})"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def render_table(r: AuditReport, width: int | None = None) -> str:
    """The human table (one block per target, then a final verdict line when there are several)."""
    width = width or shutil.get_terminal_size((160, 24)).columns
    lines: list[str] = []
    targets = sorted(r.targets, key=lambda t: t.path)
    for t in targets:
        counts = {}
        for f in t.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        summary = ", ".join(f"{n} {s}" for s in ("critical", "high", "medium", "low", "info")
                            if (n := counts.get(s)))
        base = t.base or {}
        head = (f"VERDICT: {t.verdict.upper()}  ({summary or 'no findings'})   target={t.path}"
                + (f"  repo={t.repo_path}" if t.repo_path else "")
                + (f"  base={_base_cell(base)}" if base else "")
                + f"  network={r.inputs.get('network')}")
        lines.append(escape(head))
        if base.get("missing"):
            lines.append(escape(f"notice: input error: base {base['missing'][:12]} ({base.get('source')}) is not in "
                                f"this repository's store; the git route was audited against HEAD "
                                f"{(base.get('sha') or '?')[:12]}. Check --base; this is not a leak finding."))
        lines.append("routes: " + "  ".join(f"{k}={v}" for k, v in t.routes.items() if k in ROUTES))
        rows = [("SEV", "CHECK", "WHERE", "EVIDENCE", "SEE IT")]
        for f in sorted(t.findings, key=Finding.sort_key):
            rows.append((f.severity, f.check, escape(f.where), escape(evidence_cell(f)),
                         escape(f.reproduce.get("command", ""))))
        w_sev, w_chk = 9, 6
        w_where = min(max(len(x[2]) for x in rows), 40)
        w_see = min(max(len(x[4]) for x in rows), 48)
        w_ev = max(width - (w_sev + w_chk + w_where + w_see + 8), 20)
        for sev, chk, where, ev, see in rows:
            lines.append(f"{sev:<{w_sev}} {chk:<{w_chk}} {_cut(where, w_where):<{w_where}}  "
                         f"{_cut(ev, w_ev):<{w_ev}}  {_cut(see, w_see)}".rstrip())
        inc = t.incomplete_checks()
        lines.append("checks not run: " + ("; ".join(escape(f"{c.id} ({c.reason})") for c in inc) if inc else "none"))
        unread = t.stats.get("not_scanned")
        if unread:
            first, n = unread["items"][0], unread["total"]
            what = plural(n, "file or archive member", "files or archive members")
            more = f" (+{n - 1} more)" if n > 1 else ""
            lines.append(escape(f"not content-scanned: {what}, e.g. {first['path']} ({first['reason']}){more}; "
                                "raise that limit with --limit NAME=VALUE to read them (--format json lists them "
                                "under stats.not_scanned)"))
        skipped = (t.stats.get("skipped") or {}).get("notes") or []
        if skipped:  # folders the walk could not enter: nothing below them was checked
            more = f" (+{len(skipped) - 1} more)" if len(skipped) > 1 else ""
            lines.append(escape(f"not walked: {skipped[0]}{more} (--format json lists them under stats.skipped)"))
        todo = [c.id for c in t.checks
                if c.status == "not_applicable" and (c.reason or "").startswith("not implemented")]
        if todo:
            lines.append("not implemented in this version: " + " ".join(todo))
    if len(targets) > 1:
        lines.append(f"VERDICT: {r.verdict.upper()}  ({len(targets)} targets)")
    return "\n".join(lines) + "\n"
