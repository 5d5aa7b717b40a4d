"""The HTML report as a reader sees it: the demo report and a SWE compare report rendered in headless
Chromium at 1400 and 800 px wide.

Fails on an empty plot (an <img>/<svg> of zero size, an SVG with nothing drawn, or a blank region where
the screenshot shows the plot), a "Plot skipped" banner, a section with a heading and nothing under it,
a page wider than the window, or raw `field | value` dumps outside the collapsed appendix. Skipped, with
a message, only where no `chromium` / `chromium-browser` is installed (CI installs it from Debian
packages in `.ci/run`). Never touches the network (local files, offline Hub, Chromium's network features
off).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from overlap.api import compare
from overlap.api.demo import demo_data
from overlap.outputs.report.html import PLOTS_SKIPPED
from overlap.outputs.report.result_folders import write_compare_report

SWE_TESTS = Path(__file__).resolve().parents[1] / "swe"
WIDTHS = (1400, 800)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (apt-get install chromium): the report "
    "screenshot test needs `chromium` or `chromium-browser` on PATH")

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1")

# Written into a copy of the page: where every plot sits and how wide the page is, read back by --dump-dom.
MEASURE = """<script>
window.addEventListener("load", () => {
  const rects = [...document.querySelectorAll("main img, main svg")].filter(e => !e.closest("details"))
    .map(e => { const r = e.getBoundingClientRect();
      return {tag: e.tagName, alt: e.getAttribute("alt") || "", x: r.left + scrollX, y: r.top + scrollY,
              w: r.width, h: r.height, natural: e.naturalWidth || 0}; });
  const out = document.createElement("pre"); out.id = "measured";
  out.textContent = JSON.stringify({rects, width: document.documentElement.scrollWidth,
                                    height: document.documentElement.scrollHeight});
  document.body.appendChild(out);
});
</script>"""


def _chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp)


def _measure(html: Path, width: int, tmp: Path) -> dict:
    probe = tmp / f"measure-{width}.html"
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", MEASURE + "\n</body>"), encoding="utf-8")
    done = _chromium(f"--window-size={width},1000", "--virtual-time-budget=5000", "--dump-dom",
                     probe.as_uri(), tmp=tmp)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, f"Chromium did not lay the page out at {width} px: {done.stderr[-500:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def _screenshot(html: Path, width: int, height: int, tmp: Path) -> Path:
    png = tmp / f"shot-{width}.png"
    done = _chromium(f"--window-size={width},{height}", f"--screenshot={png}", html.as_uri(), tmp=tmp)
    assert png.is_file(), f"no screenshot at {width} px: {done.stderr[-500:]}"
    return png


def _drawn_share(image, box) -> float:
    """Share of the pixels in `box` that differ from the region's most common colour (its background)."""
    region = image.crop(box).convert("RGB")
    colours = region.getcolors(maxcolors=region.width * region.height)
    background = max(colours)[0]
    return 1 - background / (region.width * region.height)


def check_html(html: str) -> None:
    """What the markup alone shows: plots drawn, nothing skipped, no empty section, raw dumps collapsed."""
    assert PLOTS_SKIPPED not in html and "Plot skipped" not in html and "plot-skipped" not in html
    images = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)" alt="([^"]*)"', html)
    assert images, "the report has no plot"
    for data, alt in images:
        svg = base64.b64decode(data).decode("utf-8")
        size = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
        assert size and float(size.group(1)) > 50 and float(size.group(2)) > 50, f"plot of zero size: {alt}"
        assert svg.count("<path") >= 10, f"plot with nothing drawn: {alt}"
        assert "<text" in svg or "font" in svg, f"plot without labels: {alt}"
    for section in re.findall(r"<section>(.*?)</section>", html, re.S):
        body = re.sub(r"<h\d>.*?</h\d>", "", section, flags=re.S)
        assert body.strip(), f"section with nothing under its heading: {section[:120]}"
    main, _, appendix = html.partition('<details class="appendix"')
    assert "<th>field</th><th>value</th>" not in main, "raw field | value dump outside the appendix"
    assert not appendix or appendix.startswith(' id="appendix">'), "the appendix is not collapsed"


def check_page(html_path: Path, tmp: Path) -> None:
    from PIL import Image

    check_html(html_path.read_text(encoding="utf-8"))
    for width in WIDTHS:
        measured = _measure(html_path, width, tmp)
        assert measured["width"] <= width, f"page wider than the window at {width} px ({measured['width']} px)"
        rects = measured["rects"]
        assert rects, f"no plot laid out at {width} px"
        height = min(int(measured["height"]) + 20, 30000)
        with Image.open(_screenshot(html_path, width, height, tmp)) as shot:
            for r in rects:
                assert r["w"] > 50 and r["h"] > 50, f"plot drawn at zero size at {width} px: {r}"
                assert r["x"] + r["w"] <= width + 1, f"plot wider than the page at {width} px: {r['alt']}"
                box = (int(r["x"]), int(r["y"]), int(r["x"] + r["w"]), int(min(r["y"] + r["h"], shot.height)))
                assert box[3] > box[1], f"plot below the screenshot at {width} px: {r['alt']}"
                share = _drawn_share(shot, box)
                assert share > 0.02, f"plot region blank at {width} px ({share:.1%} drawn): {r['alt']}"


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_demo_report_renders_every_plot(tmp_path, offline):
    folder = write_compare_report(compare("mimo-cyber", ["cybergym"], data=demo_data()), tmp_path / "demo")
    check_page(folder / "report.html", tmp_path)
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "\n## Appendix\n" in md and md.index("## Appendix") > md.index("### Matched pairs, side by side")


def test_swe_report_renders_and_shows_the_lazy_train_text_and_patch(tmp_path, offline):
    sys.path.insert(0, str(SWE_TESTS))
    try:
        from swe_fixtures import write_all, write_prs
    finally:
        sys.path.remove(str(SWE_TESTS))
    data = write_all(tmp_path / "data")
    data["swe-rebench-v2-prs"] = write_prs(tmp_path / "data")
    result = compare("swe-rebench-v2-prs", ["swe-bench-multilingual", "multi-swe-bench"], data=data,
                     permutations=0)
    folder = write_compare_report(result, tmp_path / "swe")
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "LLM text ripgrep (first)" in html  # the train text, fetched for the paired items only
    assert "has no patch" not in html  # patches fetched for the pairs, so the fix relation was worked out
    check_page(folder / "report.html", tmp_path)


def test_atlas_report_in_a_browser(tmp_path):
    """The atlas's report.html: the heatmap is drawn (an SVG with shapes, of real size), the page fits the
    window, and each cell links to its page, which Chromium opens."""
    from overlap.api.atlas import atlas
    from overlap.outputs.ship.atlas_repo import write_atlas

    data = {**demo_data(), "arvo": Path(__file__).resolve().parents[2] / "data" / "demo" / "arvo"}
    out = tmp_path / "atlas"
    write_atlas(atlas(["mimo-cyber", "cybergym"], data=data, cache=tmp_path / "cache", pool="none"), out)
    page = out / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("<body>", "<body><main>", 1)
                     .replace("</body>", "</main>" + MEASURE + "</body>", 1), encoding="utf-8")
    done = _chromium("--window-size=800,600", "--dump-dom", probe.as_uri(), tmp=tmp_path)
    measured = json.loads(re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S).group(1)
                          .replace("&quot;", '"'))
    svgs = [r for r in measured["rects"] if r["tag"].lower() == "svg"]
    assert svgs and all(r["w"] > 100 and r["h"] > 50 for r in svgs), measured
    assert measured["width"] <= 800
    links = re.findall(r'href="(cells/[^"]+\.html)"', page.read_text(encoding="utf-8"))
    assert links == ["cells/mimo-cyber__cybergym.html"]
    cell = _chromium("--dump-dom", (out / links[0]).as_uri(), tmp=tmp_path)
    assert "mimo-cyber × cybergym" in cell.stdout and "bench_items_matched" in cell.stdout
