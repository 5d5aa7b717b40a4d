"""`overlap report`: report.md and report.html rendered again from a saved result folder.

The library under the command (pandas, pyarrow, huggingface_hub, datasets) is imported inside its body:
that keeps `overlap --help` fast (tests/test_cli.py guards it), it dodges no cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from ..errors import InputError
from ..outputs.atomic import atomic_folder, folder_owner
from .options import Format, FormatOption, out_option
from .shared import ResultDir, check_out, print_files


def refuse_atlas(folder: Path, command: str) -> None:
    """An atlas folder named as a compare result: said as what it is (else: "not an overlap result folder")."""
    if folder_owner(folder) == "atlas":
        raise InputError(f"{folder}: an atlas folder (written by `overlap atlas`); its report.html and card are "
                         "written by `overlap atlas` itself: run it again to re-render them (its cells come from the "
                         f"cache). `overlap {command}` reads a folder written by `overlap compare --out`")


def report(
    result_dir: ResultDir,
    out: Annotated[Path | None, out_option("Folder for report.md and report.html [default: RESULT_DIR].")
                   ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Render report.md and a self-contained report.html from a saved result folder, without recomputing.
    Plots need matplotlib (pip install 'overlap[plots]'); without it the report says they were skipped.

    Example: overlap report reports/demo
    """
    from ..outputs.report.result_folders import write_reports  # imported here: keeps `overlap --help` fast
    from ..outputs.report.result_view import load_result

    refuse_atlas(result_dir, "report")
    view = load_result(result_dir)
    target = Path(out or result_dir)
    in_place = target.resolve() == Path(result_dir).resolve()
    check_out(target, "report", *([] if in_place else [result_dir]))
    if folder_owner(target) == "compare" and not in_place:  # its report.md would contradict its own tables
        raise InputError(f"--out {target}: holds another compare's output; a report goes beside the result it "
                         f"renders ({result_dir}) or into a folder of its own")
    if folder_owner(target) == "compare":  # beside the compare output it renders: the two files only
        paths = write_reports(view, target)
    else:
        with atomic_folder(target, command="report") as tmp:
            paths = [target / p.name for p in write_reports(view, tmp)]
    print_files(paths, fmt, {})
