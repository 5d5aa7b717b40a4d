"""`overlap card`: the overlap section of the training set's dataset card, written to --out or pushed as a
Hub pull request.

The library under the command (pandas, pyarrow, huggingface_hub, datasets) is imported inside its body:
that keeps `overlap --help` fast (tests/test_cli.py guards it), it dodges no cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..outputs.atomic import atomic_folder
from .options import Format, FormatOption, PushOption, out_option, repo_option
from .shared import ResultDir, check_out, print_files


def card(
    result_dir: ResultDir,
    card_path: Annotated[str | None, typer.Option(
        "--card", help="The current card: a local README.md (or a folder holding one) or a Hub dataset id "
                       "[default: the training set's Hub card].")] = None,
    bench: Annotated[list[str] | None, typer.Option("--bench", help="Only these benchmarks "
                                                    "[default: all in the result].")] = None,
    out: Annotated[Path | None, out_option("Where to write README.md and .overlap/ "
                                           "[default: RESULT_DIR/card].")] = None,
    push: PushOption = False,
    repo: Annotated[str | None, repo_option("Hub dataset repo to push to [default: the training set's repo].")
                    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Add (or replace) the overlap section of the training dataset's card, between
    `<!-- overlap:begin BENCH -->` and `<!-- overlap:end BENCH -->`, and write `.overlap/BENCH.json` with
    every pair. The input card is never modified: the result goes to --out, or to a Hub pull request.

    \b
    Examples:
      overlap card reports/demo --card ./README.md
      overlap card reports/mimo-cyber__cybergym --push
    """
    from ..outputs.report.result_view import load_result
    from ..outputs.ship.cards import card_update, push_card, read_card  # imported here: keeps `overlap --help` fast
    from .report import refuse_atlas

    refuse_atlas(result_dir, "card")
    view = load_result(result_dir, command="card")
    if not push:
        out = out or Path(result_dir) / "card"
        check_out(out, "card", *([card_path] if card_path else []))
    train_repo = ((view.summary.get("train") or {}).get("provenance") or {}).get("repo_id")
    text, where = read_card(card_path, train_repo)
    if card_path is not None and not where.startswith("hub:") and not Path(where).exists():
        if push:  # the pull request would replace the Hub card with the overlap section alone
            raise InputError(f"--card {where}: no such file; to push, give the current card (or leave --card out to "
                             "start from the Hub card)")
        typer.echo(f"{where} does not exist: the card starts empty (only the overlap section)", err=True)
    update = card_update(view, text, bench, where)
    if push:
        target = repo or train_repo
        if not target:
            raise typer.BadParameter("the training set has no Hub repo; give --repo OWNER/NAME", param_hint="--repo")
        url = push_card(update, target)
        if fmt == Format.table:
            typer.echo(url)
        else:
            print_files([], fmt, {"pull_request": url})
        return
    for relpath in update.files:  # names come from data (bench names): never a path out of --out
        if Path(relpath).is_absolute() or ".." in Path(relpath).parts:
            raise InputError(f"{relpath}: a card file would be written outside --out; rename the benchmark")
    with atomic_folder(out, command="card") as tmp:  # README.md and .overlap/ appear together or not at all
        update.write(tmp)
    print_files([out / relpath for relpath in update.files], fmt, {"card_from": str(where)})
    typer.echo(f"card from {where} updated; nothing was pushed (use --push to open a pull request)", err=True)
