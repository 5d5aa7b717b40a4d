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

import sys
from pathlib import Path
from typing import Annotated

import typer

from .cli_options import DataOption, Format, FormatOption, PushOption, out_option, repo_option

_ResultDir = Annotated[Path, typer.Argument(help="A result folder written by `overlap compare --out`.",
                                            exists=True, file_okay=False, dir_okay=True)]


def filter_cmd(
    train: Annotated[str, typer.Argument(help="Training set, named as for `overlap compare`.")],
    bench: Annotated[list[str], typer.Argument(help="One or more benchmarks whose tasks to take out.")],
    data: DataOption = None,
    out: Annotated[Path | None, out_option("Output folder [default: filtered/<train>-minus-<bench>…].")] = None,
    drop: Annotated[list[str] | None, typer.Option(
        "--drop", metavar="REASON",
        help="Reasons that drop a row (repeatable): id, id:<kind>, fix, dup, ngram:<n>, spec:harness "
             "[default: id, fix, dup].")] = None,
    push: Annotated[bool, typer.Option("--push", help="Also publish the split to the Hub dataset repo --repo, as "
                                                      "a pull request (never the main branch).")] = False,
    repo: Annotated[str | None, repo_option("Hub dataset repo to push to (required with --push: the split is "
                                            "never pushed to the training set's own repo by default).")] = None,
    push_to_hub: Annotated[str | None, typer.Option("--push-to-hub", metavar="OWNER/NAME",
                                                    help="Same as --push --repo OWNER/NAME.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Config name on the Hub "
                                               "[default: minus-<bench>…].")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Write TRAIN without the rows that overlap BENCH: train.parquet (all original columns, read again from
    the same pinned source), removed.csv (each dropped row with its reasons), filter.json and
    <bench>_clean_ids.txt / <bench>_contaminated_ids.txt to score a model on the clean part.

    One copy of a bug listed twice in TRAIN is kept (the first in source order that no other reason drops).

    \b
    Examples:
      overlap filter mimo-cyber cybergym --out mimo-minus-cybergym
      overlap filter mimo-cyber cybergym --drop id --push --repo me/mimo-rl --config minus-cybergym
    """
    from .api import filter_train
    from .cli import check_out
    from .outputs import splits
    from .outputs.published import safe_name
    from .sources.load import parse_data_options
    from .sources.registry import selection_label

    if push_to_hub and repo and push_to_hub != repo:
        raise typer.BadParameter(f"{push_to_hub} and --repo {repo}: give the repo once", param_hint="--push-to-hub")
    push_to_hub = push_to_hub or (repo if push else None)
    if push and not push_to_hub:
        raise typer.BadParameter("--push needs --repo OWNER/NAME", param_hint="--repo")
    if fmt == Format.json:
        from .progress import set_quiet

        set_quiet()
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
    from .cli import report_problems, result_problems
    from .progress import status

    with status(f"filtering {train}: compare with {', '.join(bench)}, write {out}, verify it"):
        result, filtered, written = filter_train(train, bench, out, reasons=reasons, data=parse_data_options(data))
    info = filtered.summary()
    report_problems(result_problems(result), str(out / "filter.json"))
    url = None
    if push_to_hub:
        benches = [b.bench.name for b in result.benches]
        url = splits.push_split(result, filtered, push_to_hub, config or f"minus-{'-'.join(benches)}", split=out,
                                api=api)
    if fmt != Format.table:
        _print_filter(info, written.verified_line(), out, url, fmt)
        typer.echo(f"written to {out}", err=True)
        return
    typer.echo(f"rows read: {info['source_rows']:,}  removed: {info['removed_rows']:,}  kept: {info['kept_rows']:,} "
               f"(of which {info['rows_without_item_kept']:,} made no item: no id, malformed or outside the subset)")
    for reason, count in info["removed_by_reason"].items():
        typer.echo(f"  {reason}: {count:,}")
    typer.echo(written.verified_line())
    typer.echo(f"written to {out}", err=True)
    if url:
        typer.echo(f"pull request: {url}")


def _print_filter(info: dict, verified: str, out: Path, url: str | None, fmt: Format) -> None:
    """filter's result as json (the summary, the verification line, the folder and any pull request) or as
    csv/md rows: one per count (rows read, removed, kept, removed by each reason)."""
    from .cli import _print_records

    if fmt == Format.json:
        from .outputs.report import dumps_json

        sys.stdout.write(dumps_json({**info, "verified": verified, "out": str(out), "pull_request": url}))
        return
    rows = [{"what": "rows read", "rows": info["source_rows"]}, {"what": "removed", "rows": info["removed_rows"]},
            {"what": "kept", "rows": info["kept_rows"]},
            {"what": "kept without an item", "rows": info["rows_without_item_kept"]},
            *({"what": f"removed: {reason}", "rows": count} for reason, count in info["removed_by_reason"].items())]
    _print_records(rows, fmt, title=verified)


def card(
    result_dir: _ResultDir,
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
    from .cli import check_out
    from .errors import InputError
    from .outputs.atomic import atomic_folder
    from .outputs.cards import card_update, push_card, read_card
    from .outputs.result_view import load_result

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
        url = push_card(update, target)
        if fmt == Format.table:
            typer.echo(url)
        else:
            _print_files([], fmt, {"pull_request": url})
        return
    for relpath in update.files:  # names come from data (bench names): never a path out of --out
        if Path(relpath).is_absolute() or ".." in Path(relpath).parts:
            raise InputError(f"{relpath}: a card file would be written outside --out; rename the benchmark")
    with atomic_folder(out, command="card") as tmp:  # README.md and .overlap/ appear together or not at all
        update.write(tmp)
    _print_files([out / relpath for relpath in update.files], fmt, {"card_from": str(where)})
    typer.echo(f"card from {where} updated; nothing was pushed (use --push to open a pull request)", err=True)


def report(
    result_dir: _ResultDir,
    out: Annotated[Path | None, out_option("Folder for report.md and report.html [default: RESULT_DIR].")
                   ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Render report.md and a self-contained report.html from a saved result folder, without recomputing.
    Plots need matplotlib (pip install 'overlap[plots]'); without it the report says they were skipped.

    Example: overlap report reports/demo
    """
    from .cli import check_out
    from .outputs.atomic import atomic_folder, folder_owner
    from .outputs.report import write_reports
    from .outputs.result_view import load_result

    view = load_result(result_dir)
    target = Path(out or result_dir)
    in_place = target.resolve() == Path(result_dir).resolve()
    check_out(target, "report", *([] if in_place else [result_dir]))
    if folder_owner(target) == "compare":  # beside the compare output it renders: the two files only
        paths = write_reports(view, target)
    else:
        with atomic_folder(target, command="report") as tmp:
            paths = [target / p.name for p in write_reports(view, tmp)]
    _print_files(paths, fmt, {})


def _print_files(paths: list[Path], fmt: Format, extra: dict) -> None:
    """The files a command wrote: one path a line (table), a JSON object, or csv/md rows."""
    if fmt == Format.table:
        for path in paths:
            typer.echo(str(path))
    elif fmt == Format.json:
        from .outputs.report import dumps_json

        sys.stdout.write(dumps_json({"files": [str(p) for p in paths], **extra}))
    else:
        from .cli import _print_records

        _print_records([{"file": str(p)} for p in paths] or [{"file": "", **extra}], fmt, title="written")
