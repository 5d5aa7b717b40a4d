"""The evidence, text and SWE summary blocks get sections of their own in report.md / report.html."""

from overlap.api import compare
from overlap.api.demo import demo_data
from overlap.outputs.report.evidence_sections import swe_blocks
from overlap.outputs.report.markdown import render_markdown
from overlap.outputs.report.result_view import view_of


def test_demo_report_has_evidence_and_text_sections():
    md = render_markdown(view_of(compare("mimo-cyber", ["cybergym"], data=demo_data(), permutations=0)))
    assert "### Evidence\n" in md and "Fix relation: not run (mimo-cyber has no patch)" in md
    assert "| crash grade | matched pairs | matched rate | control rate |" in md
    assert "| type_and_frame | 4 | 57.1% | 0.0% |" in md
    assert "### Text (n-gram filter view and pair runs)" in md
    assert "| 13 | 0 of 8 | 0 | 0 | 0 of 3 | 0 | 7 |" in md  # 7 bench descriptions are shorter than 13 words
    assert "### Evidence grades" not in md  # the summary covers the pair columns


def test_swe_section_tables_read_defensively():
    blocks = swe_blocks({"found_by_key": {"repo_pr_exact": 2, "repo_pr": 3}, "overlap": {}}, None, None)
    assert blocks[0].rows == [["repo_pr_exact", "2", ""], ["repo_pr", "3", ""]]
    assert swe_blocks({"unexpected": 1}, None, None)[0].rows == [["unexpected", "1"]]
