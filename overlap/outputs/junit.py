"""JUnit XML, the test report every CI reads (Jenkins, GitLab, Azure DevOps, GitHub test reporters): one test
case per audited target (`overlap audit`) or per benchmark (`overlap compare` / `filter`), in the schema
those readers share (Jenkins' junit-10.xsd: `testsuites` > `testsuite` with `tests`, `failures`, `errors` >
`testcase` with `failure` / `error` and `system-out`).

A test case fails when its target or benchmark reaches the command's `--fail-on` level (an audit without
`--fail-on`: a leak; a compare without it: any contaminated item), so the report says what the exit code
says; an audit target whose checks could not all run is an error. No times and no host name are written:
the same inputs give the same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

# Characters XML 1.0 cannot hold at all (C0 controls but tab and line feed, lone surrogates, U+FFFE/F),
# written as visible escapes: a commit subject or a file name can carry them. A carriage return is escaped
# too: a parser would read it back as a line feed.
_NOT_XML = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]")
AUDIT_FAILS_AT = {"leak": ("leak",), "suspect": ("leak", "suspect")}


def xml_text(value: Any) -> str:
    """`value` as text XML can hold."""
    text = "" if value is None else str(value)
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _element(tag: str, parent: ET.Element | None = None, text: str | None = None, **attributes: Any) -> ET.Element:
    attrs = {k.rstrip("_"): xml_text(v) for k, v in attributes.items() if v is not None}
    node = ET.Element(tag, attrs) if parent is None else ET.SubElement(parent, tag, attrs)
    if text is not None:
        node.text = xml_text(text)
    return node


def _document(name: str, suites: list[ET.Element]) -> str:
    root = _element("testsuites", name=name,
                    tests=sum(int(s.get("tests", "0")) for s in suites),
                    failures=sum(int(s.get("failures", "0")) for s in suites),
                    errors=sum(int(s.get("errors", "0")) for s in suites))
    root.extend(suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(name: str, cases: list[ET.Element]) -> ET.Element:
    suite = _element("testsuite", name=name, tests=len(cases),
                     failures=sum(1 for c in cases if c.find("failure") is not None),
                     errors=sum(1 for c in cases if c.find("error") is not None), skipped=0)
    suite.extend(cases)
    return suite


def audit_junit(report: Mapping[str, Any], fail_on: str | None) -> str:
    """One test case per target of an audit report (`report_dict`): a failure when its verdict reaches
    `fail_on` (`leak` when None), an error when it is `incomplete`; its findings, worst first, as the
    failure's text (with each "see it" command) and in `system-out` when it passes."""
    failing = AUDIT_FAILS_AT[fail_on or "leak"]
    cases = []
    for target in report.get("targets", []):
        case = _element("testcase", name=target["path"], classname=f"overlap.audit.{target.get('kind') or 'target'}")
        lines = [_finding_line(f) for f in target.get("findings", [])]
        verdict = target.get("verdict")
        counts = _counts(target.get("findings", []))
        if verdict == "incomplete":
            missing = [f"{c['id']}: {c.get('reason') or 'no reason given'}" for c in target.get("checks", [])
                       if c.get("status") == "incomplete"]
            _element("error", case, "\n".join(missing + lines), type="incomplete",
                     message=f"audit incomplete: {len(missing)} check(s) could not run")
        elif verdict in failing:
            _element("failure", case, "\n".join(lines), type=verdict,
                     message=f"verdict {verdict} ({counts}) reaches --fail-on {fail_on or 'leak'}")
        if verdict not in failing and verdict != "incomplete":
            _element("system-out", case, "\n".join([f"verdict {verdict} ({counts})", *lines]))
        cases.append(case)
    return _document("overlap audit", [_suite("overlap audit", cases)])


def _counts(findings: Iterable[Mapping[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f["severity"]] = counts.get(f["severity"], 0) + 1
    shown = [f"{counts[s]} {s}" for s in ("critical", "high", "medium", "low", "info") if counts.get(s)]
    return ", ".join(shown) or "no findings"


def _finding_line(f: Mapping[str, Any]) -> str:
    see = (f.get("reproduce") or {}).get("command")
    return f"{f['severity']} {f['check']} {f.get('where') or ''}: {f['title']}" + (f" (see it: {see})" if see else "")


def compare_junit(summary: Mapping[str, Any], items: list[dict[str, Any]], crossed: Iterable[str] | None,
                  command: str = "compare") -> str:
    """One test case per benchmark of a compare summary: a failure when it is at or above `--fail-on`
    (`crossed`: the benchmarks that are; None without `--fail-on`: any contaminated item fails), listing its
    contaminated items (`overlap.outputs.sarif.contaminated_items`) with the training items they match."""
    crossed_set = None if crossed is None else set(crossed)
    train = (summary.get("train") or {}).get("name", "train")
    by_bench: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_bench.setdefault(item["bench"], []).append(item)
    cases = []
    for bench in summary.get("benches", []):
        name = bench["bench"]
        case = _element("testcase", name=name, classname=f"overlap.{command}.{train}")
        matched, total = bench.get("bench_items_matched", 0), bench.get("bench_items", 0)
        lines = [f"{i['bench_id']}: {', '.join(i['train_ids'])} ({', '.join(i['kinds'])})"
                 for i in by_bench.get(name, [])]
        headline = f"{matched} of {total} bench items in {train} ({bench.get('bench_share', 0):.1%})"
        fails = name in crossed_set if crossed_set is not None else matched > 0
        if fails:
            _element("failure", case, "\n".join(lines), type="contaminated", message=headline)
        else:
            _element("system-out", case, "\n".join([headline, *lines]))
        cases.append(case)
    return _document(f"overlap {command}", [_suite(f"overlap {command} {train}", cases)])
