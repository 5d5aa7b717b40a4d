"""report.md: the report's sections (`assemble.build_report`) rendered as Markdown through the
`report.md.j2` template. Plots are named and left to report.html."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from .assemble import build_report
from .cell_text import title_of
from .sections import ResultView, fmt

# Characters of data that Markdown would read as markup: a table's column break, raw HTML (an id or a text
# holding `<script>` or `</td>` would be rendered, not shown) and a link's `](` (`[x](javascript:…)`). Each is
# backslash-escaped (shown as itself by every CommonMark reader), the backslash too.
_MD_ESCAPES = str.maketrans({c: "\\" + c for c in "\\|<>"})


def md_text(value: Any) -> str:
    """A value of the data as Markdown text: shown as written, never read as markup."""
    text = fmt(value).translate(_MD_ESCAPES).replace("](", "\\](")
    return text.replace("\r", "").replace("\n", "<br>")


def render_markdown(view: ResultView) -> str:
    """report.md: the same sections as report.html; plots are named and left to the HTML report."""
    env = Environment(loader=PackageLoader("overlap.outputs.report", "templates"), undefined=StrictUndefined,
                      keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["cell"] = md_text
    text = env.get_template("report.md.j2").render(title=title_of(view.summary), sections=build_report(view),
                                                   kind=lambda b: type(b).__name__)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"
