"""The routes table: a row per image set, a column per route the answer reaches the agent by, each cell the
tasks of the sample it is open for, the share's 95 % interval for the whole set and the worst finding behind it.

Routes (``ROUTES``, in the order shown): contamination (the task is also in a training set, from a compare
result's ``<bench>_contaminated_ids.txt``), Git history (findings of the ``git`` route), leftovers and file
times (the fixed content stored, file times, leftovers), fixed builds (a second build of the fixed code, B1)
and PoC inputs (P1), each "not checked" by an audit without those checks, and network (a package release already carries
the fix, ``--check-index``). A task counts in a column when one of its findings there is graded critical,
high or medium, as in the per-set table; the worst of them is the cell's finding."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ..model import CHECK_ORDER, SEVERITY_RANK
from ..model import ROUTES as AUDIT_ROUTES
from .estimate import estimate
from .summary import COUNTED
from .table import label

SCHEMA = "overlap.audit.routes/1"


@dataclass(frozen=True)
class Route:
    id: str
    title: str
    audit_routes: tuple[str, ...] = ()  # the findings' routes this column reads (empty: not from findings)
    checks: tuple[str, ...] = ()  # or the finding codes it reads

    def reads(self, finding: dict) -> bool:
        return finding.get("check") in self.checks if self.checks else finding.get("route") in self.audit_routes

    @property
    def checked(self) -> bool:
        """Whether this version's audit has the route's checks at all."""
        return any(c in CHECK_ORDER for c in self.checks) if self.checks else bool(
            set(self.audit_routes) & set(AUDIT_ROUTES))


ROUTES: tuple[Route, ...] = (
    Route("contamination", "contamination (also in a training set)"),
    Route("git", "Git history", ("git",)),
    Route("leftovers", "leftovers and file times", ("fixed-content", "times", "leftovers")),
    # a second build of the target from the fixed code, and (the answer of a cyber task) its PoC input
    Route("fixed_builds", "fixed builds", checks=("B1",)),
    Route("pocs", "PoC inputs", checks=("P1",)),
    Route("network", "network (package index)"),
)


def read_contamination(folders: list[str] | None) -> dict[str, dict[str, list[str]]]:
    """Compare result folders -> {benchmark: {training set: [contaminated ids]}} (their id lists)."""
    out: dict[str, dict[str, list[str]]] = {}
    for folder in folders or ():
        root = Path(folder)
        lists = sorted(root.glob("*_contaminated_ids.txt")) if root.is_dir() else []
        if not lists:
            raise InputError(f"--contamination {folder}: no <benchmark>_contaminated_ids.txt in it; give the folder "
                             "`overlap compare TRAIN BENCH… --out DIR` wrote")
        train = root.name
        try:
            summary = json.loads((root / "summary.json").read_text(encoding="utf-8"))
            name = (summary.get("train") or {}).get("name") if isinstance(summary, dict) else None
            train = str(name) if name else train
        except (OSError, ValueError, AttributeError):
            pass
        for path in lists:
            ids = [_id(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            out.setdefault(path.name.removesuffix("_contaminated_ids.txt"), {})[train] = ids
    return out


def _id(line: str) -> str:
    """An id of a list: as written, or a JSON string (an id holding a line break)."""
    if line.startswith('"'):
        try:
            return str(json.loads(line))
        except ValueError:
            return line
    return line


def _worst(findings: list[dict]) -> dict | None:
    found = [f for f in findings if f.get("severity") in COUNTED]
    if not found:
        return None
    f = min(found, key=lambda f: (SEVERITY_RANK[f["severity"]], str(f.get("check")), str(f.get("key"))))
    return {"check": f.get("check"), "severity": f["severity"], "key": f.get("key"), "title": f.get("title")}


def _cell(hits: dict[str, dict | None], audited: int, population: int | None, checked: bool) -> dict:
    """hits: task -> its worst finding in the route (None: counted with no finding to show)."""
    ids = sorted(hits)
    worst = [w for w in hits.values() if w is not None]
    worst.sort(key=lambda w: (SEVERITY_RANK.get(w.get("severity"), 9), str(w.get("check")), str(w.get("key"))))
    return {"checked": checked, "count": len(ids) if checked else None, "ids": ids,
            "estimate": estimate(len(ids), audited, population) if checked and population else None,
            "worst": worst[0] if worst else None}


def routes_table(doc: dict, contamination: dict[str, dict[str, list[str]]] | None = None) -> dict:
    """The routes table of a batch document (its sets in their order)."""
    rows = []
    network_run = any(isinstance(e.get("network"), dict) for e in doc["targets"])
    for s in doc["sets"]:
        ok = [e for e in doc["targets"] if e["set"] == s["set"] and e["status"] == "ok"]
        audited, population = len({label(e) for e in ok}), s.get("population")
        bench = s["set"].rsplit(":", 1)[0] if ":" in s["set"] else s["set"]
        cells = {}
        for route in ROUTES:
            if route.id == "contamination":
                trains = (contamination or {}).get(bench) or {}
                hits = {label(e): {"check": "train", "severity": "set", "key": ", ".join(
                    sorted(t for t, ids in trains.items() if label(e) in ids))} for e in ok
                    if any(label(e) in ids for ids in trains.values())}
                cells[route.id] = _cell(hits, audited, population, bench in (contamination or {}))
            elif route.id == "network":
                hits = {label(e): _release(e["network"]) for e in ok
                        if isinstance(e.get("network"), dict) and e["network"].get("route") == "open"}
                cells[route.id] = _cell(hits, audited, population, network_run)
            else:
                hits = {}
                for e in ok:
                    worst = _worst([f for f in e.get("findings") or () if route.reads(f)])
                    if worst is not None:
                        hits[label(e)] = worst
                cells[route.id] = _cell(hits, audited, population, route.checked)
        rows.append({"set": s["set"], "audited": audited, "population": population, "sampling": s.get("sampling"),
                     "routes": cells})
    return {"schema": SCHEMA, "tool": doc.get("tool"), "routes": [{"id": r.id, "title": r.title} for r in ROUTES],
            "sets": rows}


def _release(network: dict) -> dict:
    f = network.get("first_release") or {}
    return {"check": "network", "severity": "open",
            "key": f"{network.get('ecosystem')}:{network.get('package')} {f.get('version')}"}
