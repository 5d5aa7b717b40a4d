"""What a local folder (or glob) given as a dataset holds besides its data files, and what is done with it.

A file left unread is rows left out of the answer, so nothing is skipped without being named: a file of a
type no reader takes (an `.arrow` file written by `datasets.save_to_disk`, a `.tsv`, a `.parquet.xz`), a link
to nothing and a FIFO or device are errors naming the file. Only files that are clearly not rows are left
out: hidden files and folders, documentation and licences (`README*`, `LICENSE*`, `LICENCE*`, `COPYING*`,
`NOTICE*`, `CITATION*`, `CHANGELOG*`, `AUTHORS*`, `CONTRIBUTING*`, `CODE_OF_CONDUCT*`, `Makefile`,
`requirements*`, any `*.md`), code, configuration and pictures (`NO_ROWS_SUFFIXES`: a
loading script, `*.yaml`, `*.png`, …), the `datasets` library's metadata beside its shards
(`dataset_info.json`, `dataset_infos.json`, `dataset_dict.json`, `state.json`), and names starting with `_`
that are no data file (`_SUCCESS`, `_metadata`: what Spark and parquet writers leave, as pyarrow skips them).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import InputError
from ...words import plural

READ_FORMATS = ".parquet, .jsonl, .json or .csv, each also .gz or .zst compressed"
METADATA_NAMES = frozenset({"dataset_info.json", "dataset_infos.json", "dataset_dict.json", "state.json"})
_DOC_STEMS = ("readme", "license", "licence", "copying", "notice", "citation", "changelog", "authors", "contributing",
              "code_of_conduct", "makefile", "requirements")
# Files a dataset repository holds beside its rows that cannot be rows: its loading script and other code,
# configuration, and the images and papers of its card (a clone of a Hub repo has them).
NO_ROWS_SUFFIXES = (".py", ".sh", ".ipynb", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".lock", ".png", ".jpg",
                    ".jpeg", ".gif", ".svg", ".webp", ".pdf", ".bib")


def is_metadata(name: str) -> bool:
    """A file beside the data that holds no rows, though its name may end like a data file's."""
    return name.rsplit("/", 1)[-1].lower() in METADATA_NAMES


def is_documentation(name: str) -> bool:
    """Documentation, licences, code, configuration and pictures: what a dataset repo holds besides rows."""
    base = name.rsplit("/", 1)[-1].lower()
    return base.startswith(_DOC_STEMS) or base.endswith((".md", *NO_ROWS_SUFFIXES))  # LICENSE-MIT, README.txt


def unread_problem(path: Path, is_data: bool) -> str | None:
    """Why `path` (a non-hidden entry of the folder) cannot be left out silently, or None: a data file to read,
    or a file that is no data."""
    if path.is_symlink() and not path.exists():
        return f"a link to {os.readlink(path)}, which does not exist, so its rows cannot be read; fix or remove " \
               "the link"
    if path.is_dir():
        return None
    if not path.is_file():
        return "not a regular file (a FIFO or device); move it out of the folder"
    if is_metadata(path.name) or (not is_data and (is_documentation(path.name) or path.name.startswith("_"))):
        return None  # `_SUCCESS`, `_metadata`: markers and summaries writers (Spark, parquet) leave beside data
    if is_data:
        return None
    why = f"overlap does not read this type of file, so its rows would be left out; it reads {READ_FORMATS}: " \
          "convert it, or move it out of the folder"
    if path.name.lower().endswith(".arrow"):
        why += " (an .arrow file is what the `datasets` library's save_to_disk writes: " \
               "datasets.load_from_disk(FOLDER).to_parquet(FILE) converts it)"
    return why


def folder_entries(root: Path) -> list[Path]:
    """Every entry under `root` (sorted), through links to folders too: `Path.rglob` does not follow them, so a
    clone whose `data/` links to where the shards are kept lost those rows without a word. A folder reached
    again (a link loop, or a second link to it) is not walked twice; hidden folders are not walked (their
    files are no data). A folder that cannot be listed is an error naming it, never a silent gap."""
    out: list[Path] = []
    seen: set[str] = set()
    stack = [root]
    while stack:
        folder = stack.pop()
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = list(folder.iterdir())
        except OSError as exc:
            raise InputError(f"{folder}: cannot list this folder ({exc.strerror or type(exc).__name__}), so its "
                             "files would be left out; make it readable or move it out") from None
        out.extend(entries)
        stack.extend(e for e in entries if e.is_dir() and not e.name.startswith("."))
    return sorted(out)


def refuse_unread(problems: list[tuple[Path, str]]) -> None:
    """One line naming the first file that would be left out (and how many there are)."""
    if not problems:
        return
    path, why = problems[0]
    more = f" ({plural(len(problems) - 1, 'more file')} like it)" if len(problems) > 1 else ""
    raise InputError(f"{path}: {why}{more}")
