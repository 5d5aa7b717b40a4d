"""The image-set table as a paper prints it: each count's share and its 95 % Wilson score interval for the whole
set (checked against the interval solved here from its defining equation, and against scipy for an unbounded
set), the study's own figures, the console's width under ``COLUMNS``, numeric CSV columns, the sets in the order
given, the image digests and the suspect column in every format, and an HTML page that cites itself."""

from __future__ import annotations

import csv
import io
import json
import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from overlap.audit.study.render import render_console, render_csv, render_html, render_md
from overlap.audit.study.run import BatchOptions, document
from overlap.audit.study.summary import entry_of
from overlap.audit.study.targets import BatchTarget

Z = 1.959963984540054
CHECK = {"git_log_all": "G1", "hidden_history": "G5", "reference_stored": "F1"}


def oracle(count: int, n: int, population: int | None) -> tuple[float, float]:
    """Wilson's bounds: the shares p with (p̂ - p)² = z² p (1 - p) / m, m the sample's worth in independent draws
    (n (N - 1) / (N - n) when drawn without replacement from N; the whole set: no error at all)."""
    p_hat = count / n
    if population is not None and n >= population:
        return p_hat, p_hat
    m = n if population is None else n * (population - 1) / (population - n)
    a, b, c = 1 + Z * Z / m, -(2 * p_hat + Z * Z / m), p_hat * p_hat
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def pct(x: float) -> str:
    return f"{math.floor(x * 100 + 0.5)} %"


def _report(columns: list[str], verdict: str, digest: str) -> dict:
    findings = [{"check": CHECK[c], "severity": "high", "key": f"{CHECK[c]}:x"} for c in columns]
    return {"verdict": verdict, "complete": True, "inputs": {},
            "targets": [{"path": "/", "findings": findings, "image": {"config_digest": digest}}]}


def make_doc(sets: list[tuple[str, list[tuple[str, list[str], str]]]], population: int | None = None) -> dict:
    """A document from (set, [(id, columns, verdict)]), each task's image digest derived from its id."""
    entries = []
    for name, tasks in sets:
        for iid, cols, verdict in tasks:
            t = BatchTarget(name, f"docker://r.test/{iid}:v1", "image", instance_id=iid)
            digest = "sha256:" + f"{abs(hash((name, iid))) % 16**12:012x}" * 5 + "abcd"
            entries.append(entry_of(t, t.key({}), {"status": "ok", "report": _report(cols, verdict, digest)}))
    sampling = None if population is None else {
        name: {"population": population, "drawn": len(tasks), "seed": 0, "method": "random"} for name, tasks in sets}
    return document(entries, BatchOptions(), order=[n for n, _ in sets], sampling=sampling)


def counted(n: int, k: int, column: str, verdict: str = "leak", prefix: str = "t") -> list:
    return [(f"{prefix}-{i:03d}", [column] if i < k else [], verdict if i < k else "clean") for i in range(n)]


def test_the_study_figures_in_every_format(monkeypatch):
    """10 of 24 and 18 of 24 drawn from 2,602 tasks: 25 %–61 % and 55 %–88 %, as the study printed them."""
    monkeypatch.setenv("COLUMNS", "80")
    tasks = [(f"t-{i:02d}", (["git_log_all"] if i < 10 else []) + (["reference_stored"] if i < 18 else []),
              "leak" if i < 18 else "clean") for i in range(24)]
    doc = make_doc([("mimo-code", tasks)], population=2602)
    (s,) = doc["sets"]
    assert s["population"] == 2602 and s["sampling"]["drawn"] == 24
    for count, low, high in ((10, "25 %", "61 %"), (18, "55 %", "88 %")):
        lo, hi = oracle(count, 24, 2602)
        assert (pct(lo), pct(hi)) == (low, high)  # the oracle agrees with the study's figures
    console = render_console(doc)
    assert re.search(r"^  git log --all +10 +42 %  25 %–61 %$", console, re.M), console
    assert re.search(r"^  reference stored +18 +75 %  55 %–88 %$", console, re.M), console
    md = render_md(doc)
    assert "| 10 (42 %, 25 %–61 %) |" in md and "| 18 (75 %, 55 %–88 %) |" in md
    page = render_html(doc)
    assert "42 % (25 %–61 %)" in page and "75 % (55 %–88 %)" in page
    (row,) = csv.DictReader(io.StringIO(render_csv(doc)))
    for column, count in (("git_log_all", 10), ("reference_stored", 18)):
        lo, hi = oracle(count, 24, 2602)
        assert abs(float(row[f"{column}_low"]) - lo) < 1e-4 and abs(float(row[f"{column}_high"]) - hi) < 1e-4
        assert int(row[column]) == count and abs(float(row[f"{column}_share"]) - count / 24) < 1e-4
    assert json.loads(json.dumps(doc))["sets"][0]["columns"]["git_log_all"]["estimate"]["low"] == round(
        oracle(10, 24, 2602)[0], 4)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.one_of(st.none(), st.integers(1, 5000)))
def test_every_estimate_is_wilson_for_the_whole_set(drawn, population):
    n, k = drawn
    if population is not None:
        population = max(population, n)
    doc = make_doc([("s", counted(n, k, "hidden_history"))], population=population)
    cell = doc["sets"][0]["columns"]["hidden_history"]
    if population is None:  # a targets file: no size, no estimate
        assert "estimate" not in cell
        return
    lo, hi = oracle(k, n, population)
    est = cell["estimate"]
    assert abs(est["low"] - lo) < 1e-4 and abs(est["high"] - hi) < 1e-4 and est["share"] == round(k / n, 4)
    # a census has no sampling error; a small sample of a large set is nearly the plain (binomial) interval
    if population == n:
        assert est["low"] == est["high"] == round(k / n, 4)
    ci = binomtest(k, n).proportion_ci(method="wilson")
    assert est["low"] >= ci.low - 1e-4 and est["high"] <= ci.high + 1e-4


IDS = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text("abcdefghij-:.", min_size=1, max_size=30),
                          st.lists(IDS, min_size=1, max_size=12, unique=True)),
                min_size=1, max_size=4, unique_by=lambda x: x[0]),
       st.sampled_from([80, 100, 132]), st.booleans())
def test_console_fits_columns_and_sets_keep_their_order(sets, columns, sized):
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        doc = make_doc([(name, [(i, ["git_log_all", "reference_stored"][: n % 3], "leak" if n % 3 else "clean")
                                for n, i in enumerate(ids)]) for name, ids in sets],
                       population=50 if sized else None)
        console = render_console(doc)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    assert max(len(line) for line in console.splitlines()) <= columns, console
    given_order = [name for name, _ in sets]
    assert [s["set"] for s in doc["sets"]] == given_order
    rows = list(csv.DictReader(io.StringIO(render_csv(doc))))
    assert [r["set"] for r in rows] == given_order
    heads = [line.split(": ", 1)[0] for line in console.splitlines()
             if any(line.startswith(f"{name}: ") for name in given_order)]
    assert [h for h in heads if h in given_order] == given_order
    # every count column of the CSV is a number (an estimate column is empty only when the set's size is unknown)
    for row in rows:
        for key, cell in row.items():
            if key in ("set", "image_digests") or key.endswith("_ids"):
                continue
            if cell == "":
                assert not sized and (key.endswith(("_share", "_low", "_high")) or key in ("population", "drawn",
                                                                                         "seed")), key
                continue
            float(cell)


def test_digests_and_suspect_in_every_format():
    tasks = [("a-1", ["hidden_history"], "leak"), ("a-2", [], "suspect"), ("a-3", [], "clean")]
    doc = make_doc([("s", tasks)])
    digests = {e["instance_id"]: e["digest"] for e in doc["targets"]}
    assert all(d.startswith("sha256:") for d in digests.values()) and len(set(digests.values())) == 3
    assert doc["sets"][0]["digests"] == sorted(digests.values())
    console = render_console(doc)
    assert re.search(r"^  suspect +1$", console, re.M) and "  suspect: a-2" in console
    for iid, d in digests.items():
        assert f"{iid}={d[:19]}" in console
    (row,) = csv.DictReader(io.StringIO(render_csv(doc)))
    assert row["suspect"] == "1" and row["suspect_ids"] == "a-2"
    assert sorted(row["image_digests"].split()) == sorted(f"{i}={d}" for i, d in digests.items())
    md = render_md(doc)
    assert "| suspect |" in md.splitlines()[0]
    page = render_html(doc)
    for text in (md, page):
        assert all(d in text for d in digests.values())
    assert "<th>suspect</th>" in page


def test_the_html_page_is_in_the_reports_style_and_cites_itself():
    doc = make_doc([("s", counted(5, 2, "git_log_all"))], population=100)
    page = render_html(doc)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "border-bottom: 3px solid #1f6fb2" in page  # the report's stylesheet
    assert '<p class="caption">Table 1.' in page and "Wilson score interval" in page
    assert f"overlap {doc['tool']['version']}" in page and "overlap.audit.batch/1" in page
    assert "<dt>git log --all</dt><dd>commits outside the base's history visible to <code>git log --all</code>" \
        in page
    assert "`" not in page  # markup is HTML, never literal backticks
    assert "5 of 100 tasks drawn at random (seed 0)" in page


def test_a_targets_file_gives_its_set_size(tmp_path):
    """--set-size SET=N: a targets file's rows taken as a sample of N tasks; the interval as for a benchmark."""
    import shutil

    from audit_helpers import run_cli
    from batch_helpers import repo, write_jsonl

    if shutil.which("git") is None:
        import pytest

        pytest.skip("git is not installed")
    rows = []
    for i, leak in enumerate((True, False, False)):
        base, patch = repo(tmp_path / f"r{i}", leak=leak)
        rows.append({"path": f"r{i}", "set": "study", "instance_id": f"t-{i}", "base_commit": base, "patch": patch})
    write_jsonl(tmp_path / "t.jsonl", rows)
    res = run_cli("--targets", str(tmp_path / "t.jsonl"), "--set-size", "study=40", "--format", "json", cwd=tmp_path,
                  timeout=180)
    assert res.code == 0, res.stderr
    (s,) = json.loads(res.stdout)["sets"]
    assert s["population"] == 40 and s["sampling"]["drawn"] == 3
    lo, hi = oracle(1, 3, 40)
    est = s["columns"]["hidden_history"]["estimate"]
    assert s["columns"]["hidden_history"]["ids"] == ["t-0"]
    assert abs(est["low"] - lo) < 1e-4 and abs(est["high"] - hi) < 1e-4
    for bad, needle in (("study=2", "more than 2"), ("other=9", "no set 'other'"), ("study", "give SET=N")):
        refused = run_cli("--targets", str(tmp_path / "t.jsonl"), "--set-size", bad, cwd=tmp_path, timeout=60)
        assert refused.code == 2 and needle in refused.stderr and "Traceback" not in refused.stderr, refused.stderr


def test_cyber_columns_when_a_set_has_them(monkeypatch):
    """The fixed-build and PoC cells of a cyber set's summary are columns of every format (absent otherwise), and
    the distinct graders a note and a CSV number."""
    monkeypatch.setenv("COLUMNS", "80")
    doc = make_doc([("cyber", counted(6, 0, "git_log_all")), ("swe", counted(3, 0, "git_log_all"))])
    plain = render_console(doc)
    assert "fixed builds" not in plain and "graders_distinct" not in render_csv(doc)

    def cell(ids):
        return {"count": len(ids), "ids": ids}

    doc["sets"][0]["cyber"] = {"fixed_builds": cell(["t-001", "t-002"]), "fixed_builds_readable": cell(["t-002"]),
                               "pocs": cell(["t-003"]), "pocs_readable": cell([]),
                               "graders": {"distinct": 2, "sha256": ["a", "b"]}}
    console = render_console(doc)
    assert re.search(r"^  fixed builds +2$", console, re.M) and re.search(r"^  fixed builds: agent +1$", console, re.M)
    assert "  PoC inputs: t-003" in console and "cyber: graders: 2 distinct" in console
    assert max(map(len, console.splitlines())) <= 80
    rows = {r["set"]: r for r in csv.DictReader(io.StringIO(render_csv(doc)))}
    assert rows["cyber"]["fixed_builds"] == "2" and rows["cyber"]["graders_distinct"] == "2"
    # every set's images went through the builds route: a set where it found nothing counts 0 (not blank)
    assert rows["swe"]["fixed_builds"] == "0" and rows["swe"]["graders_distinct"] == "0"
    assert "| fixed builds | fixed builds: agent | PoC inputs | PoC inputs: agent |" in render_md(doc)
    assert "<th>fixed builds</th>" in render_html(doc)
