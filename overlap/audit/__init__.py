"""``overlap audit``: find the reference fix leaking from a task environment (spec: shared/specs/audit.md).

Library entry points (modules load lazily; importing this package costs nothing)::

    from overlap.audit import audit, render_table
    report = audit("path/to/repo", base="af6e6dd", fix=["fix.patch"], tests=["test.patch"])
    print(render_table(report))
    report.to_dict()  # the JSON report, schema "overlap.audit/1"

``audit(path, *, base=None, fix=(), tests=(), test_ids=(), fix_commit=None, instance=None,
network="any", repo_path=None, image=None, platform=None, rootfs=False, limits=None, git=None,
insecure_registries=(), stage=None)`` returns an ``AuditReport``. ``path`` is a repository folder (or a
folder of repositories, or a git folder), a ``docker save`` archive, an OCI layout (tar or folder), a
rootfs tar, with ``rootfs=True`` an unpacked root filesystem, or a ``docker://HOST/REPO:TAG`` (or
``@sha256:…``) reference, pulled without Docker into the blob cache (``image/pull.py``;
``stage(text)`` hears of its progress). User mistakes and registry failures raise
``overlap.errors.InputError``.

Layout, top to bottom; a module imports only from its own sub-package or file and the rows below it
(no import cycles; tests/audit/test_audit_layers.py checks it)::

    run.py, report.py      the run (``audit()``, the check registry) and the human table
    checks/                the checks G1–G15, F1–F3, T1–T3, L1–L11
    context.py             ``Ctx``: what a check sees of one target
    content/, image/       the reference answer and file contents; container image layers
    git/, targets.py       the git store; what to audit (input kinds, repositories in a folder or rootfs)
    tree.py, model.py      safe reads of the audited tree; report records, verdicts and the JSON form
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover  (annotations only: importing this package loads no submodule)
    from .model import AuditReport

__all__ = ["audit", "render_table", "AuditReport"]


def audit(path: Any, **kwargs: Any) -> AuditReport:
    """Audit a repository folder (or a folder of repositories) for leaks of the reference answer."""
    from .run import audit as _audit  # imported on first use: `import overlap.audit` stays cheap (CLI start-up)

    return _audit(path, **kwargs)


def render_table(report: AuditReport, width: int | None = None) -> str:
    """The human table of a report (control characters escaped)."""
    from .report import render_table as _render  # imported on first use, as above

    return _render(report, width)


def __getattr__(name: str) -> Any:
    if name == "AuditReport":
        from .model import AuditReport  # imported on first use, as above

        return AuditReport
    raise AttributeError(name)
