"""report.html: one self-contained page (inline CSS, plots as SVG data URIs, no external assets).

Plots need matplotlib (the optional extra `plots`); without it the page says the plots were skipped and
everything else renders. SVGs are made deterministic (fixed hash salt, no date) so re-runs are
byte-identical.
"""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path
from typing import Any

from .atomic import write_text_atomic
from .markdown import ResultView, build_report, render_markdown, title_of

PLOTS_SKIPPED = "Plots skipped: matplotlib is not installed (install the extra: pip install overlap[plots])."
NORMALISED, PLAIN, OBSERVED = "#1f6fb2", "#b9c7d6", "#c0392b"


def _pyplot():
    """matplotlib.pyplot on the non-interactive backend, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


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
    ax.set_xlabel("bench items matched (%)")
    ax.legend(loc="best", fontsize=8)


def _normal_pdf(x: float, mean: float, sd: float) -> float:
    return math.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))


def exact_null(model: dict[str, Any]) -> tuple[list[int], list[float]] | None:
    """The exact chance distribution of the overlap count, rebuilt from the counts a null reports: one
    hypergeometric (pool, bench_in_pool, train_in_pool) or the convolution of one per stratum (pool,
    bench, train). None when the counts are not there."""
    import numpy as np
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


def _draw_null(ax, name: str, model: dict[str, Any]) -> None:
    """The chance distribution of the overlap count (exact when the counts are given, else a normal curve
    from the expected count and sd) with the observed count as a red line."""
    observed = float(model.get("observed") or 0)
    expected = float(model.get("expected") or 0)
    sd = float(model.get("sd") or 0)
    exact = exact_null(model)
    if exact is not None:
        xs, probs = exact
        last = max(int(observed), max((x for x, p in zip(xs, probs, strict=True) if p > 1e-4), default=0)) + 1
        ax.bar(xs[: last + 1], probs[: last + 1], width=0.85, color=PLAIN, label="chance (exact)")
    elif sd > 0:
        hi = max(observed, expected + 4 * sd) * 1.1 + 1
        lo = max(0.0, expected - 4 * sd)
        xs = [lo + (hi - lo) * i / 200 for i in range(201)]
        ax.fill_between(xs, [_normal_pdf(x, expected, sd) for x in xs], color=PLAIN, label="chance (normal approx.)")
    ax.axvline(expected, color="#555555", linestyle="--", linewidth=1, label=f"expected {expected:.3g}")
    ax.axvline(observed, color=OBSERVED, linewidth=2, label=f"observed {observed:g}")
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("overlapping items")
    ax.set_yticks([])
    ax.legend(fontsize=7)


def _draw_strata(ax, data: dict[str, Any]) -> None:
    labels = data["labels"]
    y = range(len(labels))
    ax.barh([i - 0.2 for i in y], data["observed"], height=0.4, color=OBSERVED, label="observed")
    ax.barh([i + 0.2 for i in y], data["expected"], height=0.4, color=PLAIN, label="expected by chance")
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    ax.set_xlabel("overlapping items")
    ax.legend(loc="best", fontsize=8)


def draw_plot(plt, kind: str, data: dict[str, Any]) -> str:
    """One plot as an SVG data URI."""
    if kind == "null":
        models = data["models"]
        fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 2.8), squeeze=False)
        for ax, (name, model) in zip(axes[0], models.items(), strict=True):
            _draw_null(ax, name, model)
    else:
        rows = len(data.get("bars") or data.get("labels") or [0])
        fig, ax = plt.subplots(figsize=(7.5, 1.0 + 0.45 * rows))
        (_draw_shares if kind == "shares" else _draw_strata)(ax, data)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def render_html(view: ResultView) -> str:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    plt = _pyplot()
    sections = build_report(view)
    images: dict[int, str] = {}
    if plt is not None:
        import matplotlib

        with matplotlib.rc_context({"svg.hashsalt": "overlap", "svg.fonttype": "none", "font.size": 9}):
            for section in sections:
                for block in section.blocks:
                    if type(block).__name__ == "Plot":
                        images[id(block)] = draw_plot(plt, block.kind, block.data)
    env = Environment(loader=PackageLoader("overlap.outputs", "templates"), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    html = env.get_template("report.html.j2").render(
        title=title_of(view.summary), sections=sections, images=images, plots_skipped=plt is None,
        skipped_note=PLOTS_SKIPPED, kind=lambda b: type(b).__name__, id=id)
    return "\n".join(line.rstrip() for line in html.splitlines()) + "\n"


def write_reports(view: ResultView, folder: Path) -> list[Path]:
    """Write report.md and report.html into `folder` (each atomically); returns their paths."""
    folder = Path(folder)
    md, html = folder / "report.md", folder / "report.html"
    write_text_atomic(md, render_markdown(view))
    write_text_atomic(html, render_html(view))
    return [md, html]
