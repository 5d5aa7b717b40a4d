"""The options shared by `overlap` commands, defined once: every command takes them from here, so a name, a
short alias, a metavar and a set of choices are the same wherever the option appears.

Vocabulary (option → commands):

- `--data/-d NAME=PATH`            compare, ids, matrix, filter, ngram
- `--text TRAIN_FIELD:BENCH_FIELD` compare, ngram (`--field`: hidden, deprecated alias)
  (atlas: `--text` is a switch; each cell uses the fields compare picks by default)
- `--ngram/-n N`                   compare, ngram (`--n`: hidden, deprecated alias)
- `--out/-o`                       every command that writes a folder or file (audit: `--output` is a hidden
                                   alias; audit writes one JSON file, the others a folder)
- `--format/-f table|json|csv|md`  every command that prints results; audit, compare and filter also take
                                   sarif|junit (the CI formats, `CiFormat`)
- `--push` / `--repo OWNER/NAME`   card, filter (filter: `--push-to-hub REPO` = `--push --repo REPO`)
- `--engine local|ray`, `--ray-address`, `--workers`  ngram, compare, filter, atlas (the text scan; compare's key scan)

Hidden aliases still parse; `OverlapCommand` leaves them out of `--help`. The command class also writes
arguments as `TRAIN BENCH...` in the usage line and the help (typer's own `{train}` / `<list[str]>` labels
are never shown) and gives every option a metavar (choices as `a|b|c`).

Imports stay cheap: typer and the standard library only.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

from ..sources.registry.registry import add_declarations
from ..text import MAX_NGRAM

# Old spellings that still parse but are not shown in --help.
HIDDEN_ALIASES = frozenset({"--field", "--n", "--output"})


class Engine(StrEnum):
    local = "local"
    ray = "ray"


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


FORMAT_METAVAR = "|".join(f.value for f in Format)


class CiFormat(StrEnum):
    """`Format` and the CI report formats, for the commands a CI step runs (audit, compare, filter)."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"
    sarif = "sarif"
    junit = "junit"


CI_FORMATS = (CiFormat.sarif, CiFormat.junit)


def _metavar(param) -> str:
    """A readable metavar for a parameter typer would label `<str>`, `<path>`, `{name}`, …"""
    desc = getattr(param, "type_descriptor", None)
    if desc is not None and desc.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices or ())
    if desc is not None and desc.is_path:
        return "PATH"
    base = getattr(desc, "annotation", None)
    if base is int or base is float or getattr(desc, "is_ranged", False):
        return "N"
    return (param.name or "value").upper()


def _no_type(ctx=None, **_) -> None:
    return None


class OverlapCommand(TyperCommand):
    """Every command's click class: real metavars in usage and help, hidden aliases left out of --help."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.param_type_name == "argument":
                if param.metavar is None:
                    param.metavar = (param.name or "arg").upper() + ("..." if param.nargs != 1 else "")
                param.display_type_rich = _no_type  # the metavar says it: no `<str>`, `<list[str]>`
            elif not getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = _metavar(param)

    def collect_usage_pieces(self, ctx):
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.params:
            if param.param_type_name == "argument":
                name = param.metavar
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_help(self, ctx, formatter) -> None:
        hidden = []
        for param in self.params:
            names = [o for o in getattr(param, "opts", []) if o in HIDDEN_ALIASES]
            if names and len(names) < len(param.opts):
                hidden.append((param, list(param.opts)))
                param.opts = [o for o in param.opts if o not in HIDDEN_ALIASES]
        try:
            super().format_help(ctx, formatter)
        finally:
            for param, opts in hidden:
                param.opts = opts


DataOption = Annotated[
    list[str] | None,
    typer.Option("--data", "-d", metavar="NAME=PATH",
                 help="Use a local folder laid out like the dataset's repo, or a single file, for NAME."),
]
FormatOption = Annotated[Format, typer.Option("--format", "-f", metavar=FORMAT_METAVAR,
                                              help="What to print on stdout.")]
CiFormatOption = Annotated[CiFormat, typer.Option(
    "--format", "-f", metavar="|".join(f.value for f in CiFormat),
    help="What to print on stdout; sarif (SARIF 2.1.0, for code scanning) and junit (JUnit XML) for CI.")]
TextOption = Annotated[
    list[str] | None,
    typer.Option("--text", "--field", metavar="TRAIN_FIELD:BENCH_FIELD",
                 help="Text fields to compare (repeatable for compare; the `text_` prefix may be left out; a local "
                      "file's own column names otherwise; none = off)."),
]
NgramOption = Annotated[
    list[int] | None,
    typer.Option("--ngram", "-n", "--n", min=1, max=MAX_NGRAM, metavar="N",
                 help="Word n-gram size, 1 to 64 (repeatable) [default: 13, 8]."),
]
# The engine of the text scan (ngram, compare --text, filter --drop ngram:<n>): the library's `engine`,
# `ray_address` and `workers` (overlap.text.text_check).
EngineOption = Annotated[Engine, typer.Option(
    "--engine", help="Text scan: local (this machine) or ray (a Ray cluster; pip install 'overlap[ray]'): the "
                     "train side as a Ray Dataset scanned by an actor pool; the same flags. compare and atlas also "
                     "derive the keys of a training set read by columns (parquet) there; the same result.")]
RayAddressOption = Annotated[str | None, typer.Option(
    "--ray-address", envvar="RAY_ADDRESS", help="The Ray cluster to attach to (e.g. ray://HEAD:10001 or auto); "
                                                "default: start a local Ray.")]
WorkersOption = Annotated[int | None, typer.Option(
    "--workers", min=1, help="Text scan processes (local) or actors (ray). Default: one process below 512 MiB of "
                             "text, else one per free core; on Ray one per cluster CPU.")]
# Columns of a user's own dataset (a file, folder, glob or Hub id that is not registered): which column gives
# what. Dotted names reach into nested fields. `column_options` collects them for the library.
IdColumnOption = Annotated[str | None, typer.Option(
    "--id-column", metavar="COLUMN", help="Id column of a dataset given as a file, folder, glob or Hub id that is "
                                          "not registered (dotted for nested fields: extra_info.instance_id).")]
RepoColumnOption = Annotated[str | None, typer.Option("--repo-column", metavar="COLUMN",
                                                      help="Its GitHub repo column (owner/name).")]
PrColumnOption = Annotated[str | None, typer.Option("--pr-column", metavar="COLUMN",
                                                    help="Its pull-request number column.")]
BaseColumnOption = Annotated[str | None, typer.Option("--base-column", metavar="COLUMN",
                                                      help="Its base-commit column.")]
PatchColumnOption = Annotated[str | None, typer.Option("--patch-column", metavar="COLUMN",
                                                       help="Its fix patch (diff) column.")]
TextColumnOption = Annotated[str | None, typer.Option("--text-column", metavar="COLUMN",
                                                      help="Its task text column.")]
ProjectColumnOption = Annotated[str | None, typer.Option("--project-column", metavar="COLUMN",
                                                         help="Its project column.")]
IdSchemeOption = Annotated[str | None, typer.Option(
    "--id-scheme", metavar="SCHEME", help="The scheme (ossfuzz, cve, ghsa, github_pr, fix_commit) of the ids "
                                          "no specific form recognises: ossfuzz reads a trailing issue number "
                                          "(task-10055), fix_commit a bare sha.")]
SplitOption = Annotated[str | None, typer.Option("--split", metavar="SPLIT",
                                                 help="The split of a Hub dataset given by id (e.g. train).")]


def ray_address_for(engine: object, ray_address: str | None) -> str | None:
    """The Ray cluster a command attaches to. Given on the command line with the local engine it would be
    ignored, so it is refused; from RAY_ADDRESS alone (the environment a Ray cluster sets for every process)
    it waits for `--engine ray`."""
    from typer.main import get_current_context  # typer's own click: `click`'s would see no command running

    from ..errors import InputError

    if ray_address is None or str(engine) == Engine.ray:
        return ray_address
    context = get_current_context(silent=True)
    given = context is not None and context.get_parameter_source("ray_address").name == "COMMANDLINE"
    if given:
        raise InputError(f"--ray-address {ray_address}: only the ray engine attaches to a cluster; add --engine ray "
                         "(or leave --ray-address out to run on this machine)")
    return None



def column_options(**columns: str | None) -> dict[str, str]:
    """The column options given, as the library's `columns` ({"id": …, "repo": …, "scheme": …})."""
    return {name.removesuffix("_column").replace("id_scheme", "scheme"): value
            for name, value in columns.items() if value is not None}


PushOption = Annotated[bool, typer.Option("--push", help="Publish to the Hub as a pull request (never the main "
                                                         "branch) instead of only writing locally.")]
OUT_NAMES = ("--out", "-o")


def _add_registries(values: list[Path] | None) -> list[Path] | None:
    # Eager: the declared names exist before any dataset argument is resolved.
    if values:
        add_declarations(values)
    return values


RegistryOption = Annotated[
    list[Path] | None,
    typer.Option("--registry", metavar="FILE", is_eager=True, callback=_add_registries,
                 help="A TOML file (or folder of them) declaring your datasets by name (repeatable); "
                      "`overlap datasets --show cybergym` shows the format."),
]


def missing_option(name: str):
    """The usage error of a required option that is declared optional (to share its definition)."""
    try:
        from typer._click import exceptions, globals
    except ImportError:  # pragma: no cover - older typer: click itself
        from click import exceptions, globals

    return exceptions.MissingParameter(ctx=globals.get_current_context(silent=True), param_type="option",
                                       param_hint=f"'{name}'")


def out_option(help: str, metavar: str = "FOLDER"):
    """`--out/-o`: the same names everywhere; the help says what is written there."""
    return typer.Option(*OUT_NAMES, metavar=metavar, help=help)


def repo_option(help: str):
    """`--repo OWNER/NAME`: the Hub dataset repo a `--push` goes to."""
    return typer.Option("--repo", metavar="OWNER/NAME", help=help)

