"""What the CI-format tests check on any SARIF log or JUnit report: the SARIF 2.1.0 JSON schema and GitHub
code scanning's documented requirements; Jenkins' junit-10.xsd (tests/ci_schemas, kept for offline runs)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

SCHEMAS = Path(__file__).resolve().parent / "ci_schemas"


@cache
def _sarif_validator():
    import jsonschema

    return jsonschema.Draft4Validator(json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text()))


@cache
def _junit_schema():
    import xmlschema

    return xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))


def assert_valid_sarif(log: dict) -> None:
    """The SARIF 2.1.0 schema, then GitHub code scanning's requirements for an uploaded file."""
    _sarif_validator().validate(log)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"]
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
    for result in run["results"]:
        assert result["ruleId"] in rule_ids
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"].strip()
        assert result["level"] in ("error", "warning", "note")
        uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for loc in result["locations"]]
        assert uris and all(uris)
        assert result["partialFingerprints"] and all(isinstance(v, str) and v
                                                       for v in result["partialFingerprints"].values())


def assert_valid_junit(text: str) -> None:
    _junit_schema().validate(text)
