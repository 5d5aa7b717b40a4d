"""The SARIF and JUnit writers on generated text: any title, place or path gives a valid document that reads
back as what was written (the characters XML cannot hold written as visible escapes), and a path under the
current folder is a relative URI that decodes to that path."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

from ci_checks import assert_valid_junit, assert_valid_sarif
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.outputs.junit import audit_junit
from overlap.outputs.sarif import artifact_uri, audit_sarif, sarif_json


def xml_allowed(c: str) -> bool:
    """XML 1.0's Char production, less the carriage return (a parser reads it back as a line feed)."""
    o = ord(c)
    return o in (0x9, 0xA) or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or 0x10000 <= o <= 0x10FFFF


def shown(text: str) -> str:
    return "".join(c if xml_allowed(c) else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                   for c in text)


def report(title: str, where: str, path: str, severity: str = "critical") -> dict:
    finding = {"key": f"L1:{where}", "check": "L1", "route": "leftovers", "class": "content", "severity": severity,
               "title": title, "where": where, "evidence": {}, "reproduce": {"command": f"cat {where}", "cwd": path},
               "false_positive_hint": None, "related": []}
    return {"tool": {"name": "overlap", "version": "0"}, "complete": True,
            "targets": [{"kind": "repo", "path": path, "verdict": "leak", "checks": [], "findings": [finding]}]}


@settings(deadline=None)  # the first example loads the schema
@given(title=st.text(min_size=1, max_size=40), where=st.text(min_size=1, max_size=20),
       path=st.text(min_size=1, max_size=20))
def test_junit_holds_any_text(title, where, path):
    text = audit_junit(report(title, where, path), None)
    assert_valid_junit(text)
    case = ET.fromstring(text).find("./testsuite/testcase")
    assert case.get("name") == shown(path)
    failure = case.find("failure")
    assert failure.text == shown(f"critical L1 {where}: {title} (see it: cat {where})")


@settings(deadline=None)
@given(title=st.text(min_size=1, max_size=40), where=st.text(min_size=1, max_size=20))
def test_sarif_holds_any_text(title, where):
    log = audit_sarif(report(title, where, "/srv/task"), {"L1": "patch text"}, {"L1": "leftovers"}, Path("/srv"))
    assert_valid_sarif(json.loads(sarif_json(log)))
    result = log["runs"][0]["results"][0]
    assert title in result["message"]["text"] and result["level"] == "error"


names = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=12) \
    .filter(lambda n: n not in (".", ".."))


@given(parts=st.lists(names, min_size=1, max_size=3))
def test_a_path_under_the_folder_is_a_relative_uri_of_that_path(parts):
    cwd = Path("/srv/checkout")
    uri = artifact_uri(os.path.join(str(cwd), *parts), cwd)
    assert not uri.startswith("/") and "://" not in uri
    assert " " not in uri and "#" not in uri and "?" not in uri
    assert unquote(uri) == "/".join(parts)


def test_a_path_elsewhere_is_a_file_uri():
    assert artifact_uri("/elsewhere/a b", Path("/srv/checkout")) == "file:///elsewhere/a%20b"
    assert artifact_uri("docker://host/repo:1", Path("/srv")) == "docker://host/repo:1"
