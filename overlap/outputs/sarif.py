"""SARIF 2.1.0 logs, the format code scanning reads (GitHub's, and every security scanner's): `overlap audit`
(one result per finding) and `overlap compare` / `filter` (one result per contaminated benchmark item).

What GitHub code scanning requires and these logs keep: `version` "2.1.0" and `$schema`; one run whose
`tool.driver` has a `name` and every rule a result names (`ruleId`, and `ruleIndex` into `rules`); each
result a `message.text`, a `level` (error, warning or note) and a physical location whose artifact URI is
relative to the folder the command ran in when the file lies under it (the checkout in CI); and
`partialFingerprints` computed from what names the finding (the target's URI, the finding's key; the
benchmark and item id), never from times, temporary paths or the message, so a re-run of the same check on
the same input matches the alerts already open instead of opening new ones.

The audit log is built from the report's JSON form (`overlap.audit.model.report_dict`) and the check
descriptions the caller passes: this layer does not import the audit.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "overlap/v1"

# The audit's severities as SARIF levels: what makes a leak is an error, a suspect a warning.
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}

CONTAMINATED_RULE = "bench-item-in-train"
CONTAMINATED_DESCRIPTION = "A benchmark item shares a task identity (OSS-Fuzz issue, CVE, pull request, fix commit) " \
                           "with an item of the training set"


def sarif_json(log: Mapping[str, Any]) -> str:
    """The log as JSON text: two-space indent, key order as built (deterministic), UTF-8."""
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def fingerprint(*parts: str) -> str:
    """A stable digest of what names a result (NUL-separated, so `a` + `bc` is not `ab` + `c`)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def artifact_uri(place: str, cwd: Path) -> str:
    """A local path as a SARIF artifact URI: relative, with `/` separators, when it lies under `cwd` (a
    repository checkout in CI); else an absolute `file://` URI. A place that is not a local path (an image
    reference `docker://…`, a Hub location) is kept as it is."""
    if "://" in place:
        return place
    path = Path(os.path.abspath(place))
    try:
        relative = path.relative_to(Path(os.path.abspath(cwd)))
    except ValueError:
        return path.as_uri()
    return _quoted(relative.as_posix() or ".")


def _quoted(path: str) -> str:
    """A `/`-separated path as URI text; a byte that was not UTF-8 (held as a surrogate) as that byte."""
    return quote(path, safe="/", encoding="utf-8", errors="surrogateescape")


def _joined(base: str, rel: str) -> str:
    """`rel` (a path inside a target, `/`-separated) under the URI `base`."""
    rel_uri = _quoted(rel.lstrip("/"))
    if base in (".", ""):
        return rel_uri
    return f"{base.rstrip('/')}/{rel_uri}"


def _is_path(where: str) -> bool:
    """Whether a finding's `where` names a file inside the target (`.git/packed-refs`, `src/calc.py`)
    rather than a place with no file of its own (`refs`, `object store (refs)`)."""
    return bool(where) and " " not in where and ("/" in where or "." in where) and ".." not in where.split("/")


def _log(driver: dict[str, Any], results: list[dict[str, Any]], invocation: dict[str, Any]) -> dict[str, Any]:
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": driver},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _driver(tool: Mapping[str, Any], rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": str(tool.get("name") or "overlap"), "version": str(tool.get("version") or ""), "rules": rules}


def _rule(rule_id: str, description: str, tags: Iterable[str]) -> dict[str, Any]:
    return {"id": rule_id, "name": rule_id, "shortDescription": {"text": description},
            "fullDescription": {"text": description}, "help": {"text": description},
            "properties": {"tags": sorted(set(tags))}}


# ------------------------------------------------------------------------------------------------ audit
def audit_sarif(report: Mapping[str, Any], descriptions: Mapping[str, str], routes: Mapping[str, str],
                cwd: Path) -> dict[str, Any]:
    """The SARIF log of an audit report (`report_dict`): one rule per check (`descriptions`: check id → what
    it looks at; `routes`: check id → its route, a tag), one result per finding: level from its severity,
    its place (the target, and the file inside it its `where` names) as location, the "see it" command in the
    message. Checks that could not run are tool notifications (and `executionSuccessful` false)."""
    order = list(descriptions)
    rules = [_rule(cid, descriptions[cid], ["security", "audit", routes.get(cid, "audit")]) for cid in order]
    index = {cid: i for i, cid in enumerate(order)}
    results, notes = [], []
    for target in report.get("targets", []):
        given = str(target.get("path", ""))
        base = artifact_uri(given, cwd)
        for finding in target.get("findings", []):
            results.append(_audit_result(finding, given, base, index))
        for check in target.get("checks", []):
            if check.get("status") == "incomplete":
                notes.append({"level": "error", "message": {"text": f"{given}: check {check['id']} could not run: "
                                                                    f"{check.get('reason') or 'no reason given'}"},
                              "associatedRule": {"id": check["id"], "index": index[check["id"]]}})
    invocation = {"executionSuccessful": bool(report.get("complete", True)),
                  "toolExecutionNotifications": notes}
    if not notes:
        del invocation["toolExecutionNotifications"]
    return _log(_driver(report.get("tool") or {}, rules), results, invocation)


def _audit_result(finding: Mapping[str, Any], given: str, base: str, index: Mapping[str, int]) -> dict[str, Any]:
    where = str(finding.get("where") or "")
    uri = _joined(base, where) if _is_path(where) and "://" not in base else base
    reproduce = finding.get("reproduce") or {}
    text = f"{finding['title']} ({finding['severity']}, at {where or given})."
    if reproduce.get("command"):
        cwd = f" in {reproduce['cwd']}" if reproduce.get("cwd") else ""
        text += f" See it: `{reproduce['command']}`{cwd}."
    if finding.get("false_positive_hint"):
        text += f" {finding['false_positive_hint']}"
    location = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
    if where:
        location["logicalLocations"] = [{"fullyQualifiedName": where, "kind": "resource"}]
    return {
        "ruleId": finding["check"],
        "ruleIndex": index[finding["check"]],
        "level": LEVELS[finding["severity"]],
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT: fingerprint("audit", base, finding["key"])},
        "properties": {"severity": finding["severity"], "class": finding.get("class"), "key": finding["key"],
                       "target": given},
    }


# ------------------------------------------------------------------------------------- compare / filter
def contaminated_items(result) -> list[dict[str, Any]]:
    """One record per contaminated benchmark item of a `CompareResult`, benchmarks in their order and items in
    source order: `bench`, `bench_id`, `file`, `file_row`, `train_ids` (sorted), `kinds` (the matched key
    kinds, sorted), `location` and `origin` of the benchmark's provenance."""
    records = []
    for comparison in result.benches:
        bench = comparison.bench
        paired: dict[str, tuple[set[str], set[str]]] = {}
        for pair in comparison.pair_records():
            train_ids, kinds = paired.setdefault(str(pair["bench_id"]), (set(), set()))
            train_ids.add(str(pair["train_id"]))
            kinds.update(k for k in pair.get("kinds") or [] if k)
        if not paired:
            continue
        items = bench.items
        columns = [c for c in ("item_id", "file", "file_row", "row") if c in items.columns]
        rows = items[columns].astype(object).where(items[columns].notna(), None).to_dict("records")
        if "row" in columns:
            rows.sort(key=lambda r: (r["row"] is None, r["row"] if r["row"] is not None else 0))
        provenance = bench.provenance
        for row in rows:
            bench_id = str(row["item_id"])
            if bench_id not in paired:
                continue
            train_ids, kinds = paired.pop(bench_id)
            records.append({"bench": bench.name, "bench_id": bench_id, "file": row.get("file"),
                            "file_row": row.get("file_row"), "train_ids": sorted(train_ids), "kinds": sorted(kinds),
                            "location": getattr(provenance, "location", None),
                            "origin": getattr(provenance, "origin", None)})
        for bench_id, (train_ids, kinds) in sorted(paired.items()):  # an id the items table did not list
            records.append({"bench": bench.name, "bench_id": bench_id, "file": None, "file_row": None,
                            "train_ids": sorted(train_ids), "kinds": sorted(kinds),
                            "location": getattr(provenance, "location", None),
                            "origin": getattr(provenance, "origin", None)})
    return records


def _item_uri(item: Mapping[str, Any], cwd: Path) -> str:
    """Where a benchmark item is read from: its file under the benchmark's location (relative to `cwd` when
    local and under it), else the location, else the benchmark's name."""
    location = item.get("location")
    file = item.get("file")
    if location and "://" not in str(location) and Path(str(location)).exists():
        place = Path(str(location))
        if file and place.is_dir():
            place = place / str(file)
        return artifact_uri(str(place), cwd)
    if location:
        return _joined(str(location), str(file)) if file else str(location)
    return quote(str(item["bench"]), safe="", errors="surrogateescape")


def compare_sarif(items: list[dict[str, Any]], tool: Mapping[str, Any], train: str, crossed: Iterable[str] | None,
                  cwd: Path, see: str | None = None) -> dict[str, Any]:
    """The SARIF log of a compare (or a filter's compare): one result per contaminated benchmark item
    (`contaminated_items`). `crossed`: the benchmarks at or above `--fail-on`, whose items are errors (the
    others' are notes); None (no `--fail-on`): every item is a warning. `see`: a file that lists the pairs
    (the report's pairs.csv), named in each message."""
    crossed_set = None if crossed is None else set(crossed)
    rules = [_rule(CONTAMINATED_RULE, CONTAMINATED_DESCRIPTION, ["security", "contamination"])]
    results = []
    for item in items:
        if crossed_set is None:
            level = "warning"
        else:
            level = "error" if item["bench"] in crossed_set else "note"
        shown = ", ".join(item["train_ids"][:5]) + (f" (+{len(item['train_ids']) - 5} more)"
                                                    if len(item["train_ids"]) > 5 else "")
        where = f" (row {item['file_row']} of {item['file']})" if item.get("file") is not None else ""
        text = (f"{item['bench']} item {item['bench_id']}{where} is in the training set {train}: "
                f"{shown}, by {', '.join(item['kinds']) or 'a shared key'}.")
        text += f" See it: `overlap ids {item['bench_id']}`" + (f"; the pairs are in {see}." if see else ".")
        physical: dict[str, Any] = {"artifactLocation": {"uri": _item_uri(item, cwd)}}
        results.append({
            "ruleId": CONTAMINATED_RULE,
            "ruleIndex": 0,
            "level": level,
            "message": {"text": text},
            "locations": [{"physicalLocation": physical,
                           "logicalLocations": [{"fullyQualifiedName": f"{item['bench']}:{item['bench_id']}",
                                                 "kind": "object"}]}],
            "partialFingerprints": {FINGERPRINT: fingerprint("compare", item["bench"], item["bench_id"])},
            "properties": {"bench": item["bench"], "bench_id": item["bench_id"], "train_ids": item["train_ids"],
                           "kinds": item["kinds"], "file_row": item.get("file_row")},
        })
    return _log(_driver(tool, rules), results, {"executionSuccessful": True})

