import base64
import re
import sys

import pytest
from outputs_helpers import attach_test_baselines

from overlap.outputs.report import sections
from overlap.outputs.report.html import PLOTS_SKIPPED, render_html
from overlap.outputs.report.markdown import render_markdown
from overlap.outputs.report.result_folders import write_compare_report, write_report_extras, write_reports
from overlap.outputs.report.result_view import load_result, view_of
from overlap.outputs.report.sections import Note, Section, register_section


def images(html):
    return re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)


@pytest.fixture
def saved(demo_result, tmp_path):
    """A result folder as `overlap compare --out` writes it once the lead calls write_report_extras."""
    out = write_compare_report(demo_result, tmp_path / "result")
    write_report_extras(demo_result, out, reports=False)
    return out


def test_html_is_self_contained_with_plots(demo_result):
    observed = attach_test_baselines(demo_result)["cybergym"]["shared_in_pool"]
    html = render_html(view_of(demo_result))
    svgs = images(html)
    assert len(svgs) == 3  # shares, chance null, per-project observed vs expected
    assert all(base64.b64decode(s).lstrip().startswith(b"<?xml") for s in svgs)
    null_svg = base64.b64decode(svgs[1]).decode()
    assert "<svg" in null_svg and f"observed {observed}" in null_svg and "chance (exact)" in null_svg
    assert not re.search(r'(src|href)="(?!data:)', html)  # no external assets
    assert "<link" not in html and "<script" not in html
    sha = demo_result.benches[0].bench.provenance.files[0].sha256[:16]
    for text in ("Summary by benchmark", "Chance baselines", "within project", "Matched pairs, side by side",
                 "arvo_42471002", "xsltEvalXPathPredicate", "Provenance", sha):
        assert text in html


def test_baselines_not_run_says_why(demo_result):
    demo_result.sections["baselines"] = {"status": "not_run", "pool": "arvo-meta", "reason": "Hub unreachable"}
    for comp in demo_result.benches:
        comp.sections.clear()
    md = render_markdown(view_of(demo_result))
    assert "chance baselines: pool (Hub unreachable)" in md and "### Chance baselines" not in md


def test_plots_skipped_without_matplotlib(demo_result, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    html = render_html(view_of(demo_result))
    assert PLOTS_SKIPPED in html and not images(html)
    assert "Summary by benchmark" in html


def test_sections_absent_are_skipped_and_present_are_shown(demo_result):
    demo_result.sections.pop("baselines", None)
    for comp in demo_result.benches:
        comp.sections.clear()
    plain = render_markdown(view_of(demo_result))
    assert "Chance baselines" not in plain and "Evidence grades" not in plain
    block = attach_test_baselines(demo_result)["cybergym"]
    demo_result.benches[0].sections["custom_check"] = {"ngram": {"n": 13, "pairs_with_shared": 1}, "status": "ran"}
    demo_result.benches[0].pairs["crash_grade"] = ["same", "same", "same", "different", "", "same", "same", "same"]
    md = render_markdown(view_of(demo_result))
    uniform = block["uniform"]
    lo, hi = uniform["expected_interval"]
    assert "### Chance baselines" in md
    assert f"| uniform | {uniform['observed']} | {uniform['expected']:,.4g} | {uniform['sd']:,.4g} | {lo}–{hi} |" in md
    assert "| within project |" in md and "_within project: per stratum_" in md
    assert "## Chance baselines: pool" in md and "| strata_by | project |" in md
    assert "### Custom check" in md and "_ngram_\n\n| field | value |\n|---|---|\n| n | 13 |" in md  # unregistered
    assert "### Evidence grades" in md and "| same | 6 |" in md and "| (empty) | 1 |" in md
    assert "crash_grade: same" in md  # the pair's evidence in its example header


def test_registered_section_renders_its_key(demo_result, monkeypatch):
    monkeypatch.setattr(sections, "SECTIONS", list(sections.SECTIONS))  # the registration stays in this test
    register_section(Section("swe", "SWE checks", lambda value, view, bench: [Note(f"{value['checked']} checked")],
                             scope="top"))
    demo_result.sections["swe"] = {"checked": 3}
    md = render_markdown(view_of(demo_result))
    assert "## SWE checks\n\n3 checked" in md


def test_report_rerenders_from_a_saved_folder_byte_identically(demo_result, saved, tmp_path):
    view = load_result(saved)
    assert view.items is not None and len(view.items) == 15  # 8 train + 7 bench items in pairs / duplicates
    write_reports(view, saved)
    first = {n: (saved / n).read_bytes() for n in ("report.md", "report.html")}
    write_reports(load_result(saved), saved)
    assert first == {n: (saved / n).read_bytes() for n in ("report.md", "report.html")}
    # The saved folder renders like the in-memory result.
    assert first["report.md"].decode() == render_markdown(view_of(demo_result))
    assert b"xsltEvalXPathPredicate" in first["report.html"]


def test_folder_without_item_texts_still_renders(demo_result, tmp_path):
    out = write_compare_report(demo_result, tmp_path / "bare", reports=False)
    (out / "pair_items.parquet").unlink()  # a folder written before item texts were saved
    md = render_markdown(load_result(out))
    assert "ids only" in md and "arvo_42471002" in md
