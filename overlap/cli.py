"""The `overlap` command line: a thin typer layer over the library.

Imports stay cheap: heavy modules (pandas, pyarrow, huggingface_hub, scipy, datasets) load inside the
commands, so `overlap --help` is fast (a test guards this).
"""

from __future__ import annotations

import functools
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from .errors import OverlapError

app = typer.Typer(
    name="overlap",
    help="Find where AI training sets and benchmarks contain the same tasks, by source identity.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one line to stderr and return the Exit to raise."""
    typer.echo(f"overlap: error: {message}", err=True)
    return typer.Exit(code)


def handles_errors(func):
    """User mistakes and input/network problems become one stderr line and exit 2, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except OverlapError as exc:
            raise fail(str(exc), exc.exit_code) from None

    return wrapper


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


DataOption = Annotated[
    list[str] | None,
    typer.Option("--data", "-d", metavar="NAME=PATH",
                 help="Use a local folder laid out like the dataset's repo, or a single file, for NAME."),
]
FormatOption = Annotated[Format, typer.Option("--format", "-f", help="What to print on stdout.")]


def _stdout_console():
    from rich.console import Console

    return Console(file=sys.stdout, soft_wrap=False, width=max(100, Console().width))


def _parse_fail_on(value: str | None) -> tuple[float, bool] | None:
    if value is None:
        return None
    text = value.strip()
    try:
        if text.endswith("%"):
            return float(text[:-1]) / 100, True
        return float(int(text)), False
    except ValueError:
        raise fail(f"--fail-on {value!r}: give a count of bench items (e.g. 1) or a share (e.g. 5%)") from None


def _fail_on_reached(summary: dict, threshold: tuple[float, bool] | None) -> bool:
    if threshold is None:
        return False
    limit, is_share = threshold
    for bench in summary["benches"]:
        observed = bench["bench_share"] if is_share else bench["bench_items_matched"]
        if observed >= limit and bench["bench_items_matched"] > 0:
            return True
    return False


def _emit(result, fmt: Format, out: Path | None) -> dict:
    from .outputs.console import print_table, render
    from .outputs.report import write_compare_report

    summary = result.summary()
    if out is not None:
        write_compare_report(result, out)
    text = render(summary, result.pairs, fmt.value)
    if text is None:
        print_table(summary, _stdout_console())
    else:
        sys.stdout.write(text)
    if out is not None:
        typer.echo(f"report written to {out}", err=True)
    return summary


@app.command()
@handles_errors
def compare(
    train: Annotated[str, typer.Argument(help="Training set: a name from `overlap datasets` (NAME, NAME@REV, "
                                              "NAME:SUBSET), a Hub id, or a local file/folder.")],
    bench: Annotated[list[str], typer.Argument(help="One or more benchmarks, named the same ways.")],
    data: DataOption = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Report folder "
                                             "[default: reports/<train>__<bench>…].")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Print only; write no report folder.")] = False,
    fmt: FormatOption = Format.table,
    fail_on: Annotated[str | None, typer.Option("--fail-on", metavar="N|P%",
                                                help="Exit 1 when a benchmark has at least N matched items "
                                                     "(or P percent of its items).")] = None,
    pool: Annotated[str, typer.Option("--pool", help="Pool for the chance baselines: auto (ARVO-Meta for "
                                      "OSS-Fuzz sets), a registered pool, a folder or id,project file, or none.")
                    ] = "auto",
    strata: Annotated[str, typer.Option("--strata", help="Pool column for the within-stratum baseline "
                                        "(project, sanitizer, crash_type, fuzzer) or none.")] = "project",
    permutations: Annotated[int, typer.Option("--permutations", min=0,
                                              help="Seeded permutation draws cross-checking the exact null "
                                                   "(0 skips).")] = 100_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw.")] = 0,
    reference: Annotated[str | None, typer.Option("--reference", help="Reference set of comparable PRs for "
                                                  "the SWE inclusion test, e.g. multi-swe-rl-discarded.")] = None,
    reference_range: Annotated[bool, typer.Option("--reference-range", help="Inclusion test: keep only PRs "
                                                  "within the training set's PR-number range per repo.")] = False,
    evidence: Annotated[bool, typer.Option("--evidence/--no-evidence", help="Fix relations, crash grades and "
                                           "related bugs for the pairs (fetches per-task files).")] = True,
    fix_join: Annotated[str, typer.Option("--fix-join", help="Pairs found by the same fix alone: auto "
                                          "(OSS-Fuzz/CVE sets), on, off.")] = "auto",
    text: Annotated[list[str] | None, typer.Option("--text", metavar="TRAIN_FIELD:BENCH_FIELD",
                                                   help="Text fields for the n-gram and longest-run checks "
                                                        "(repeatable; default per dataset; none = off).")] = None,
    ngram_n: Annotated[list[int] | None, typer.Option("--ngram", min=1, help="Word n-gram sizes "
                                                      "[default: 13, 8].")] = None,
) -> None:
    """Join TRAIN with each BENCH on normalised source ids (OSS-Fuzz old→new, CVE), add chance baselines,
    and write a report.

    Example: overlap compare mimo-cyber cybergym sec-bench --data arvo=./ARVO --data arvo-meta=./ARVO-Meta
    """
    from .api import compare as run_compare
    from .sources.load import parse_data_options
    from .text.attach import parse_text_options

    threshold = _parse_fail_on(fail_on)
    if fmt == Format.json:
        from .progress import set_quiet

        set_quiet()
    result = run_compare(train, bench, data=parse_data_options(data), pool=pool,
                         strata=None if strata == "none" else strata, permutations=permutations, seed=seed,
                         reference=reference, reference_range=reference_range, evidence=evidence,
                         fix_join=fix_join, text=parse_text_options(text), ngram_ns=tuple(ngram_n or (13, 8)))
    if result.sections.get("baselines", {}).get("status") == "not_run":
        typer.echo(f"overlap: chance baselines not run: {result.sections['baselines']['reason']}", err=True)
    if out is None and not no_report:
        out = Path("reports") / "__".join([result.train.name, *[b.bench.name for b in result.benches]])
    summary = _emit(result, fmt, None if no_report else out)
    if _fail_on_reached(summary, threshold):
        raise typer.Exit(1)


@app.command()
@handles_errors
def datasets(fmt: FormatOption = Format.table) -> None:
    """List every registered dataset: name, Hub (or GitHub) repo @ pinned revision, files, what it extracts.

    Example: overlap datasets --format md
    """
    from .sources.registry import all_specs

    rows = [
        {
            "name": s.name,
            "aliases": ", ".join(s.aliases),
            "role": s.role,
            "repo": f"{'github:' if s.host == 'github' else ''}{s.hub_repo}@{s.revision}",
            "files": ", ".join(f"{k}={v}" if k else v for k, v in s.files.items()),
            "subsets": ", ".join(s.subset_names),
            "extracts": s.extracts,
        }
        for s in all_specs()
    ]
    if fmt != Format.table:
        _print_records(rows, fmt, title="registered datasets")
        return
    # One block per dataset: pinned revisions are long and must never be wrapped.
    for row, spec in zip(rows, all_specs(), strict=True):
        typer.echo(f"{row['name']}  ({spec.title}{'; aliases: ' + row['aliases'] if row['aliases'] else ''})")
        for label in ("repo", "files", "subsets", "extracts"):
            if row[label]:
                typer.echo(f"  {label + ':':<10}{row[label]}")
        typer.echo("")


def _print_records(rows: list[dict], fmt: Format, title: str) -> None:
    if fmt == Format.json:
        from .outputs.report import dumps_json

        sys.stdout.write(dumps_json(rows))
        return
    columns = list(rows[0]) if rows else []
    if fmt == Format.csv:
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return
    if fmt == Format.md:
        sys.stdout.write("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n")
        for row in rows:
            sys.stdout.write("| " + " | ".join(str(row[c]).replace("|", "\\|") for c in columns) + " |\n")
        return
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*[str(row[c]) for c in columns])
    _stdout_console().print(table)


@app.command()
@handles_errors
def ids(
    values: Annotated[list[str], typer.Argument(help="Task ids in any form: arvo:10400, arvo_42470443, "
                                                     "oss-fuzz:42537168, php.ossfuzz-42491394, jq.cve-2023-50246.")],
    data: DataOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Show how overlap reads ids: the OSS-Fuzz number, its scheme and canonical id (with the ARVO
    mapping), or the canonical CVE.

    Example: overlap ids arvo:10288 oss-fuzz:40643631 --data arvo=./oss_fuzz_mappings.csv
    """
    from .ids.cve import find_cve
    from .ids.ossfuzz import scheme, trailing_int
    from .sources.load import load_identity, parse_data_options

    mapping = None
    rows = []
    for value in values:
        cve = find_cve(value)
        number = None if cve else trailing_int(value)
        row = {"id": value, "kind": "cve" if cve else ("ossfuzz" if number is not None else "malformed"),
               "number": "" if number is None else str(number), "scheme": "", "canonical": cve or ""}
        if number is not None:
            if mapping is None:
                mapping, _ = load_identity("arvo", parse_data_options(data))
            row["scheme"] = scheme(number)
            row["canonical"] = str(mapping.canonical(number))
            row["in_mapping"] = str(mapping.is_known(number)).lower()
        rows.append(row)
    for row in rows:
        row.setdefault("in_mapping", "")
    _print_records(rows, fmt, title="ids")
    if any(r["kind"] == "malformed" for r in rows):
        raise fail("some ids have no OSS-Fuzz number or CVE: " + ", ".join(r["id"] for r in rows
                                                                          if r["kind"] == "malformed"))


@app.command()
@handles_errors
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Report folder.")] = Path("reports/demo"),
    fmt: FormatOption = Format.table,
) -> None:
    """Run the whole pipeline offline on the embedded demo data (hand-made MiMo and CyberGym-shaped
    datasets and a small OSS-Fuzz mapping) and explain what normalisation found.

    Example: overlap demo
    """
    from .api import compare as run_compare
    from .demo import demo_data, explain

    result = run_compare("mimo-cyber", ["cybergym"], data=demo_data())
    summary = _emit(result, fmt, out)
    if fmt == Format.table:
        typer.echo(explain(summary))


def _register_commands() -> None:
    """Commands whose code lives in their own modules (each imports its heavy parts only when run)."""
    from .cli_audit import audit
    from .cli_matrix import matrix
    from .cli_outputs import card, filter_cmd, report
    from .cli_text import ngram

    app.command("ngram")(handles_errors(ngram))
    app.command("matrix")(handles_errors(matrix))
    app.command("filter")(handles_errors(filter_cmd))
    app.command("card")(handles_errors(card))
    app.command("report")(handles_errors(report))
    app.command("audit")(handles_errors(audit))


_register_commands()


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
