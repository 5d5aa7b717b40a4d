"""report.html: one self-contained page (inline CSS, plots as SVG data URIs, no external assets).

Plots need matplotlib (the optional extra `plots`); without it the page says the plots were skipped and
everything else renders. SVGs are made deterministic (fixed hash salt, no date) so re-runs are
byte-identical.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from ..plots import pyplot
from .assemble import APPENDIX, build_report
from .cell_text import title_of
from .sections import ResultView

PLOTS_SKIPPED = "Plots skipped: matplotlib is not installed (install the extra: pip install overlap[plots])."
NORMALISED, PLAIN, OBSERVED = "#1f6fb2", "#b9c7d6", "#c0392b"


def _draw_shares(ax, data: dict[str, Any]) -> None:
    labels = list(data["bars"])
    y = range(len(labels))
    normalised = [100 * float(data["bars"][k][0] or 0) for k in labels]
    plain = [100 * float(data["bars"][k][1] or 0) for k in labels]
    ax.barh([i - 0.2 for i in y], normalised, height=0.4, color=NORMALISED, label="normalised ids")
    ax.barh([i + 0.2 for i in y], plain, height=0.4, color=PLAIN, label="ids as written (plain join)")
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("benchmark items matched (%)")
    ax.set_ylabel("benchmark (subset)")
    ax.set_title("Share of benchmark items found in the training set", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)


def _normal_pdf(x: float, mean: float, sd: float) -> float:
    return math.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))


def exact_null(model: dict[str, Any]) -> tuple[list[int], list[float]] | None:
    """The exact chance distribution of the overlap count, rebuilt from the counts a null reports: one
    hypergeometric (pool, bench_in_pool, train_in_pool) or the convolution of one per stratum (pool,
    bench, train). None when the counts are not there."""
    import numpy as np  # imported here with scipy: heavy, needed only to draw a null
    from scipy.stats import hypergeom

    def pmf(pool: Any, bench: Any, train: Any):
        try:
            pool, bench, train = int(pool), int(bench), int(train)
        except (TypeError, ValueError):
            return None
        if not 0 <= bench <= pool or not 0 <= train <= pool:
            return None
        return hypergeom(pool, bench, train).pmf(np.arange(min(bench, train) + 1))

    strata = model.get("strata") or []
    if strata:
        total = np.ones(1)
        for row in strata:
            part = pmf(row.get("pool"), row.get("bench"), row.get("train"))
            if part is None:
                return None
            total = np.convolve(total, part)
    else:
        total = pmf(model.get("pool"), model.get("bench_in_pool"), model.get("train_in_pool"))
        if total is None:
            return None
    return list(range(len(total))), [float(p) for p in total]


MASS = 1e-4  # chance probabilities below this are left off the x axis


def null_range(model: dict[str, Any]) -> tuple[float, float]:
    """The x range where a null's chance mass sits, widened to include the observed and expected counts
    (so a null centred on 175-220 is drawn there, not from 0)."""
    observed = float(model.get("observed") or 0)
    expected = float(model.get("expected") or 0)
    sd = float(model.get("sd") or 0)
    exact = exact_null(model)
    if exact is not None:
        held = [x for x, p in zip(*exact, strict=True) if p > MASS] or [0]
        lo, hi = min(held), max(held)
    elif sd > 0:
        lo, hi = expected - 4 * sd, expected + 4 * sd
    else:
        lo = hi = expected
    lo, hi = max(0.0, min(lo, observed, expected)), max(hi, observed, expected)
    pad = max(1.0, 0.06 * (hi - lo))
    return max(-0.5, lo - pad), hi + pad


def _draw_null(ax, name: str, model: dict[str, Any], xlim: tuple[float, float]) -> None:
    """The chance distribution of the overlap count (exact when the counts are given, else a normal curve
    from the expected count and sd) with the observed count as a red line, on the shared x range."""
    observed = float(model.get("observed") or 0)
    expected = float(model.get("expected") or 0)
    sd = float(model.get("sd") or 0)
    exact = exact_null(model)
    lo, hi = xlim
    if exact is not None:
        shown = [(x, p) for x, p in zip(*exact, strict=True) if lo <= x <= hi]
        ax.bar([x for x, _ in shown], [p for _, p in shown], width=0.85 if hi - lo < 60 else 1.0,
               color=PLAIN, label="chance (exact)")
    elif sd > 0:
        xs = [lo + (hi - lo) * i / 200 for i in range(201)]
        ax.fill_between(xs, [_normal_pdf(x, expected, sd) for x in xs], color=PLAIN, label="chance (normal approx.)")
    ax.axvline(expected, color="#555555", linestyle="--", linewidth=1, label=f"expected {expected:,.3g}")
    ax.axvline(observed, color=OBSERVED, linewidth=2, label=f"observed {observed:,g}")
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom=0)
    ax.set_title(f"Null: {name}", fontsize=10)
    ax.set_xlabel("overlapping items (count)")
    ax.set_ylabel("probability under chance")
    ax.legend(fontsize=7, loc="upper right")


def _draw_strata(ax, data: dict[str, Any]) -> None:
    """Observed minus expected overlap per stratum, both signs: excesses to the right (red), deficits to
    the left (blue), so a stratum below chance never reads as over-representation."""
    labels = data["labels"]
    y = list(range(len(labels)))
    diff = [float(o) - float(e) for o, e in zip(data["observed"], data["expected"], strict=True)]
    colors = [OBSERVED if d > 0 else NORMALISED for d in diff]
    ax.barh(y, diff, height=0.6, color=colors)
    ax.axvline(0, color="#333333", linewidth=1)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    reach = max([abs(d) for d in diff] + [0.5]) * 1.8  # room for the "seen, expected" labels
    ax.set_xlim(-reach, reach)
    for i, (d, o, e) in enumerate(zip(diff, data["observed"], data["expected"], strict=True)):
        ax.annotate(f"{float(o):g} seen, {float(e):.2g} expected", (d, i), xytext=(4 if d >= 0 else -4, 0),
                    textcoords="offset points", va="center", ha="left" if d >= 0 else "right", fontsize=7)
    ax.set_xlabel("observed minus expected overlapping items (right: above chance, left: below)")
    ax.set_ylabel("stratum")
    ax.set_title(data.get("title") or "Overlap above or below chance, per stratum", fontsize=10)


def draw_plot(plt, kind: str, data: dict[str, Any]) -> str:
    """One plot as an SVG data URI."""
    if kind == "null":
        models = data["models"]
        ranges = [null_range(m) for m in models.values()]
        shared = (min(r[0] for r in ranges), max(r[1] for r in ranges))  # one x range for every panel
        fig, axes = plt.subplots(1, len(models), figsize=(4.6 * len(models), 3.2), squeeze=False, sharey=False)
        for ax, (name, model) in zip(axes[0], models.items(), strict=True):
            _draw_null(ax, name, model, shared)
        fig.suptitle("Overlap expected by chance vs observed", fontsize=11)
    else:
        rows = len(data.get("bars") or data.get("labels") or [0])
        fig, ax = plt.subplots(figsize=(7.5, 1.4 + 0.45 * rows))
        (_draw_shares if kind == "shares" else _draw_strata)(ax, data)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def render_html(view: ResultView) -> str:
    plt = pyplot()
    sections = build_report(view)
    images: dict[int, str] = {}
    if plt is not None:
        import matplotlib  # imported here: heavy, loaded only to draw

        with matplotlib.rc_context({"svg.hashsalt": "overlap", "svg.fonttype": "none", "font.size": 9}):
            for section in sections:
                for block in section.blocks:
                    if type(block).__name__ == "Plot":
                        images[id(block)] = draw_plot(plt, block.kind, block.data)
    env = Environment(loader=PackageLoader("overlap.outputs.report", "templates"), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("report.html.j2").render(
        title=title_of(view.summary), sections=sections, images=images, plots_skipped=plt is None,
        skipped_note=PLOTS_SKIPPED, appendix_title=APPENDIX, kind=lambda b: type(b).__name__, id=id)
    return "\n".join(line.rstrip() for line in html.splitlines()) + "\n"
