"""The `overlap` command line: a thin typer layer over the library.

Imports stay cheap: heavy modules (pandas, pyarrow, huggingface_hub, scipy, datasets) load inside the
commands, so `overlap --help` is fast (a test guards this).

Errors are handled once, here, for every command:

- a user mistake, an input or network problem (`OverlapError`) and any OS error (permission, disk full,
  read-only file system, busy, stdout to a full device) is one line `overlap: error: …` naming the path,
  exit 2 (`handles_errors`);
- a usage error (unknown option, bad or out-of-range value, missing argument) is one line too, exit 2
  (`OverlapGroup.main`), never click's three-line box;
- a broken pipe on stdout (`overlap … | head`) ends quietly with exit 141, as a process killed by SIGPIPE;
- SIGTERM unwinds like Ctrl-C (temp folders are removed), then exits 143 with one line;
- an unexpected exception (a bug) is one line too, exit 2; `OVERLAP_DEBUG=1` shows its traceback.
"""

from __future__ import annotations

import errno
import functools
import math
import os
import re
import signal
import sys
import threading
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

try:  # typer vendors its own click since 0.2x; older versions use click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors

from .cli_options import (
    DataOption,
    Format,
    FormatOption,
    NgramOption,
    OverlapCommand,
    TextOption,
    out_option,
)
from .errors import OverlapError
from .outputs.atomic import printable

EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM, so `finally`/`except BaseException` cleanups run."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def _on_sigterm(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not interrupt the cleanup
    raise Terminated()


class _Stdout:
    """sys.stdout while a command runs: an OS error writing it names `stdout` (the error's filename), so it
    is reported as such, whatever wrote it (typer.echo, rich, csv, sys.stdout.write)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _named(self, exc: OSError) -> OSError:
        return exc if exc.filename is not None else type(exc)(exc.errno, exc.strerror, "stdout")

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._named(exc) from None

    def flush(self):
        try:
            return self._stream.flush()
        except OSError as exc:
            raise self._named(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class OverlapGroup(TyperGroup):
    """The app's click group: usage errors are one line, SIGTERM cleans up (see the module docstring)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        previous, stdout = None, sys.stdout
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        sys.stdout = _Stdout(stdout)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except getattr(click_errors, "NoArgsIsHelpError", ()) as exc:
            exc.show()
            sys.exit(2)
        except click_errors.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "overlap"
            _error_line(f"{_one_line(exc.format_message())} (see `{where} --help`)")
            sys.exit(2)
        except click_errors.ClickException as exc:
            _error_line(_one_line(exc.format_message()))
            sys.exit(2)
        except typer.Abort:
            _error_line("aborted")
            sys.exit(130)
        except Terminated:
            _error_line("terminated (SIGTERM); unfinished output was removed")
            sys.exit(EXIT_TERMINATED)
        except OverlapError as exc:  # raised outside a command body (e.g. while parsing)
            sys.exit(fail(str(exc), exc.exit_code).exit_code)
        except OSError as exc:
            sys.exit(_os_error(exc).exit_code)
        except Exception as exc:  # a bug: one line, never a traceback, never exit 1 ("overlap found")
            if os.environ.get("OVERLAP_DEBUG"):
                raise
            _error_line(f"internal error ({type(exc).__name__}: {_one_line(exc)[:300]}); please report it, "
                        f"with the traceback OVERLAP_DEBUG=1 shows")
            sys.exit(2)
        finally:
            sys.stdout = stdout
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="overlap",
    help="Find where AI training sets and benchmarks contain the same tasks, by source identity.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=OverlapGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"overlap {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_show_version,
                                          help="Show the version and exit.")] = False,
) -> None:
    """Find where AI training sets and benchmarks contain the same tasks, by source identity."""


def _error_line(message: str) -> None:
    try:
        typer.echo(f"overlap: error: {printable(message)}", err=True)
    except OSError:  # stderr itself is gone: nothing left to tell
        pass


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one line to stderr and return the Exit to raise."""
    _error_line(message)
    return typer.Exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush of unwritable output cannot fail again."""
    try:
        fd = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def _os_error(exc: OSError) -> typer.Exit:
    """An OS error as one line and exit 2 (a broken pipe on stdout: quietly, exit 141)."""
    from .outputs.atomic import os_error_message, os_error_reason

    if exc.filename == "stdout":
        _silence_stdout()
        if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
            return typer.Exit(EXIT_BROKEN_PIPE)  # the reader stopped (`| head`): nothing to say
        return fail(f"cannot write to stdout: {os_error_reason(exc).split(';')[0]}")
    return fail(os_error_message(exc))


def handles_errors(func):
    """User mistakes, input/network problems and OS errors become one stderr line and exit 2, never a
    traceback. Stdout is flushed before the command ends, so a full or closed stdout is reported too."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            try:
                return func(*args, **kwargs)
            finally:
                sys.stdout.flush()
        except OverlapError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except OSError as exc:
            raise _os_error(exc) from None

    return wrapper


class Strata(StrEnum):
    project = "project"
    sanitizer = "sanitizer"
    crash_type = "crash_type"
    fuzzer = "fuzzer"
    none = "none"


class FixJoin(StrEnum):
    auto = "auto"
    on = "on"
    off = "off"


def _stdout_console():
    """The terminal's width (or COLUMNS); a fixed width when stdout is not a terminal (see stdout_console)."""
    from .outputs.console import stdout_console

    return stdout_console()


MAX_PERMUTATIONS = 10_000_000
MAX_SEED = 2**32 - 1


_FAIL_ON = re.compile(r"(?P<count>[0-9]{1,16})|(?P<share>[0-9]{1,3}(?:\.[0-9]{1,6})?)%", re.ASCII)


def _parse_fail_on(value: str | None) -> tuple[float, bool] | None:
    """`--fail-on N` (a count of bench items) or `P%` (a share, 0–100%) → (limit, is_share)."""
    if value is None:
        return None
    text = value.strip()
    usage = "give a count of bench items (e.g. 1) or a share from 0% to 100% (e.g. 5%)"
    match = _FAIL_ON.fullmatch(text)
    if match is None:
        raise typer.BadParameter(f"{value!r}: {usage}")
    limit, is_share = (float(match["share"]) / 100, True) if match["share"] else (float(match["count"]), False)
    if not math.isfinite(limit) or limit > (1 if is_share else 1e15):
        raise typer.BadParameter(f"{value!r}: {usage}")
    return limit, is_share


def _check_fail_on(value: str | None) -> str | None:
    _parse_fail_on(value)
    return value


def _fail_on_crossed(summary: dict, fail_on: str | None) -> list[str]:
    """One line per benchmark at or above `--fail-on`, e.g. `cybergym: 7 of 10 bench items matched (70.0%) ≥
    --fail-on 5%`; empty when none is (or no threshold was given)."""
    threshold = _parse_fail_on(fail_on)
    if threshold is None:
        return []
    limit, is_share = threshold
    lines = []
    for bench in summary["benches"]:
        matched = bench["bench_items_matched"]
        observed = bench["bench_share"] if is_share else matched
        if observed >= limit and matched > 0:
            lines.append(f"{bench['bench']}: {matched} of {bench['bench_items']} bench items matched "
                         f"({bench['bench_share']:.1%}) ≥ --fail-on {fail_on.strip()}")
    return lines


def check_out(out: Path, command: str, *inputs: str | Path, data: list[str] | None = None) -> None:
    """Refuse, before any work, an `--out` that `command` may not write (see `overlap.outputs.atomic`).
    `inputs` are dataset arguments and paths; those that are local files or folders, and every `--data`
    path, may not lie inside `out`."""
    from .outputs.atomic import check_out_folder

    check_out_folder(out, command, inputs=[*map(str, inputs), *(d.partition("=")[2] for d in data or [])])


def report_problems(datasets, see: str | None) -> None:
    """Input problems (malformed lines, rows without an id, repeated ids, …) summarised on stderr, one line
    per kind; `datasets` are (name, problems) pairs (see `overlap.progress.problem_lines`)."""
    from .progress import problem_lines

    for line in problem_lines(datasets, see):
        typer.echo(f"overlap: {printable(line)}", err=True)


def result_problems(result) -> list[tuple[str, list]]:
    """(name, problems) of a compare result's training set and benchmarks."""
    return [(result.train.name, result.train.problems), *((b.bench.name, b.bench.problems) for b in result.benches)]


def _emit(result, fmt: Format, out: Path | None) -> dict:
    from .outputs.console import print_table, render
    from .outputs.report import write_compare_report
    from .progress import status

    summary = result.summary()
    if out is not None:
        with status(f"writing the report to {out}"):
            write_compare_report(result, out)
    text = render(summary, result.pairs, fmt.value)
    if text is None:
        print_table(summary, _stdout_console())
    else:
        sys.stdout.write(text)
    if out is not None:
        typer.echo(f"report written to {out}", err=True)
    return summary


@app.command(cls=OverlapCommand)
@handles_errors
def compare(
    train: Annotated[str, typer.Argument(help="Training set: a name from `overlap datasets` (NAME, NAME@REV, "
                                              "NAME:SUBSET), a Hub id, or a local file/folder.")],
    bench: Annotated[list[str], typer.Argument(help="One or more benchmarks, named the same ways.")],
    data: DataOption = None,
    out: Annotated[Path | None, out_option("Report folder: new, empty or a previous compare report "
                                           "[default: reports/<train>__<bench>…].")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Print only; write no report folder.")] = False,
    fmt: FormatOption = Format.table,
    fail_on: Annotated[str | None, typer.Option("--fail-on", metavar="N|P%", callback=_check_fail_on,
                                                help="Exit 1 when a benchmark has at least N matched items "
                                                     "(or P percent of its items); each one is named on "
                                                     "stderr.")] = None,
    pool: Annotated[str, typer.Option("--pool", help="Pool for the chance baselines: auto (ARVO-Meta for "
                                      "OSS-Fuzz sets), a registered pool, a folder or id,project file, or none.")
                    ] = "auto",
    strata: Annotated[Strata, typer.Option("--strata", metavar="|".join(Strata),
                                           help="Pool column for the within-stratum baseline, or none.")
                      ] = Strata.project,
    permutations: Annotated[int, typer.Option("--permutations", min=0, max=MAX_PERMUTATIONS,
                                              help="Seeded permutation draws cross-checking the exact null "
                                                   "(0 skips).")] = 100_000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of every random draw.")] = 0,
    reference: Annotated[str | None, typer.Option("--reference", help="Reference set of comparable PRs for "
                                                  "the SWE inclusion test, e.g. multi-swe-rl-discarded.")] = None,
    reference_range: Annotated[bool, typer.Option("--reference-range", help="Inclusion test: keep only PRs "
                                                  "within the training set's PR-number range per repo.")] = False,
    evidence: Annotated[bool, typer.Option("--evidence/--no-evidence", help="Fix relations, crash grades and "
                                           "related bugs for the pairs (fetches per-task files).")] = True,
    fix_join: Annotated[FixJoin, typer.Option("--fix-join", metavar="|".join(FixJoin),
                                              help="Pairs found by the same fix alone: auto (OSS-Fuzz/CVE "
                                                   "sets), on, off.")] = FixJoin.auto,
    text: TextOption = None,
    ngram_n: NgramOption = None,
) -> None:
    """Join TRAIN with each BENCH on normalised source ids (OSS-Fuzz old→new, CVE), add chance baselines,
    and write a report.

    Example: overlap compare mimo-cyber cybergym sec-bench --data arvo=./ARVO --data arvo-meta=./ARVO-Meta
    """
    from .api import compare as run_compare
    from .outputs.published import safe_name
    from .sources.load import parse_data_options
    from .sources.registry import selection_label
    from .text.attach import parse_text_options

    if out is None and not no_report:
        out = Path("reports") / safe_name("__".join(selection_label(name) for name in (train, *bench)))
    if not no_report:
        check_out(out, "compare", train, *bench, pool, *([reference] if reference else []), data=data)
    if fmt == Format.json:
        from .progress import set_quiet

        set_quiet()
    from .progress import status

    with status(f"comparing {train} with {', '.join(bench)} (loading, joining, baselines, evidence, text)"):
        result = run_compare(train, bench, data=parse_data_options(data), pool=pool,
                             strata=None if strata == Strata.none else strata.value, permutations=permutations,
                             seed=seed, reference=reference, reference_range=reference_range, evidence=evidence,
                             fix_join=fix_join.value, text=parse_text_options(text),
                             ngram_ns=tuple(ngram_n or (13, 8)))
    if result.sections.get("baselines", {}).get("status") == "not_run":
        typer.echo(f"overlap: chance baselines not run: {result.sections['baselines']['reason']}", err=True)
    summary = _emit(result, fmt, None if no_report else out)
    report_problems(result_problems(result), None if no_report else str(out / "summary.json"))
    crossed = _fail_on_crossed(summary, fail_on)
    for line in crossed:
        typer.echo(f"overlap: {printable(line)}", err=True)
    if crossed:
        raise typer.Exit(1)


@app.command(cls=OverlapCommand)
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


@app.command(cls=OverlapCommand)
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


@app.command(cls=OverlapCommand)
@handles_errors
def demo(
    out: Annotated[Path, out_option("Report folder.")] = Path("reports/demo"),
    fmt: FormatOption = Format.table,
) -> None:
    """Run the whole pipeline offline on the embedded demo data (hand-made MiMo and CyberGym-shaped
    datasets and a small OSS-Fuzz mapping) and explain what normalisation found.

    Example: overlap demo
    """
    from .api import compare as run_compare
    from .demo import demo_data, explain, portable_locations

    check_out(out, "compare")  # the demo writes a compare report
    result = portable_locations(run_compare("mimo-cyber", ["cybergym"], data=demo_data()))
    summary = _emit(result, fmt, out)
    if fmt == Format.table:
        typer.echo(explain(summary, _stdout_console().width))


def _register_commands() -> None:
    """Commands whose code lives in their own modules (each imports its heavy parts only when run)."""
    from .cli_audit import audit
    from .cli_matrix import matrix
    from .cli_outputs import card, filter_cmd, report
    from .cli_text import ngram

    for name, command in (("ngram", ngram), ("matrix", matrix), ("filter", filter_cmd), ("card", card),
                          ("report", report), ("audit", audit)):
        app.command(name, cls=OverlapCommand)(handles_errors(command))


_register_commands()


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
