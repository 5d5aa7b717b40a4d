"""Helpers for the chance-baseline tests (a plain module, not a conftest.py, so nothing here can shadow
another folder's conftest): a tiny ARVO-Meta clone in the real layout
(`archive_data/meta/<old id>.json`, fields as the arvo-meta declaration reads them), with invented values."""

from __future__ import annotations

import json
from pathlib import Path

REPORT = (
    "Detailed report: https://oss-fuzz.com/testcase?key=51581720{key}\n\n"
    "Project: {project}\nFuzzer: libFuzzer_{project}_fuzz\nFuzz target binary: fuzz\n"
    "Job Type: libfuzzer_asan_{project}\nPlatform Id: linux\n\n"
    "Crash Type: {crash_type}\nCrash Address: 0x602000000011\nCrash State:\n{frames}  \n"
    "Sanitizer: address (ASAN)\n\nRecommended Security Severity: High\n\nIssue filed automatically."
)

# old id, project, crash type, crash-state frames, fix_commit (string or list)
META_BUGS = [
    (10055, "graphicsmagick", "Stack-buffer-overflow WRITE 1", ["TranslateTextEx", "AnnotateImage", "DrawPrimitive"],
     "bc328f2fcf47f91b1b14d04665cb209e30e0716d"),
    (10288, "libxml2", "Heap-buffer-overflow READ 4", ["xmlParseCharRef", "xmlParseReference", "xmlParseContent"],
     ["1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"]),
    (10400, "libxslt", "Use-of-uninitialized-value", ["xsltNumberFormat", "xsltNumber"],
     "3333333333333333333333333333333333333333"),
    (11500, "libxml2", "Null-dereference READ", ["xmlXPathNextAncestor"], "4444444444444444444444444444444444444444"),
    (12001, None, "Index-out-of-bounds", ["php_parse", "zend_compile"], ""),
]


def meta_record(old_id: int, project: str | None, crash_type: str, frames: list[str], fix) -> dict:
    content = REPORT.format(key=old_id, project=project or "unknown", crash_type=crash_type,
                            frames="".join(f"  {f}\n" for f in frames))
    comment = {"projectName": "oss-fuzz", "localId": old_id,
               "commenter": {"userId": "382749006", "displayName": "ClusterFuzz-External"},
               "timestamp": 1535220395, "content": content, "descriptionNum": 1}
    follow_up = {"projectName": "oss-fuzz", "localId": old_id, "sequenceNum": 1, "timestamp": 1535221470,
                 "amendments": [{"fieldName": "Labels", "newOrDeltaValue": "OS-Linux"}]}
    record = {"fix": f"https://github.com/example/{project}{fix if isinstance(fix, str) else fix[0]}",
              "verify": "0", "localId": old_id, "project": project, "fuzzer": "libfuzzer", "sanitizer": "asan",
              "crash_type": crash_type, "severity": "High", "report": {"comments": [comment, follow_up]},
              "fix_commit": fix, "repo_addr": f"https://github.com/example/{project}"}
    if project is None:
        del record["project"]
    return record


def write_meta_clone(root: Path, bugs=META_BUGS) -> Path:
    folder = root / "archive_data" / "meta"
    folder.mkdir(parents=True, exist_ok=True)
    for bug in bugs:
        (folder / f"{bug[0]}.json").write_text(json.dumps(meta_record(*bug), indent=4))
    (root / "archive_data" / "patches").mkdir(exist_ok=True)
    (root / "archive_data" / "patches" / "10055.diff").write_text("--- a/x\n+++ b/x\n")
    return root


def block_network(monkeypatch) -> None:
    """Make any attempt to open a URL fail the test."""
    import urllib.request

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args[0] if args else kwargs}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
