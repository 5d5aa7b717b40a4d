"""`overlap audit`: a task environment checked for the reference fix leaking (Git history, file times,
leftovers).

Importing this module is cheap: ``overlap.audit`` is imported inside the command, so ``overlap --help``
imports no ``overlap.audit`` module (an import-time test checks it); that is for start-up speed, not a cycle.
"""

from __future__ import annotations

import contextlib
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..outputs.atomic import check_file_target, write_text_atomic
from ..progress import progress_enabled, stage, status
from .ci_output import print_audit, refuse_for_batch
from .options import (
    CI_FORMATS,
    OUT_NAMES,
    CiFormat,
    CiFormatOption,
    DataOption,
    Engine,
    Format,
    RayAddressOption,
    RegistryOption,
    ray_address_for,
)
from .shared import print_records


class Network(StrEnum):
    any = "any"
    none = "none"


class FailOn(StrEnum):
    leak = "leak"
    suspect = "suspect"


def audit(
    path: Annotated[str | None, typer.Argument(
        metavar="PATH", show_default=False,
        help="What to audit: a repository folder (or a folder of repositories, or a git folder), an image "
             "archive (docker save, OCI layout tar) or its unpacked folder, a rootfs tar (docker export), "
             "with --rootfs an unpacked root filesystem, or an image in a registry: docker://HOST/REPO:TAG or "
             "docker://HOST/REPO@sha256:DIGEST (pulled without Docker into the user cache folder, or "
             "OVERLAP_CACHE). Not with --targets or --benchmark.")] = None,
    base: Annotated[str | None, typer.Option(
        "--base", metavar="REV", help="The task's base commit B (hex or ref name). Default: HEAD.")] = None,
    fix: Annotated[list[str] | None, typer.Option(
        "--fix", metavar="FILE",
        help="The reference fix: a unified diff, or REPO_PATH=LOCAL_FILE for one fixed file. Repeatable.")] = None,
    tests: Annotated[list[str] | None, typer.Option(
        "--tests", metavar="FILE",
        help="The hidden tests: a test patch, or REPO_PATH=LOCAL_FILE. Repeatable.")] = None,
    test_id: Annotated[list[str] | None, typer.Option(
        "--test-id", metavar="ID", help="A hidden test ID (e.g. tests/test_calc.py::test_add). Repeatable.")] = None,
    fix_commit: Annotated[str | None, typer.Option(
        "--fix-commit", metavar="SHA", help="The upstream fix commit, when known.")] = None,
    instance: Annotated[str | None, typer.Option(
        "--instance", metavar="FILE",
        help="One task record (JSON or one-line JSONL) with SWE-bench fields; explicit options win.")] = None,
    network: Annotated[Network, typer.Option(
        "--network", metavar="any|none",
        help="Whether the agent can reach the internet: SHA-only findings are high with 'any', low with 'none'.")]
    = Network.any,
    repo_path: Annotated[str | None, typer.Option(
        "--repo-path", metavar="PATH", help="Image mode: where the repository sits in the image.")] = None,
    image: Annotated[str | None, typer.Option(
        "--image", metavar="NAME", help="Image mode: which image of a multi-image archive.")] = None,
    agent_user: Annotated[str | None, typer.Option(
        "--agent-user", metavar="NAME|UID",
        help="Who the agent runs as, for who can read a fixed build or a PoC (default: the image's User, else "
             "root).")] = None,
    platform: Annotated[str | None, typer.Option(
        "--platform", metavar="OS/ARCH[/VARIANT]",
        help="Image mode: platform in a multi-platform index (docker:// default: linux/amd64).")] = None,
    insecure_registry: Annotated[list[str] | None, typer.Option(
        "--insecure-registry", metavar="HOST[:PORT]",
        help="docker:// only: this registry may use plain HTTP or an unverified certificate (loopback hosts "
             "always may). Repeatable.")] = None,
    rootfs: Annotated[bool, typer.Option(
        "--rootfs", help="PATH is an unpacked root filesystem.")] = False,
    fmt: CiFormatOption = CiFormat.table,
    output: Annotated[str | None, typer.Option(
        *OUT_NAMES, "--output", metavar="FILE",
        help="Also write the JSON report to FILE (--output: the older spelling); with --targets or "
             "--benchmark a folder for every result.")] = None,
    fail_on: Annotated[FailOn | None, typer.Option(
        "--fail-on", metavar="leak|suspect",
        help="Exit 1 when the verdict reaches this level (for CI).")] = None,
    limit: Annotated[list[str] | None, typer.Option(
        "--limit", metavar="NAME=VALUE", help="Override a safety limit, e.g. git_timeout=600. Repeatable.")] = None,
    git: Annotated[str | None, typer.Option(
        "--git", metavar="PATH", help="The git binary to use (default: git on PATH).")] = None,
    targets: Annotated[str | None, typer.Option(
        "--targets", metavar="FILE", rich_help_panel="Image sets",
        help="Audit many targets: a CSV or JSON-lines file with a column image (docker://HOST/REPO:TAG) or path, "
             "and optionally set, instance_id, base_commit, patch, test_patch, fix_commit.")] = None,
    benchmark: Annotated[list[str] | None, typer.Option(
        "--benchmark", metavar="NAME", rich_help_panel="Image sets",
        help="Audit a registered benchmark's task images (its declaration's [audit] table). Repeatable.")] = None,
    tag: Annotated[list[str] | None, typer.Option(
        "--tag", metavar="TAG", rich_help_panel="Image sets",
        help="--benchmark: the image tag (default: the first declared); each tag is one image set. NAME=TAG gives "
             "one benchmark its own tags. Repeatable.")]
    = None,
    set_size: Annotated[list[str] | None, typer.Option(
        "--set-size", metavar="SET=N", rich_help_panel="Image sets",
        help="--targets: the SET's rows are a random sample of a set of N tasks: each count also gives its share "
             "and 95 % interval for the whole set. Repeatable.")] = None,
    routes: Annotated[bool, typer.Option(
        "--routes", rich_help_panel="Image sets",
        help="Print the routes table (a row per image set, a column per route) instead of the per-set table.")]
    = False,
    contamination: Annotated[list[str] | None, typer.Option(
        "--contamination", metavar="DIR", rich_help_panel="Image sets",
        help="The routes table's contamination column: a folder `overlap compare TRAIN BENCH…` wrote (its "
             "<bench>_contaminated_ids.txt). Repeatable.")] = None,
    mirror: Annotated[list[str] | None, typer.Option(
        "--mirror", metavar="HOST=MIRROR", rich_help_panel="Image sets",
        help="--benchmark: read the images a declaration names on HOST from MIRROR (a registry, optionally with a "
             "path prefix), e.g. docker.io=127.0.0.1:5000. Repeatable.")] = None,
    sample: Annotated[int | None, typer.Option(
        "--sample", metavar="N", min=1, rich_help_panel="Image sets",
        help="--benchmark: audit N instances drawn with --seed (default: all).")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", metavar="N", rich_help_panel="Image sets",
        help="--sample: random.Random(seed).sample over the sorted instance ids.")] = 0,
    set_name: Annotated[str | None, typer.Option(
        "--set", metavar="NAME", rich_help_panel="Image sets",
        help="--targets: the image set of rows without a set column (default: the file's name).")] = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", metavar="N", min=1, rich_help_panel="Image sets",
        help="Targets audited at once, each in its own process (default: one per core).")] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", metavar="SECONDS", rich_help_panel="Image sets",
        help="A target still running after this is stopped and reported as failed [default: 3600].")] = None,
    engine: Annotated[Engine, typer.Option(
        "--engine", rich_help_panel="Image sets",
        help="Image sets: local (processes on this machine) or ray (one Ray task per target); the same results.")]
    = Engine.local,
    ray_address: RayAddressOption = None,
    data: DataOption = None,
    registry: RegistryOption = None,
    package: Annotated[str | None, typer.Option(
        "--package", metavar="[ECOSYSTEM:]NAME", rich_help_panel="Network route",
        help="The package the task's repository publishes (pypi:NAME, npm:NAME, go:MODULE); default: the task "
             "record's package field, else mappings/repo_packages.csv.")] = None,
    index_url: Annotated[str | None, typer.Option(
        "--index-url", metavar="URL", rich_help_panel="Network route",
        help="The package index (default: pip's index-url / PIP_INDEX_URL, npm's registry, GOPROXY).")] = None,
    all_releases: Annotated[bool, typer.Option(
        "--all-releases", rich_help_panel="Network route",
        help="Read every release after the base, not only up to the first that carries the fix.")] = False,
    check_index: Annotated[bool, typer.Option(
        "--check-index", rich_help_panel="Network route",
        help="With PATH and --instance, --targets or --benchmark: also find the first package release carrying "
             "each task's fix (a network section per target; the image-set table's column 'fix one install away'). "
             "Implied by --package or --index-url, and when --instance is given without PATH.")] = False,
) -> None:
    """Find the reference fix leaking from a task environment: git objects and metadata beyond the base,
    the fixed content anywhere in the store, and file times that point at the touched files.

    Nothing from the audited tree is executed and nothing is written to it.

    Example: overlap audit ./testbed --base af6e6dd --fix fix.patch --tests test.patch --fail-on leak

    Example: overlap audit task.tar --instance task.json --format json --out audit.json

    Example: overlap audit docker://ghcr.io/org/task:1 --instance task.json

    Example: overlap audit ./testbed --instance task.json --format sarif > audit.sarif

    Exit codes: 0 done, 1 when --fail-on is reached, 2 usage or input error, or an incomplete audit (with
    --targets an incomplete target counts as done).
    """
    fail_on = fail_on.value if fail_on is not None else None
    for item in limit or []:
        if "=" not in item:
            raise InputError(f"--limit {item}: expected NAME=VALUE (e.g. git_timeout=600)")
    batch = {"targets": targets, "benchmark": benchmark, "tag": tag, "mirror": mirror, "sample": sample,
             "set_name": set_name, "set_size": set_size, "routes": routes, "contamination": contamination,
             "jobs": jobs, "timeout": timeout, "ray_address": ray_address_for(engine, ray_address), "data": data,
             "seed": seed if seed != 0 else None, "engine": engine.value if engine != Engine.local else None}
    if targets is not None or benchmark:
        from .audit_batch import run_batch_command  # imported here: keeps `overlap --help` fast

        refuse_for_batch(fmt)

        single = {"PATH": path, "--base": base, "--fix": fix, "--tests": tests, "--test-id": test_id,
                  "--fix-commit": fix_commit, "--instance": instance, "--image": image, "--platform": platform,
                  "--rootfs": rootfs, "--agent-user": agent_user}
        code = run_batch_command(batch, single, network=network.value, repo_path=repo_path, limit=limit or [],
                                 git=git, fmt=fmt, out=output, fail_on=fail_on,
                                 insecure_registries=insecure_registry,
                                 index={"check": bool(check_index or package or index_url), "package": package,
                                        "index_url": index_url, "all_releases": all_releases})
        raise typer.Exit(code)
    if path is None and instance is not None:  # the network route alone: which release hands over the fix
        from .audit_network import run_network_only  # imported here: keeps `overlap --help` fast

        raise typer.Exit(run_network_only(instance, network=network.value, fmt=fmt, output=output, package=package,
                                          index_url=index_url, all_releases=all_releases))
    if path is None:
        raise InputError("give what to audit: PATH, --targets FILE or --benchmark NAME (or --instance FILE alone "
                         "for the network route)")
    given = [f"--{k.replace('_name', '').replace('_', '-')}" for k, v in batch.items() if v]
    if given:
        raise InputError(f"{given[0]}: only with --targets or --benchmark")

    if output:
        _check_output(output, path, [*(fix or ()), *(tests or ()), *([instance] if instance else [])])
    from ..audit import audit as run_audit  # imported here: keeps `overlap --help` fast
    from ..audit import render_table

    with _progress(f"auditing {path}", enabled=fmt not in (Format.json, *CI_FORMATS)):
        report = run_audit(
            path, base=base, fix=fix or (), tests=tests or (), test_ids=test_id or (), fix_commit=fix_commit,
            instance=instance, network=network.value, repo_path=repo_path, image=image, platform=platform,
            rootfs=rootfs, limits=limit or None, git=git, insecure_registries=insecure_registry or (),
            stage=stage, agent_user=agent_user)
    report.fail_on = fail_on
    text = report.to_json()
    if check_index or package or index_url:
        if instance is None:
            raise InputError("--check-index: needs --instance FILE (the task record names the package and version)")
        from .audit_network import with_network  # imported here: keeps `overlap --help` fast

        text = with_network(text, instance, network.value, package, index_url, all_releases,
                            progress=fmt != Format.json, path=path)
    if output:
        _write_atomic(output, text)
    if fmt in CI_FORMATS:
        print_audit(report, fmt, fail_on)
    elif fmt in (Format.csv, Format.md):
        print_records(_finding_rows(report), fmt, title=f"audit: {report.verdict}")
    else:
        sys.stdout.write(text if fmt == Format.json else render_table(report))
    sys.stdout.flush()
    if report.verdict == "incomplete":
        names = ", ".join(f"{c.id}" for t in report.targets for c in t.incomplete_checks())
        typer.echo(f"overlap: audit incomplete: checks that could not run: {names}", err=True)
    raise typer.Exit(report.exit_code)


def _finding_rows(report) -> list[dict]:
    """csv/md rows: one per finding (a target without findings: one row with its verdict only)."""
    from ..audit.model import report_dict  # imported here: keeps `overlap --help` fast
    from ..audit.report import escape

    def cell(value) -> str:
        text = value if isinstance(value, str) else ("" if value is None else str(value))
        return " ".join(escape(text).split())

    rows = []
    for target in report_dict(report)["targets"]:
        head = {"target": cell(target["path"]), "verdict": cell(target["verdict"])}
        findings = target["findings"] or [{}]
        for f in findings:
            rows.append(head | {k: cell(f.get(k)) for k in ("severity", "class", "check", "title", "where")})
    return rows


def _progress(message: str, enabled: bool):
    """A spinner on stderr while the audit runs; off when stderr is not a terminal or the output is JSON."""
    if not (enabled and progress_enabled()):
        return contextlib.nullcontext()
    # the shared spinner: a registry pull names each image and layer under it (``progress.stage``)
    return status(message)


def _check_output(output: str, audited: str, inputs: list[str]) -> None:
    """Refuse, before the audit runs, an --output that would overwrite an input file or write into the
    audited tree (the audit promises never to write there)."""
    target = Path(os.path.abspath(output))
    check_file_target(target, f"--output {output}")
    resolved = target.resolve()
    for item in inputs:
        # REPO_PATH=LOCAL_FILE names a local file after '='
        for local in {Path(item), Path(item.partition("=")[2] or item)}:
            if local.exists() and local.resolve() == resolved:
                raise InputError(f"--output {output}: is the input {item}; write the report somewhere else")
    if audited.startswith("docker://"):  # an image in a registry: no local tree to protect
        return
    tree = Path(os.path.abspath(audited)).resolve()
    if resolved == tree or tree in resolved.parents:
        raise InputError(f"--output {output}: is inside the audited {audited}; nothing is written there, write the "
                         "report somewhere else")


def _write_atomic(path: str, text: str) -> None:
    try:  # resolved now, against the folder the command was started in
        write_text_atomic(Path(os.path.abspath(path)), text)
    except OSError as exc:
        raise InputError(f"--output {path}: cannot write there ({exc.strerror})") from None
