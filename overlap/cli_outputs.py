"""Commands that turn a compare into what users act on: `overlap filter`, `overlap card`, `overlap report`.

Plain functions with typer `Annotated` parameters; `overlap/cli.py` registers them, wrapped in
`handles_errors` (so an OverlapError becomes one stderr line and exit 2):

    app.command("filter")(handles_errors(filter_cmd))
    app.command("card")(handles_errors(card))
    app.command("report")(handles_errors(report))

Heavy modules (pandas, pyarrow, huggingface_hub, datasets, matplotlib) are imported inside the bodies so
`overlap --help` stays cheap. Results go to stdout, messages to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

_DataOption = Annotated[
    list[str] | None,
    typer.Option("--data", "-d", metavar="NAME=PATH",
                 help="Use a local folder laid out like the dataset's repo, or a single file, for NAME."),
]
_ResultDir = Annotated[Path, typer.Argument(help="A result folder written by `overlap compare --out`.",
                                            exists=True, file_okay=False, dir_okay=True)]


def filter_cmd(
    train: Annotated[str, typer.Argument(help="Training set, named as for `overlap compare`.")],
    bench: Annotated[list[str], typer.Argument(help="One or more benchmarks whose tasks to take out.")],
    data: _DataOption = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder "
                                             "[default: filtered/<train>-minus-<bench>…].")] = None,
    drop: Annotated[list[str] | None, typer.Option(
        "--drop", metavar="REASON",
        help="Reasons that drop a row (repeatable): id, id:<kind>, fix, dup, ngram:<n>, spec:harness "
             "[default: id, fix, dup].")] = None,
    push_to_hub: Annotated[str | None, typer.Option("--push-to-hub", metavar="REPO",
                                                    help="Also publish the split to this Hub dataset repo, "
                                                         "as a pull request (never the main branch).")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Config name on the Hub "
                                               "[default: minus-<bench>…].")] = None,
) -> None:
    """Write TRAIN without the rows that overlap BENCH: train.parquet (all original columns, read again from
    the same pinned source), removed.csv (each dropped row with its reasons), filter.json and
    <bench>_clean_ids.txt / <bench>_contaminated_ids.txt to score a model on the clean part.

    One copy of a bug listed twice in TRAIN is kept (the first in source order that no other reason drops).

    \b
    Examples:
      overlap filter mimo-cyber cybergym --out mimo-minus-cybergym
      overlap filter mimo-cyber cybergym --drop id --push-to-hub me/mimo-rl --config minus-cybergym
    """
    from .api import filter_train
    from .cli import check_out
    from .outputs import splits
    from .outputs.published import safe_name
    from .sources.load import parse_data_options
    from .sources.registry import selection_label

    reasons = splits.check_reasons(drop or splits.DEFAULT_REASONS)
    names = [selection_label(t) for t in (train, *bench)]
    out = out or Path("filtered") / safe_name(f"{names[0]}-minus-{'-'.join(names[1:])}")
    check_out(out, "filter", train, *bench, data=data)
    api = None
    if push_to_hub:  # refuse a push that cannot succeed before any work is done
        if config:
            splits.check_config_name(config)
        api = splits._hub_api(None)
        splits.check_write_access(api, push_to_hub)
    result, filtered, written = filter_train(train, bench, out, reasons=reasons, data=parse_data_options(data))
    info = filtered.summary()
    typer.echo(f"rows read: {info['source_rows']:,}  removed: {info['removed_rows']:,}  kept: {info['kept_rows']:,} "
               f"(of which {info['rows_without_item_kept']:,} made no item: no id, malformed or outside the subset)")
    for reason, count in info["removed_by_reason"].items():
        typer.echo(f"  {reason}: {count:,}")
    typer.echo(written.verified_line())
    typer.echo(f"written to {out}", err=True)
    if push_to_hub:
        benches = [b.bench.name for b in result.benches]
        url = splits.push_split(result, filtered, push_to_hub, config or f"minus-{'-'.join(benches)}", split=out,
                                api=api)
        typer.echo(f"pull request: {url}")


def card(
    result_dir: _ResultDir,
    card_path: Annotated[str | None, typer.Option(
        "--card", help="The current card: a local README.md (or a folder holding one) or a Hub dataset id "
                       "[default: the training set's Hub card].")] = None,
    bench: Annotated[list[str] | None, typer.Option("--bench", help="Only these benchmarks "
                                                    "[default: all in the result].")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Where to write README.md and "
                                             ".overlap/ [default: RESULT_DIR/card].")] = None,
    push: Annotated[bool, typer.Option("--push", help="Open one pull request on the Hub with README.md and "
                                       ".overlap/<bench>.json instead of writing locally.")] = False,
    repo: Annotated[str | None, typer.Option("--repo", help="Hub dataset repo to push to "
                                             "[default: the training set's repo].")] = None,
) -> None:
    """Add (or replace) the overlap section of the training dataset's card, between
    `<!-- overlap:begin BENCH -->` and `<!-- overlap:end BENCH -->`, and write `.overlap/BENCH.json` with
    every pair. The input card is never modified: the result goes to --out, or to a Hub pull request.

    \b
    Examples:
      overlap card reports/demo --card ./README.md
      overlap card reports/mimo-cyber__cybergym --push
    """
    from .cli import check_out
    from .errors import InputError
    from .outputs.atomic import atomic_folder
    from .outputs.cards import card_update, push_card, read_card
    from .outputs.markdown import load_result

    view = load_result(result_dir, command="card")
    if not push:
        out = out or Path(result_dir) / "card"
        check_out(out, "card", *([card_path] if card_path else []))
    train_repo = ((view.summary.get("train") or {}).get("provenance") or {}).get("repo_id")
    text, where = read_card(card_path, train_repo)
    update = card_update(view, text, bench, where)
    if push:
        target = repo or train_repo
        if not target:
            raise typer.BadParameter("the training set has no Hub repo; give --repo OWNER/NAME", param_hint="--repo")
        typer.echo(push_card(update, target))
        return
    for relpath in update.files:  # names come from data (bench names): never a path out of --out
        if Path(relpath).is_absolute() or ".." in Path(relpath).parts:
            raise InputError(f"{relpath}: a card file would be written outside --out; rename the benchmark")
    with atomic_folder(out, command="card") as tmp:  # README.md and .overlap/ appear together or not at all
        update.write(tmp)
    for relpath in update.files:
        typer.echo(str(out / relpath))
    typer.echo(f"card from {where} updated; nothing was pushed (use --push to open a pull request)", err=True)


def report(
    result_dir: _ResultDir,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for report.md and report.html "
                                             "[default: RESULT_DIR].")] = None,
) -> None:
    """Render report.md and a self-contained report.html from a saved result folder, without recomputing.
    Plots need matplotlib (pip install 'overlap[plots]'); without it the report says they were skipped.

    Example: overlap report reports/demo
    """
    from .cli import check_out
    from .outputs.atomic import atomic_folder, folder_owner
    from .outputs.html import write_reports
    from .outputs.markdown import load_result

    view = load_result(result_dir)
    target = Path(out or result_dir)
    in_place = target.resolve() == Path(result_dir).resolve()
    check_out(target, "report", *([] if in_place else [result_dir]))
    if folder_owner(target) == "compare":  # beside the compare output it renders: the two files only
        paths = write_reports(view, target)
    else:
        with atomic_folder(target, command="report") as tmp:
            paths = [target / p.name for p in write_reports(view, tmp)]
    for path in paths:
        typer.echo(str(path))
