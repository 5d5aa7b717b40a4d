"""`overlap filter`: the training set without the rows that overlap the benchmarks, verified.

The library under the command (pandas, pyarrow, huggingface_hub, datasets) is imported inside its body:
that keeps `overlap --help` fast (tests/test_cli.py guards it), it dodges no cycle.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..outputs.published import safe_name
from ..outputs.report.cell_text import plural
from ..progress import set_quiet, status
from .ci_output import print_comparison
from .fail_on import FailOnOption, benches_crossed, exit_if_crossed
from .options import (
    CI_FORMATS,
    BaseColumnOption,
    CiFormat,
    CiFormatOption,
    DataOption,
    Engine,
    EngineOption,
    Format,
    IdColumnOption,
    IdSchemeOption,
    PatchColumnOption,
    PrColumnOption,
    ProjectColumnOption,
    RayAddressOption,
    RegistryOption,
    RepoColumnOption,
    SplitOption,
    TextColumnOption,
    TextOption,
    WorkersOption,
    column_options,
    out_option,
    ray_address_for,
    repo_option,
)
from .shared import (
    check_out,
    output_label,
    print_records,
    report_problems,
    report_recognition,
    result_datasets,
    result_problems,
)


def filter_cmd(
    train: Annotated[str, typer.Argument(help="Training set, named as for `overlap compare`.")],
    bench: Annotated[list[str], typer.Argument(help="One or more benchmarks whose tasks to take out.")],
    data: DataOption = None,
    registry: RegistryOption = None,
    id_column: IdColumnOption = None,
    repo_column: RepoColumnOption = None,
    pr_column: PrColumnOption = None,
    base_column: BaseColumnOption = None,
    patch_column: PatchColumnOption = None,
    text_column: TextColumnOption = None,
    project_column: ProjectColumnOption = None,
    id_scheme: IdSchemeOption = None,
    split: SplitOption = None,
    out: Annotated[Path | None, out_option("Output folder [default: filtered/<train>-minus-<bench>…].")] = None,
    drop: Annotated[list[str] | None, typer.Option(
        "--drop", metavar="REASON",
        help="Reasons that drop a row (repeatable): id, id:<kind>, fix, dup, ngram:<n>, spec:harness "
             "[default: id, fix, dup].")] = None,
    text: TextOption = None,
    engine: EngineOption = Engine.local,
    ray_address: RayAddressOption = None,
    workers: WorkersOption = None,
    push: Annotated[bool, typer.Option("--push", help="Also publish the split to the Hub dataset repo --repo, as "
                                                      "a pull request (never the main branch).")] = False,
    repo: Annotated[str | None, repo_option("Hub dataset repo to push to (required with --push: the split is "
                                            "never pushed to the training set's own repo by default).")] = None,
    push_to_hub: Annotated[str | None, typer.Option("--push-to-hub", metavar="OWNER/NAME",
                                                    help="Same as --push --repo OWNER/NAME.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Config name on the Hub "
                                               "[default: minus-<bench>…].")] = None,
    fmt: CiFormatOption = CiFormat.table,
    fail_on: FailOnOption = None,
) -> None:
    """Write TRAIN without the rows that overlap BENCH: data/<input file name> (one shard per input file, in
    its own format, all original columns, read again from the same pinned source), removed.csv (each dropped
    row with its reasons), filter.json and <bench>_clean_ids.txt / <bench>_contaminated_ids.txt to score a
    model on the clean part.

    One copy of a bug listed twice in TRAIN is kept (the first in source order that no other reason drops).

    \b
    Examples:
      overlap filter mimo-cyber cybergym --out mimo-minus-cybergym
      overlap filter mimo-cyber cybergym --drop id --push --repo me/mimo-rl --config minus-cybergym
      overlap filter my-train.jsonl cybergym --id-column id --fail-on 1 --format sarif > overlap.sarif

    Exit codes: 0 done, 1 when --fail-on is reached (the split is written and verified first), 2 usage or
    input error.
    """
    from ..api import filter_train  # imported here: keeps `overlap --help` fast
    from ..outputs.ship import splits
    from ..sources.load import parse_data_options
    from ..text.attach import parse_text_options

    if push_to_hub and repo and push_to_hub != repo:
        raise typer.BadParameter(f"{push_to_hub} and --repo {repo}: give the repo once", param_hint="--push-to-hub")
    push_to_hub = push_to_hub or (repo if push else None)
    if push and not push_to_hub:
        raise typer.BadParameter("--push needs --repo OWNER/NAME", param_hint="--repo")
    if fmt in (Format.json, *CI_FORMATS):
        set_quiet()
    reasons = splits.check_reasons(drop or splits.DEFAULT_REASONS)
    names = [output_label(t) for t in (train, *bench)]
    out = out or Path("filtered") / safe_name(f"{names[0]}-minus-{'-'.join(names[1:])}")
    check_out(out, "filter", train, *bench, data=data)
    api = None
    if push_to_hub:  # refuse a push that cannot succeed before any work is done
        if config:
            splits.check_config_name(config)
        splits.refuse_mixed_push(_file_names(train, split), train)
        api = splits._hub_api(None)
        splits.check_write_access(api, push_to_hub)

    columns = column_options(id_column=id_column, repo_column=repo_column, pr_column=pr_column,
                             base_column=base_column, patch_column=patch_column, text_column=text_column,
                             project_column=project_column, id_scheme=id_scheme)
    with status(f"filtering {train}: compare with {', '.join(bench)}, write {out}, verify it"):
        result, filtered, written = filter_train(train, bench, out, reasons=reasons, data=parse_data_options(data),
                                                 columns=columns, split=split, text=parse_text_options(text),
                                                 engine=engine.value,
                                                 ray_address=ray_address_for(engine, ray_address), workers=workers)
    info = filtered.summary()
    report_recognition(result_datasets(result))
    report_problems(result_problems(result), str(out / "filter.json"))
    url = None
    if push_to_hub:
        benches = [b.bench.name for b in result.benches]
        url = splits.push_split(result, filtered, push_to_hub, config or f"minus-{'-'.join(benches)}", split=out,
                                api=api)
    summary = result.summary()
    if fmt in CI_FORMATS:  # the comparison that decided the removals: its contaminated benchmark items
        print_comparison(result, summary, fmt, benches_crossed(summary, fail_on), None, "filter")
        typer.echo(written.verified_line(), err=True)
        typer.echo(f"written to {out}", err=True)
    elif fmt != Format.table:
        _print_filter(info, written.verified_line(), out, url, fmt)
        typer.echo(f"written to {out}", err=True)
    else:
        _print_table(info, written.verified_line(), out, url)
    exit_if_crossed(summary, fail_on)  # after the split is written and verified: CI fails, the split is there


def _print_table(info: dict, verified: str, out: Path, url: str | None) -> None:
    typer.echo(f"rows read: {info['source_rows']:,}  removed: {info['removed_rows']:,}  kept: {info['kept_rows']:,} "
               f"(of which {info['rows_without_item_kept']:,} made no item: no id, malformed or outside the subset)")
    if info["removed_by_reason"]:
        typer.echo(_reasons_heading(info))
    for reason, count in info["removed_by_reason"].items():
        typer.echo(f"  {reason}: {count:,}")
    typer.echo(verified)
    typer.echo(f"written to {out}", err=True)
    if url:
        typer.echo(f"pull request: {url}")


def _reasons_heading(info: dict) -> str:
    """The line over the per-reason counts: a row dropped for two reasons is counted under both, so the counts
    can add up to more than the rows removed; say so, with both numbers when they differ."""
    given = sum(info["removed_by_reason"].values())
    if given == info["removed_rows"]:
        return "removed rows by reason (a row can have several reasons):"
    return (f"removed rows by reason (a row can have several reasons: {given:,} reasons for "
            f"{plural(info['removed_rows'], 'row')}):")


def _print_filter(info: dict, verified: str, out: Path, url: str | None, fmt: Format) -> None:
    """filter's result as json (exactly the filter.json written to `out`, so stdout and the folder say the
    same thing and follow one schema; the verification line and any pull request go to stderr) or as csv/md
    rows: one per count (rows read, removed, kept, removed by each reason)."""
    if fmt == Format.json:
        sys.stdout.write((out / "filter.json").read_text(encoding="utf-8"))
        typer.echo(verified, err=True)
        if url:
            typer.echo(f"pull request: {url}", err=True)
        return
    rows = [{"what": "rows read", "rows": info["source_rows"]}, {"what": "removed", "rows": info["removed_rows"]},
            {"what": "kept", "rows": info["kept_rows"]},
            {"what": "kept without an item", "rows": info["rows_without_item_kept"]},
            *({"what": f"removed: {reason}", "rows": count} for reason, count in info["removed_by_reason"].items())]
    if info["removed_by_reason"]:
        rows.append({"what": "reasons given (a row can have several)",
                     "rows": sum(info["removed_by_reason"].values())})
    print_records(rows, fmt, title=verified)
    if url:
        typer.echo(f"pull request: {url}", err=True)


def _file_names(train: str, split: str | None) -> list[str]:
    """The names of the files a training set given by path, glob or Hub id is read from (listed, not read);
    none for a registered name (its layout decides) or a set that cannot be opened (the filter says why)."""
    from ..errors import InputError
    from ..sources.formats.batches import open_batches
    from ..sources.registry.registry import is_registered

    if is_registered(train):
        return []
    try:
        return [f.name for f in open_batches(train, ["_"], split=split, hash_files=False).files]
    except InputError:
        return []
