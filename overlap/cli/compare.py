"""`overlap compare`: join a training set with benchmarks on normalised source ids, with chance baselines.

Heavy modules (pandas, pyarrow, huggingface_hub, scipy, datasets) and the library under them are imported
inside the command bodies: that keeps `overlap --help` fast (tests/test_cli.py guards it), it dodges no cycle.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

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
    NgramOption,
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
)
from .shared import (
    check_out,
    emit_compare,
    output_label,
    report_problems,
    report_recognition,
    result_datasets,
    result_problems,
)


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


MAX_PERMUTATIONS = 10_000_000
MAX_SEED = 2**32 - 1


def compare(
    train: Annotated[str, typer.Argument(help="Training set: a name from `overlap datasets` (NAME, NAME@REV, "
                                              "NAME:SUBSET), a Hub id, or a local file/folder.")],
    bench: Annotated[list[str], typer.Argument(help="One or more benchmarks, named the same ways.")],
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
    out: Annotated[Path | None, out_option("Report folder: new, empty or a previous compare report "
                                           "[default: reports/<train>__<bench>…].")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Print only; write no report folder.")] = False,
    fmt: CiFormatOption = CiFormat.table,
    fail_on: FailOnOption = None,
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
    engine: EngineOption = Engine.local,
    ray_address: RayAddressOption = None,
    workers: WorkersOption = None,
) -> None:
    """Join TRAIN with each BENCH on normalised source ids (OSS-Fuzz old→new, CVE), add chance baselines,
    and write a report.

    Example: overlap compare mimo-cyber cybergym sec-bench --data arvo=./ARVO --data arvo-meta=./ARVO-Meta

    Example: overlap compare my-train.jsonl cybergym --id-column id --fail-on 1 --format sarif > overlap.sarif
    """
    from ..api import compare as run_compare  # imported here: keeps `overlap --help` fast
    from ..api.text_columns import with_text_column
    from ..outputs.published import safe_name
    from ..sources.load import parse_data_options
    from ..text.attach import parse_text_options

    if out is None and not no_report:
        out = Path("reports") / safe_name("__".join(output_label(name) for name in (train, *bench)))
    if not no_report:
        check_out(out, "compare", train, *bench, pool, *([reference] if reference else []), data=data)
    if fmt in (Format.json, *CI_FORMATS):
        set_quiet()

    columns = column_options(id_column=id_column, repo_column=repo_column, pr_column=pr_column,
                             base_column=base_column, patch_column=patch_column, text_column=text_column,
                             project_column=project_column, id_scheme=id_scheme)
    columns, text_pairs = with_text_column(columns, parse_text_options(text))
    with status(f"comparing {train} with {', '.join(bench)} (loading, joining, baselines, evidence, text)"):
        result = run_compare(train, bench, data=parse_data_options(data), pool=pool,
                             strata=None if strata == Strata.none else strata.value, permutations=permutations,
                             seed=seed, reference=reference, reference_range=reference_range, evidence=evidence,
                             fix_join=fix_join.value, text=text_pairs,
                             ngram_ns=tuple(ngram_n or (13, 8)), columns=columns, split=split,
                             engine=engine.value, ray_address=ray_address_for(engine, ray_address), workers=workers)
    if result.sections.get("baselines", {}).get("status") == "not_run":
        typer.echo(f"overlap: chance baselines not run: {result.sections['baselines']['reason']}", err=True)
    summary = emit_compare(result, fmt, None if no_report else out, quiet=fmt in CI_FORMATS)
    if fmt in CI_FORMATS:
        print_comparison(result, summary, fmt, benches_crossed(summary, fail_on), None if no_report else out,
                         "compare")
    report_recognition(result_datasets(result))
    report_problems(result_problems(result), None if no_report else str(out / "summary.json"))
    exit_if_crossed(summary, fail_on)
