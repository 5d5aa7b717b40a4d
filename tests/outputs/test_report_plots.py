"""The report's plots: x axes fitted to where the chance mass sits, one range for the panels of a figure,
the per-stratum plot showing deficits as well as excesses, a title and axis labels on every plot."""

from __future__ import annotations

import base64

from overlap.outputs.plots import pyplot
from overlap.outputs.report.html import draw_plot, null_range
from overlap.outputs.report.sections import _strata_blocks


def _svg(uri: str) -> str:
    return base64.b64decode(uri.split(",", 1)[1]).decode("utf-8")


def test_null_range_sits_where_the_mass_is_not_at_zero():
    model = {"observed": 214, "expected": 197.5, "sd": 7.0}  # normal approximation, mass at 170-225
    lo, hi = null_range(model)
    assert 160 < lo < 175 and 220 < hi < 235
    exact = {"observed": 6, "expected": 1.2, "sd": 0.94, "pool": 61, "bench_in_pool": 9, "train_in_pool": 8}
    lo, hi = null_range(exact)
    assert lo <= 0 and 6 < hi < 12  # the observed count is on the axis


def test_null_panels_share_one_range_and_are_labelled():
    models = {"uniform": {"observed": 214, "expected": 197.5, "sd": 7.0},
              "within project": {"observed": 214, "expected": 205.0, "sd": 5.0}}
    svg = _svg(draw_plot(pyplot(), "null", {"models": models}))
    for text in ("Null: uniform", "Null: within project", "probability under chance", "overlapping items (count)",
                 "Overlap expected by chance vs observed"):
        assert text in svg


def test_strata_plot_shows_deficits_too():
    strata = [{"stratum": "a", "shared": 3, "expected": 1.0}, {"stratum": "b", "shared": 0, "expected": 2.5},
              {"stratum": "c", "shared": 1, "expected": 1.0}]
    plot = _strata_blocks(strata, "within project")[0]
    assert plot.data["labels"] == ["a", "c", "b"]  # above chance first, the largest deficit last
    svg = _svg(draw_plot(pyplot(), "strata", plot.data))
    assert "observed minus expected" in svg and "stratum" in svg and "Observed minus expected overlap" in svg
    assert "0 seen, 2.5 expected" in svg  # the deficit is drawn and labelled
