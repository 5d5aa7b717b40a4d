"""Report records, the severity and verdict rules (docs/audit.md), and the JSON report.

``Finding`` → ``CheckResult`` → ``Target`` → ``AuditReport``. Verdicts are derived, never stored, so
they cannot disagree with the findings: a route, target or run is ``leak`` if any finding is critical
or high, else ``incomplete`` if any check could not run, else ``suspect`` if any finding is medium,
else ``clean``.

JSON (schema ``overlap.audit/1``): keys sorted, lists in a stable order, no wall-clock time and no temporary
path, so two runs on the same input are byte-identical. The human table is in ``report.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "overlap.audit/1"
SEVERITIES = ("critical", "high", "medium", "low", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
CLASSES = ("content", "location", "metadata", "hygiene")
ROUTES = ("git", "fixed-content", "times", "leftovers", "builds")
VERDICTS = ("leak", "incomplete", "suspect", "clean")
VERDICT_RANK = {v: i for i, v in enumerate(VERDICTS)}

# Every check (G, F, T, L), in report order, with its route.
CHECK_IDS: tuple[tuple[str, str], ...] = (
    *((f"G{i}", "git") for i in range(1, 16)),
    *((f"F{i}", "fixed-content") for i in range(1, 4)),
    *((f"T{i}", "times") for i in range(1, 4)),
    *((f"L{i}", "leftovers") for i in range(1, 12)),
    # second builds of the target, proof-of-concept inputs and graders: the cyber task's answer carriers
    ("B1", "builds"), ("P1", "builds"), ("P2", "builds"),
)
CHECK_ROUTE = dict(CHECK_IDS)
CHECK_ORDER = {cid: i for i, (cid, _) in enumerate(CHECK_IDS)}
ROUTE_ORDER = {r: i for i, r in enumerate(ROUTES)}
STATUSES = ("ran", "not_applicable", "incomplete")


# C0, DEL, C1, line separators, bidi overrides; and lone surrogates, which is how a name that is not UTF-8
# arrives (read with surrogateescape): no output could encode them
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(m: re.Match) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:  # a byte that was not UTF-8, shown as that byte
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def escape(text: str) -> str:
    """Control characters and undecodable bytes as visible escapes: one line, valid UTF-8 (a terminal table, a
    one-line message naming a file)."""
    return _CONTROL.sub(_escaped, text)


def text_safe(value: Any) -> Any:
    """``value`` (a JSON-like tree, keys included) with each undecodable byte of a name written ``\\xNN``, so
    the JSON and every file written from it are valid UTF-8; other text is unchanged."""
    if isinstance(value, str):
        return _SURROGATE.sub(_escaped, value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {text_safe(k): text_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [text_safe(v) for v in value]
    return value


def worst(severities) -> str | None:
    """The most severe of ``severities`` (None when empty)."""
    best = None
    for s in severities:
        if s is not None and (best is None or SEVERITY_RANK[s] < SEVERITY_RANK[best]):
            best = s
    return best


def verdict_of(findings, statuses) -> str:
    """The verdict order: leak > incomplete > suspect > clean."""
    sev = {f.severity for f in findings}
    if sev & {"critical", "high"}:
        return "leak"
    if "incomplete" in statuses:
        return "incomplete"
    if "medium" in sev:
        return "suspect"
    return "clean"


@dataclass
class Finding:
    check: str
    subject: str  # the part of the key after "<check>:" (ref namespace, path, SHA or storage)
    severity: str
    cls: str
    title: str
    where: str
    evidence: dict[str, Any]
    reproduce: dict[str, str]
    false_positive_hint: str | None = None
    related: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.cls not in CLASSES:
            raise ValueError(f"unknown class {self.cls!r}")
        if self.check not in CHECK_ROUTE:
            raise ValueError(f"unknown check {self.check!r}")

    @property
    def key(self) -> str:
        return f"{self.check}:{self.subject}"

    @property
    def route(self) -> str:
        return CHECK_ROUTE[self.check]

    def sort_key(self) -> tuple:
        return (SEVERITY_RANK[self.severity], ROUTE_ORDER[self.route], CHECK_ORDER[self.check],
                self.where, self.key)


@dataclass
class CheckResult:
    id: str
    status: str = "ran"
    reason: str | None = None
    findings: int = 0

    @property
    def route(self) -> str:
        return CHECK_ROUTE[self.id]


@dataclass
class Target:
    kind: str
    path: str
    repo_path: str | None = None
    base: dict[str, Any] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    image: dict[str, Any] | None = None

    def route_verdict(self, route: str) -> str:
        checks = [c for c in self.checks if c.route == route]
        if checks and all(c.status == "not_applicable" for c in checks):
            return "n/a"
        return verdict_of([f for f in self.findings if f.route == route], {c.status for c in checks})

    @property
    def routes(self) -> dict[str, str]:
        return {r: self.route_verdict(r) for r in ROUTES}

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings, {c.status for c in self.checks})

    @property
    def complete(self) -> bool:
        return all(c.status != "incomplete" for c in self.checks)

    def incomplete_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "incomplete"]


@dataclass
class AuditReport:
    tool: dict[str, str]
    inputs: dict[str, Any]
    targets: list[Target]
    fail_on: str | None = None  # set by the CLI; decides ``exit_code``

    @property
    def verdict(self) -> str:
        if not self.targets:
            return "clean"
        return min((t.verdict for t in self.targets), key=VERDICT_RANK.__getitem__)

    @property
    def complete(self) -> bool:
        return all(t.complete for t in self.targets)

    @property
    def findings(self) -> list[Finding]:
        return [f for t in self.targets for f in t.findings]

    @property
    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(SEVERITIES, 0)
        for f in self.findings:
            counts[f.severity] += 1
        return counts

    @property
    def exit_code(self) -> int:
        """The exit code: 2 for ``incomplete``; 1 when ``--fail-on`` is reached; else 0."""
        v = self.verdict
        if v == "incomplete":
            return 2
        if self.fail_on == "leak" and v == "leak":
            return 1
        if self.fail_on == "suspect" and v in ("leak", "suspect"):
            return 1
        return 0

    def to_dict(self) -> dict[str, Any]:
        return report_dict(self)

    def __repr__(self) -> str:
        # short: the dataclass repr would print every finding and input (several KB for one repository)
        where = ", ".join(t.path for t in self.targets[:3]) + (f", … ({len(self.targets)} targets)"
                                                              if len(self.targets) > 3 else "")
        counts = ", ".join(f"{n} {severity}" for severity, n in self.summary.items() if n) or "no findings"
        return (f"<AuditReport {where or self.inputs.get('path', '?')}: {self.verdict}"
                f"{'' if self.complete else ' (incomplete)'}; {counts}>")

    def to_json(self) -> str:
        return report_json(self)


# ------------------------------------------------------------------------- JSON (schema overlap.audit/1)
def finding_dict(f: Finding) -> dict[str, Any]:
    return {"key": f.key, "check": f.check, "route": f.route, "class": f.cls, "severity": f.severity,
            "title": f.title, "where": f.where, "evidence": f.evidence, "reproduce": f.reproduce,
            "false_positive_hint": f.false_positive_hint, "related": f.related}


def target_dict(t: Target) -> dict[str, Any]:
    return {
        "kind": t.kind, "path": t.path, "repo_path": t.repo_path, "image": t.image, "base": t.base,
        "verdict": t.verdict, "complete": t.complete, "routes": t.routes,
        "checks": [{"id": c.id, "route": c.route, "status": c.status, "reason": c.reason, "findings": c.findings}
                   for c in t.checks],
        "findings": [finding_dict(f) for f in sorted(t.findings, key=Finding.sort_key)],
        "stats": t.stats,
    }


def report_dict(r: AuditReport) -> dict[str, Any]:
    return text_safe({
        "schema": SCHEMA, "tool": r.tool, "inputs": r.inputs, "verdict": r.verdict, "complete": r.complete,
        "exit_code": r.exit_code, "summary": r.summary,
        "targets": [target_dict(t) for t in sorted(r.targets, key=lambda t: t.path)],
    })


def report_json(r: AuditReport) -> str:
    return json.dumps(report_dict(r), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
