"""The atlas as a folder laid out like a Hub dataset repository, and its upload.

    README.md            dataset card: YAML `configs` (cells, pairs), license, provenance, the heatmap
    data/cells.parquet   one row per (train, bench) cell (overlap.atlas_model.CELL_SCHEMA)
    data/pairs.parquet   every counted and reported pair with its kinds (PAIR_SCHEMA)
    heatmap.svg          bench items matched, share per cell
    report.html          the heatmap and the cell table, each cell linking to its page
    cells/<train>__<bench>.html   one page per cell: its numbers and pairs
    atlas.json           parameters, provenance, which cells this run recomputed

Deterministic: the same inputs give byte-identical files (fixed schemas, no timestamps, seeded SVG ids).
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from html import escape
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ... import __version__
from ...atlas_model import AtlasResult
from ...errors import InputError, OverlapError
from ...jsonout import dumps_json
from ..atomic import atomic_folder
from ..plots import pyplot
from ..published import public_provenance, safe_name, scrub_paths
from .hub import check_write_access, http_status
from .hub import hub_api as _hub_api  # the name tests replace

CARD_LICENSE = "apache-2.0"  # the atlas tables (ids and counts) as overlap writes them; each source keeps its own
MAX_PAIRS_SHOWN = 500  # pairs listed on one cell's page (all are in data/pairs.parquet)
STALE_PAGES = "cells/*"  # the cell pages a push replaces whole (`push_atlas`)


def cell_page(train: str, bench: str) -> str:
    first, second = safe_name(train), safe_name(bench)
    if "__" in first or "__" in second:  # `x__y` × `z` and `x` × `y__z` would share one page: the pair's hash
        digest = hashlib.sha256(f"{train}\n{bench}".encode()).hexdigest()[:8]
        return f"cells/{first}__{second}-{digest}.html"
    return f"cells/{first}__{second}.html"


def _grid(result: AtlasResult) -> tuple[list[str], list[str], dict[tuple[str, str], dict[str, Any]]]:
    trains = [e.name for e in result.entries]
    benches = list(result.parameters.get("benches", []))
    cells = {(c["train"], c["bench"]): c for c in result.cells}
    return trains, benches, cells


HEATMAP_LABEL = 40  # characters of a name on the heatmap's axes (the table below it names each in full)


def _label(name: str) -> str:
    """A name as an axis label: a longer one is cut, else the margins it needs leave no room for the plot and
    every other label is clipped."""
    return name if len(name) <= HEATMAP_LABEL else name[:HEATMAP_LABEL - 1] + "…"


def heatmap_svg(result: AtlasResult) -> str:
    """The share of each benchmark (column) matched by each dataset (row), as SVG text."""
    import matplotlib  # pyplot() has loaded it (a core dependency)
    import numpy as np

    plt = pyplot()

    trains, benches, cells = _grid(result)
    shares = np.full((len(trains), len(benches)), np.nan)
    for i, t in enumerate(trains):
        for j, b in enumerate(benches):
            cell = cells.get((t, b))
            if cell is not None and not cell.get("skipped"):
                shares[i, j] = cell["share"]
    with matplotlib.rc_context({"svg.hashsalt": "overlap", "svg.fonttype": "none", "font.size": 9}):
        fig, ax = plt.subplots(figsize=(max(4.0, 2.2 + 1.1 * len(benches)), 1.4 + 0.45 * len(trains)))
        image = ax.imshow(np.ma.masked_invalid(shares), cmap="Reds", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(len(benches)), [_label(b) for b in benches], rotation=30, ha="right")
        ax.set_yticks(range(len(trains)), [_label(t) for t in trains])
        for i, t in enumerate(trains):
            for j, b in enumerate(benches):
                cell = cells.get((t, b))
                text = ("–" if cell is None or cell.get("skipped")
                        else f"{cell['bench_items_matched']}\n{cell['share']:.0%}")
                ax.text(j, i, text, ha="center", va="center", fontsize=7)
        ax.set_xlabel("benchmark: share of its items matched")
        fig.colorbar(image, ax=ax, fraction=0.04)
        with warnings.catch_warnings():  # long names leave no room for the margins: drawn as they are, quietly
            warnings.simplefilter("ignore", UserWarning)
            fig.tight_layout()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return buffer.getvalue()


def _cell_text(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return "–"
    if cell.get("skipped"):
        return f"({cell['skipped']})"
    return f"{cell['bench_items_matched']:,} of {cell['bench_items']:,} ({cell['share']:.1%})"


def card_text(result: AtlasResult) -> str:
    """README.md: front matter the Hub and `datasets.load_dataset(folder, "cells")` read, then the card."""
    trains, benches, cells = _grid(result)
    # an atlas without a pair has an empty pairs file, which `datasets` cannot load as a config (a parquet file
    # of no rows is refused): the config is declared only when it holds rows, and the card says why
    has_pairs = result.pairs_table().num_rows > 0
    front = ("---\n"
             f"license: {CARD_LICENSE}\n"
             "pretty_name: overlap atlas\n"
             "tags:\n- contamination\n- benchmark\n- overlap\n"
             "configs:\n"
             "- config_name: cells\n  data_files:\n  - split: train\n    path: data/cells.parquet\n"
             + ("- config_name: pairs\n  data_files:\n  - split: train\n    path: data/pairs.parquet\n"
                if has_pairs else "")
             + "---\n")
    lines = ["# overlap atlas", "",
             "Which training sets and benchmarks contain the same tasks, by source identity (OSS-Fuzz issue, CVE, "
             "fix commit, pull request at its base commit), every dataset against every benchmark. Written by "
             f"[overlap](https://pypi.org/project/overlap/) {__version__}.", "",
             "![heatmap](heatmap.svg)", "",
             "Each cell: benchmark items (column) in a counted pair with the dataset (row), and their share. "
             "`data/cells.parquet` has one row per cell (config `cells`), `data/pairs.parquet` every pair "
             + ("(config `pairs`), with the kind of each." if has_pairs else
                "with the kind of each: none here (no config `pairs`: an empty file is no config to load)."), "",
             "| dataset | " + " | ".join(benches) + " |", "|---|" + "---|" * len(benches)]
    for t in trains:
        lines.append(f"| {t} | " + " | ".join(_cell_text(cells.get((t, b))) if b != t else "–" for b in benches)
                     + " |")
    lines += ["", "## Provenance", "",
              "| dataset | role | repo | revision | files (sha256) |", "|---|---|---|---|---|"]
    for prov in result.provenance():
        files = "<br>".join(f"`{escape(f['path'])}` {f['sha256'][:12]}"
                            for f in public_provenance({"files": prov["files"]})["files"]) or "–"
        lines.append(f"| {prov['name']} | {prov['role']} | {prov['repo'] or '–'} | {prov['revision'] or '–'} | "
                     f"{files} |")
    lines += ["", "## License", "",
              f"The tables are released under {CARD_LICENSE}. They hold ids and counts taken from the datasets "
              "above, each under its own license.", ""]
    return front + "\n".join(lines)


def _html_page(title: str, body: str) -> str:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
            "</style></head>\n<body>\n" + body + "\n</body></html>\n")


def report_html(result: AtlasResult, svg: str) -> str:
    trains, benches, cells = _grid(result)
    rows = []
    for t in trains:
        tds = []
        for b in benches:
            cell = cells.get((t, b))
            text = escape(_cell_text(cell)) if b != t else "–"
            tds.append(f"<td><a href=\"{escape(cell_page(t, b))}\">{text}</a></td>" if cell and b != t
                       and not cell.get("skipped") else f"<td>{text}</td>")
        rows.append(f"<tr><th>{escape(t)}</th>{''.join(tds)}</tr>")
    head = "".join(f"<th>{escape(b)}</th>" for b in benches)
    svg_body = svg[svg.index("<svg"):] if "<svg" in svg else svg
    return _html_page("overlap atlas", f"<h1>overlap atlas</h1>\n{svg_body}\n<table><tr><th>dataset</th>{head}</tr>"
                      + "".join(rows) + "</table>")


def cell_html(result: AtlasResult, cell: dict[str, Any]) -> str:
    table = result.cell_pairs.get((cell["train"], cell["bench"]))
    count = table.num_rows if table is not None else 0
    shown = table.slice(0, MAX_PAIRS_SHOWN).to_pylist() if table is not None else []
    facts = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in cell.items())
    columns = ("train_id", "bench_id", "kinds", "match_type", "pair_kind", "counted")
    listed = "".join("<tr>" + "".join(f"<td>{escape(str(p.get(c)))}</td>" for c in columns) + "</tr>"
                     for p in shown)
    more = f"<p>{count - MAX_PAIRS_SHOWN:,} more in data/pairs.parquet</p>" if count > MAX_PAIRS_SHOWN else ""
    title = f"{cell['train']} × {cell['bench']}"
    return _html_page(title, f"<h1>{escape(title)}</h1><p><a href=\"../report.html\">atlas</a></p>"
                      f"<table>{facts}</table><h2>pairs</h2><table><tr>"
                      + "".join(f"<th>{c}</th>" for c in columns) + f"</tr>{listed}</table>{more}")


def public_summary(result: AtlasResult) -> dict[str, Any]:
    """atlas.json: the run's summary without a local path (the folder is made to be pushed): each dataset's
    files by name, the mapping's provenance as published provenance is, and any other path by its last part."""
    summary = result.summary()
    for dataset in summary["datasets"]:
        dataset["files"] = public_provenance({"files": dataset["files"]})["files"]
    if summary.get("mapping") is not None:
        summary["mapping"] = public_provenance(summary["mapping"])
    return scrub_paths(summary)


def write_atlas(result: AtlasResult, out: Path) -> list[str]:
    """Write the atlas folder `out` atomically; returns the files written (relative, sorted)."""
    with atomic_folder(Path(out), command="atlas") as tmp:
        (tmp / "data").mkdir()
        # No dictionary pages or statistics that depend on the writer's build: the same cells, the same bytes.
        for name, table in (("cells", result.cells_table()), ("pairs", result.pairs_table())):
            pq.write_table(table, tmp / "data" / f"{name}.parquet", compression="zstd", write_statistics=False)
        svg = heatmap_svg(result)
        (tmp / "heatmap.svg").write_text(svg, encoding="utf-8")
        (tmp / "README.md").write_text(card_text(result), encoding="utf-8")
        (tmp / "report.html").write_text(report_html(result, svg), encoding="utf-8")
        (tmp / "cells").mkdir()
        for cell in result.cells:
            if not cell.get("skipped"):
                (tmp / cell_page(cell["train"], cell["bench"])).write_text(cell_html(result, cell), encoding="utf-8")
        (tmp / "atlas.json").write_text(dumps_json(public_summary(result)), encoding="utf-8")
        written = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file())
    return written


def check_push_target(repo_id: str, *, token: str | None = None, api=None):
    """The Hub API to push the atlas with, once `repo_id` is known to be a repo id the token may write to:
    checked before the atlas is made, so a push that cannot succeed costs no work. An id the Hub cannot take
    (`a/b/c`, `not a repo`, empty) is one line naming it."""
    from huggingface_hub.errors import HFValidationError  # imported here: heavy, needed only to publish
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise InputError(f"--push {repo_id!r}: not a Hub dataset repo id; give OWNER/NAME (letters, digits, '-', "
                         "'_' and '.')") from None
    api = api or _hub_api(token)
    check_write_access(api, repo_id)
    return api


def push_atlas(folder: Path, repo_id: str, *, create_pr: bool = False, token: str | None = None,
               api=None) -> str:
    """Upload the atlas folder to the Hub dataset repo `repo_id` in one commit (or one pull request with
    `create_pr`). Refused before anything is sent without a token with write access."""
    from huggingface_hub import errors as hf_errors  # imported here: heavy, needed only to publish

    api = check_push_target(repo_id, token=token, api=api)
    summary = json.loads((Path(folder) / "atlas.json").read_text(encoding="utf-8"))
    message = f"overlap atlas: {summary['cells']} cells ({len(summary['recomputed'])} recomputed)"
    try:
        # a cell page of an earlier push whose cell this atlas no longer has is deleted in the same commit:
        # upload_folder only adds and replaces, and the stale page would stay on the Hub with its old numbers
        info = api.upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=str(folder),
                                 commit_message=message, create_pr=create_pr, ignore_patterns=[".overlap-output"],
                                 delete_patterns=[STALE_PAGES])
    except hf_errors.HfHubHTTPError as exc:
        raise OverlapError(f"{repo_id}: upload refused ({http_status(exc)}); check write access") from None
    except OSError as exc:  # the connection dropped (requests' errors are OSErrors), a file went away mid-upload
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise OverlapError(f"{repo_id}: the upload failed ({reason}); the atlas is written in {folder}: run the "
                           "command again to push it (its cells come from the cache)") from None
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", "") or info)
