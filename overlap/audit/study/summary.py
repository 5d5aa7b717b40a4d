"""Per-target entries and the per-set table of a batch audit.

Each column of the table is a set of finding codes (only findings that move the verdict count: critical,
high or medium); a task counts in a column when one of its findings is there. The newest-files column
counts, apart, the tasks whose newest group holds every hidden-test file and those whose group holds every
file the fix changes (the reference paths the audited tree holds).

The `git log --all` column also counts, marked apart (``side_history``, shown ``1†``), the tasks whose only
refs beyond the base name side history dated before it with no fixed content (an old release tag a full
clone keeps): `git log --all` shows those commits, so the cell is not zero, but the task is clean.
"""

from __future__ import annotations

from ..model import VERDICT_RANK, VERDICTS
from .cyber import cyber_summary
from .estimate import estimate

COUNTED = ("critical", "high", "medium")
# G6 reports non-base commits per entry-point label: the labels a ref walk (`git log --all`) follows
WALKED = ("refs", "worktree", "stash", "replace")
COLUMNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("git_log_all", "commits outside the base's history visible to `git log --all`",
     ("G1", "G3", "G8", "G11", "G14", "G6:" + "|".join(WALKED))),
    ("hidden_history", "history a reference walk misses (reflog, unreachable)",
     ("G2", "G4", "G5", "G7", "G9", "G12", "G13", "G6:reflog|index|pseudo-ref|unreachable")),
    ("reference_stored", "fixed files or hidden tests stored", ("F1", "F2", "F3")),
    ("newest_files", "newest files set apart: every hidden-test file / the files to change", ("T1", "T2", "T3")),
)
COLUMN_IDS = tuple(c[0] for c in COLUMNS)


def _column_of(finding: dict) -> str | None:
    check = finding.get("check")
    if check == "G6":
        label = str(finding.get("key", "")).partition(":")[2].split("#")[0]
        return "git_log_all" if label in WALKED else "hidden_history"
    for cid, _, codes in COLUMNS:
        if check in codes:
            return cid
    return None


def _group_paths(finding: dict) -> set[str]:
    ev = finding.get("evidence") or {}
    items = ev.get("group") if isinstance(ev.get("group"), list) else ev.get("items")
    return {i["path"] for i in items or () if isinstance(i, dict) and isinstance(i.get("path"), str)}


def _covered(group: set[str], wanted: set[str], present: set[str] | None) -> bool:
    wanted = wanted & present if present is not None else wanted
    return bool(wanted) and wanted <= group


def columns_of(report: dict) -> dict:
    """The columns one audited task falls in: {column: bool}, the newest-files column split in two."""
    out: dict = {cid: False for cid in COLUMN_IDS}
    newest = {"tests": False, "fix": False}
    inputs = report.get("inputs") or {}
    tests = {p for s in inputs.get("tests") or () for p in s.get("paths", ())}
    fix = {p for s in inputs.get("fix") or () for p in s.get("paths", ())}
    for target in report.get("targets") or ():
        for f in target.get("findings") or ():
            if f.get("severity") not in COUNTED:
                continue
            cid = _column_of(f)
            if cid is None:
                continue
            out[cid] = True
            if cid == "newest_files":
                group = _group_paths(f)
                rp = (f.get("evidence") or {}).get("reference_paths")
                present = set(rp) if isinstance(rp, list) else None
                newest["tests"] |= _covered(group, tests, present)
                newest["fix"] |= _covered(group, fix - tests, present)
    out["newest_files"] = {"any": out["newest_files"], **newest}
    # the study's convention: a ref `git log --all` follows that names only side history dated before the base
    # (an old release tag) is counted, marked apart, though the task is clean (the key only when it holds)
    if not out["git_log_all"] and any(
        f.get("check") == "G1" and (f.get("evidence") or {}).get("side_history_before_base") is True
            for target in report.get("targets") or () for f in target.get("findings") or ()):
        out["side_history"] = True
    return out


def entry_of(target, key: str, result: dict) -> dict:
    """A target's entry in the document (and in its own result file, with the full report beside it)."""
    entry = {"key": key, "set": target.set, "instance_id": target.instance_id, target.kind: target.target,
             "kind": target.kind, "reference": target.reference(), "status": result["status"],
             "error": result.get("error"), "verdict": None, "complete": None, "columns": None, "findings": [],
             "digest": None}
    if "network" in result:  # the route needs no image: a failed audit still has it
        entry["network"] = result["network"]
    report = result.get("report")
    if result["status"] == "ok" and report:
        images = [t["image"] for t in report.get("targets") or () if isinstance(t.get("image"), dict)]
        entry["digest"] = next((i["config_digest"] for i in images if i.get("config_digest")), None)
        entry.update(verdict=report["verdict"], complete=report["complete"], columns=columns_of(report),
                     findings=[{"target": t["path"], **f} for t in report["targets"] for f in t["findings"]])
    return entry


def _ids(entries: list[dict]) -> list[str]:
    return sorted({e["instance_id"] or e.get("image") or e.get("path") or "?" for e in entries})


def _cell(entries: list[dict]) -> dict:
    ids = _ids(entries)
    return {"count": len(ids), "ids": ids}


def set_summary(name: str, entries: list[dict], sampling: dict | None = None) -> dict:
    """One set's row; ``sampling`` (how its tasks were drawn, with ``population``, the whole set's size) adds to
    every count the share of the audited tasks and its interval for the whole set."""
    ok = [e for e in entries if e["status"] == "ok"]
    cols = {cid: _cell([e for e in ok if e["columns"][cid] is True]) for cid in COLUMN_IDS[:-1]}
    side = [e for e in ok if e["columns"].get("side_history") is True]
    if side:
        cols["git_log_all"] = {**_cell([e for e in ok if e["columns"]["git_log_all"] is True] + side),
                               "side_history": _cell(side)}
    newest = [e for e in ok if e["columns"]["newest_files"]["any"]]
    cols["newest_files"] = {"any": _cell(newest),
                            "tests": _cell([e for e in newest if e["columns"]["newest_files"]["tests"]]),
                            "fix": _cell([e for e in newest if e["columns"]["newest_files"]["fix"]]),
                            # a group set apart that holds neither every hidden-test file nor every fixed file
                            "other": _cell([e for e in newest if not (e["columns"]["newest_files"]["tests"]
                                                                      or e["columns"]["newest_files"]["fix"])])}
    verdicts = {v: _cell([e for e in ok if e["verdict"] == v]) for v in VERDICTS}
    out = {"set": name, "tasks": len(_ids(entries)), "targets": len(entries), "audited": len(ok),
           "failed": _cell([e for e in entries if e["status"] != "ok"]), "verdicts": verdicts, "columns": cols,
           "network": network_summary(entries), "cyber": cyber_summary(ok), "population": None, "sampling": None,
           "digests": sorted({e["digest"] for e in ok if e.get("digest")})}
    if sampling is not None:
        out.update(population=sampling.get("population"), sampling=sampling)
        # the sample behind a share is the tasks audited: a failed target says nothing about the set
        _add_estimates(out, len(_ids(ok)), sampling.get("population"))
    return out


def _add_estimates(node, sample: int, population: int | None) -> None:
    """Every count cell below ``node`` (not the failed targets) gets its ``estimate``."""
    for key, value in node.items() if isinstance(node, dict) else ():
        if key == "failed" or not isinstance(value, dict):
            continue
        if isinstance(value.get("count"), int) and isinstance(value.get("ids"), list):
            value["estimate"] = estimate(value["count"], sample, population)
        _add_estimates(value, sample, population)


def network_summary(entries: list[dict]) -> dict | None:
    """The set's "fix one install away" cell: tasks whose route is open (a release carries the fix), with the
    median days from the task's creation to that release; each other route counted apart. None when the run
    did not check the index."""
    checked = [e for e in entries if isinstance(e.get("network"), dict)]
    if not checked:
        return None
    routes: dict[str, list[dict]] = {}
    for e in checked:
        routes.setdefault(str(e["network"].get("route")), []).append(e)
    days = sorted(d for e in routes.get("open", ()) if (d := (e["network"].get("first_release") or {})
                                                           .get("days_after_created")) is not None)
    median = None
    if days:
        mid = len(days) // 2
        median = days[mid] if len(days) % 2 else round((days[mid - 1] + days[mid]) / 2, 1)
    return {"open": _cell(routes.get("open", [])), "median_days": median, "days_known": len(days),
            "routes": {r: _cell(v) for r, v in sorted(routes.items())}}


def summarise(entries: list[dict], order: list[str] | None = None, sampling: dict | None = None) -> list[dict]:
    """The per-set table, sets in ``order`` (as given: the targets file's or the benchmarks' order), any other
    set after them by name; ``sampling``: set -> how its tasks were drawn."""
    present = {e["set"] for e in entries}
    names = [n for n in dict.fromkeys(order or ()) if n in present] + sorted(present - set(order or ()))
    return [set_summary(n, [e for e in entries if e["set"] == n], (sampling or {}).get(n)) for n in names]


def worst_verdict(entries: list[dict]) -> str | None:
    found = [e["verdict"] for e in entries if e["verdict"]]
    return min(found, key=VERDICT_RANK.__getitem__) if found else None
