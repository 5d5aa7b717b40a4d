"""``overlap audit``: find the reference fix leaking from a task environment.

Library entry points (modules load lazily; importing this package costs nothing)::

    from overlap.audit import audit, render_table
    report = audit("path/to/repo", base="af6e6dd", fix=["fix.patch"], tests=["test.patch"])
    print(render_table(report))
    report.to_dict()  # the JSON report, schema "overlap.audit/1"

``audit(path, *, base=None, fix=(), tests=(), test_ids=(), fix_commit=None, instance=None,
network="any", repo_path=None, image=None, platform=None, rootfs=False, limits=None, git=None,
insecure_registries=(), stage=None, agent_user=None)`` returns an ``AuditReport`` (``help(audit)``
describes each option; ``fix`` and ``tests`` take one path or a list). ``path`` is a repository folder (or a folder of
repositories, or a git folder), a ``docker save`` archive, an OCI layout (tar or folder), a rootfs tar,
with ``rootfs=True`` an unpacked root filesystem, or a ``docker://HOST/REPO:TAG`` (or ``@sha256:…``)
reference, pulled without Docker into the blob cache (``image/pull.py``; ``stage(text)`` hears of its
progress). User mistakes and registry failures raise ``overlap.errors.InputError``.

Layout, top to bottom; a module imports only from its own sub-package or file and the rows below it
(no import cycles; tests/audit/test_audit_layers.py checks it)::

    study/                 image sets: targets files, benchmark samples, the per-set table
    run.py, report.py,     the run (``audit()``) and the human table; the network route
    network.py             (the first package release that carries the fix)
    checks/,               the checks G1–G15, F1–F3, T1–T3, L1–L11, B1, P1–P2 and their registry; which package
    package_meta.py,       a repository publishes (its own packaging metadata, else the shipped mapping); the
    arguments.py           arguments checked (types, ``--limit`` values)
    context.py, index/,    ``Ctx``: what a check sees of one target; package indexes (PyPI, npm, Go proxy);
    discovery.py           what a local input holds to audit (its repositories, an image's view)
    source.py, grading.py  the task's folder and source when there is no repository; the shared grading rules
    content/, image/,      the reference answer and file contents; container image layers; the target's files
    listing.py             as the checks see them (the scan scope's walk, nested git folders, the index)
    git/, targets.py       the git store; what to audit (input kinds, repositories in a folder or rootfs)
    zstd_input.py          zstd-compressed input: the decompressor, an archive read as the tar it holds
    tree.py, model.py,     safe reads of the audited tree; report records, verdicts and the JSON form;
    scratch.py, catalog.py removing the private folder whatever an image nested in it; one line per check;
    wording.py             how findings word their values (ISO times, short IDs, cut texts, capped lists)
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover  (annotations only: importing this package loads no submodule)
    from .model import AuditReport

__all__ = ["audit", "render_table", "AuditReport"]


def audit(path: str | os.PathLike, *, base: str | None = None,
          fix: str | os.PathLike | Iterable[str | os.PathLike] = (),
          tests: str | os.PathLike | Iterable[str | os.PathLike] = (), test_ids: str | Iterable[str] = (),
          fix_commit: str | None = None, instance: str | None = None, network: str = "any",
          repo_path: str | None = None, image: str | None = None, platform: str | None = None,
          rootfs: bool = False, limits: Mapping[str, int | str] | Iterable[str] | str | None = None,
          git: str | None = None, insecure_registries: Iterable[str] = (),
          stage: Callable[[str], None] | None = None, agent_user: str | None = None) -> AuditReport:
    """Audit a task environment for the reference fix leaking to the agent; returns an ``AuditReport``
    (``.verdict``: ``leak``, ``suspect``, ``clean`` or ``incomplete``; ``.findings``; ``.to_dict()``).

    Args:
        path: a repository folder, a folder of repositories (each audited against its HEAD), a git folder, a
            ``docker save`` archive, an OCI layout (tar or folder), a rootfs tar, with ``rootfs=True`` an
            unpacked root filesystem, or an image in a registry, ``docker://HOST/REPO:TAG`` (or ``@sha256:…``),
            pulled without Docker into the blob cache.
        base: the task's base commit (hex or ref name; default: the instance's base, else HEAD).
        fix: the reference fix: a unified diff file, or ``REPO_PATH=LOCAL_FILE`` for one fixed file; one (a str
            or path, never read letter by letter) or a list.
        tests: the hidden tests: a test patch or ``REPO_PATH=LOCAL_FILE``; one or a list, as ``fix``.
        test_ids: hidden test ids (e.g. ``tests/test_calc.py::test_add``); one str or a list.
        fix_commit: the upstream fix commit, when known.
        instance: one task record (a JSON or one-line JSONL file) with SWE-bench fields; explicit
            arguments win.
        network: whether the agent can reach the internet, ``"any"`` or ``"none"``: an id of a commit the
            environment does not hold is graded by what it adds to that access (``info`` with ``"none"``).
        repo_path: where the repository sits inside an image or root filesystem (e.g. ``/testbed``); with no
            repository, the task's folder (e.g. ``/src/project``).
        image: which image of a multi-image archive.
        platform: which platform of a multi-platform index (``OS/ARCH``, e.g. ``linux/amd64``).
        rootfs: ``path`` is an unpacked root filesystem.
        limits: safety limits to override, ``{"git_timeout": 600}`` or ``"name=value"`` strings (one or a
            list; values may end in K, M or G).
        git: the git binary to run (default: ``git`` on PATH).
        insecure_registries: registry hosts to reach over plain HTTP (loopback hosts always may).
        stage: called with a line of progress text while a registry image is pulled.
        agent_user: who the agent runs as (``NAME`` or ``UID``, ``NAME:GROUP``), for who can read a fixed build
            or a PoC; default: the image config's ``User``, else root (the report says so).

    Raises ``overlap.errors.InputError`` on a user mistake (a missing path, an unknown limit, …).
    """
    from .run import audit as _audit  # imported on first use: `import overlap.audit` stays cheap (CLI start-up)

    return _audit(path, base=base, fix=fix, tests=tests, test_ids=test_ids, fix_commit=fix_commit,
                  instance=instance, network=network, repo_path=repo_path, image=image, platform=platform,
                  rootfs=rootfs, limits=limits, git=git, insecure_registries=insecure_registries, stage=stage,
                  agent_user=agent_user)


def render_table(report: AuditReport, width: int | None = None) -> str:
    """The human table of a report (control characters escaped)."""
    from .report import render_table as _render  # imported on first use, as above

    return _render(report, width)


def __getattr__(name: str) -> Any:
    if name == "AuditReport":
        from .model import AuditReport  # imported on first use, as above

        return AuditReport
    raise AttributeError(name)


class _CallableModule(types.ModuleType):
    """This package, callable as its `audit` function: `overlap.audit` names both the package and the entry
    point (the import system sets the package attribute `overlap.audit` to this module once it is loaded), so
    `overlap.audit("repo/", fix="fix.patch")` works whichever of the two a user reaches."""

    def __call__(self, *args: Any, **kwargs: Any) -> AuditReport:
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
sys.modules[__name__].__signature__ = inspect.signature(audit)  # help() and inspect show audit's options
