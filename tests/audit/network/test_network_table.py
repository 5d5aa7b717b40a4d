"""The image-set table's "fix one install away" column in every format, from the targets' network sections: the
tasks whose route is open, with the median days (checked here against ``statistics.median``); a run that did not
check the index shows no such column; a targets file's record columns reach the route."""

from __future__ import annotations

import csv
import io
import json
import statistics

from hypothesis import given
from hypothesis import strategies as st

from overlap.audit.study.render import render_console, render_csv, render_html, render_md
from overlap.audit.study.run import BatchOptions, document
from overlap.audit.study.summary import entry_of
from overlap.audit.study.targets import BatchTarget, read_targets

ROUTES = ("open", "checked", "unknown_package", "unavailable")


def _doc(tasks: list[tuple[str, float | None]], check_index: bool = True) -> dict:
    options = BatchOptions(check_index=check_index)
    entries = []
    for i, (route, days) in enumerate(tasks):
        t = BatchTarget("bench:v1", f"/x/{i}", "path", instance_id=f"t-{i:02d}")
        first = {"version": "1.0", "days_after_created": days} if route == "open" else None
        result = {"status": "error", "error": "no image"}
        if check_index:
            result["network"] = {"route": route, "reason": None if route == "open" else "why", "first_release": first,
                                 "pin": "p<1.0" if first else None, "ecosystem": "pypi", "package": "p"}
        entries.append(entry_of(t, t.key(options.result_fields()), result))
    return document(entries, options)


TASK = st.one_of(st.tuples(st.just("open"), st.one_of(st.none(), st.integers(0, 4000).map(lambda d: d / 10))),
                 st.tuples(st.sampled_from(ROUTES[1:]), st.none()))


@given(st.lists(TASK, min_size=1, max_size=12))
def test_the_cell_in_every_format(tasks):
    doc = _doc(tasks)
    opened = [f"t-{i:02d}" for i, (route, _) in enumerate(tasks) if route == "open"]
    days = [d for route, d in tasks if route == "open" and d is not None]
    median = round(statistics.median(days), 1) if days else None
    cell = f"{len(opened)} (median {median:g} d)" if opened and median is not None else str(len(opened))
    (s,) = doc["sets"]
    assert s["network"]["open"]["ids"] == opened and s["network"]["median_days"] == median
    assert "fix one install away" in [c["title"] for c in doc["columns"]]
    console = render_console(doc).splitlines()
    assert any(line.split("  ")[1:] and line.strip().startswith("fix one install away") and line.endswith(cell)
               for line in console), console
    rows = list(csv.DictReader(io.StringIO(render_csv(doc))))
    assert int(rows[0]["network"]) == len(opened)
    assert rows[0]["network_median_days"] == ("" if median is None or not opened else f"{median:g}")
    assert rows[0]["network_ids"] == " ".join(opened)
    md = render_md(doc).splitlines()
    assert md[0].endswith("| fix one install away | failed |") and md[2].endswith(f"| {cell} | {len(tasks)} |")
    html = render_html(doc)
    assert "<th>fix one install away</th>" in html
    assert f"<summary>{cell}</summary>" in html if opened else f'<td class="num count">{cell}</td>' in html
    assert json.loads(json.dumps(doc))["sets"][0]["network"]["routes"].get("open", {"count": 0})["count"] == \
        len(opened)


def test_no_column_without_the_route_and_closed_with_network_none():
    doc = _doc([("open", 3.0)], check_index=False)
    assert doc["sets"][0]["network"] is None
    for text in (render_console(doc), render_csv(doc), render_md(doc), render_html(doc)):
        assert "fix one install away" not in text
    closed = _doc([("closed", None), ("closed", None)])
    assert any(line.strip().startswith("fix one install away") and line.endswith("closed")
               for line in render_console(closed).splitlines())


def test_a_targets_file_carries_the_record_columns_and_old_keys_stay(tmp_path):
    rows = tmp_path / "t.jsonl"
    rows.write_text(json.dumps({"path": "repo", "instance_id": "a-1", "repo": "psf/requests", "version": "2.31",
                                "created_at": "2024-01-02T00:00:00Z", "package": "pypi:requests"}) + "\n")
    (t,) = read_targets(rows)
    assert (t.repo, t.version, t.created_at, t.package) == ("psf/requests", "2.31", "2024-01-02T00:00:00Z",
                                                           "pypi:requests")
    plain = BatchTarget(t.set, t.target, t.kind, instance_id=t.instance_id)
    without = BatchOptions().result_fields()
    assert t.key(without) == plain.key(without)  # no route asked: the record columns change nothing
    with_route = BatchOptions(check_index=True).result_fields()
    assert t.key(with_route) != plain.key(with_route)
