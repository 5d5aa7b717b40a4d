"""``audit()``: the run over an input's targets, and each target's record in the report.

The input is resolved into targets (``discovery.py``), each target's ``Ctx`` is built and every registered
check runs on it (``checks/registry.py``). All temporary data lives in one private folder (mode 0700),
removed on exit, error or Ctrl-C.
"""

from __future__ import annotations

import os
import platform as _platform
import tempfile
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from pathlib import Path

from .. import __version__
from ..errors import InputError
from .arguments import _check_types, _listed, _wrong_type, parse_limits
from .checks.registry import CHECKS, _git_view, run_checks, run_nested
from .content.reference import Reference, load_reference
from .context import Ctx
from .discovery import _git_odd_entries, _local_targets, _open_view, _refuse_lost_dotgit
from .git.cmd import GitError, GitRunner, version_tuple
from .git.guard import unsafe_reason
from .image.reference import is_registry_ref
from .model import AuditReport, Finding, Target
from .scratch import remove_tree
from .wording import capped


def audit(path, *, base: str | None = None, fix: Iterable[str] = (), tests: Iterable[str] = (),
          test_ids: Iterable[str] = (), fix_commit: str | None = None, instance: str | None = None,
          network: str = "any", repo_path: str | None = None, image: str | None = None,
          platform: str | None = None, rootfs: bool = False, limits=None, git: str | None = None,
          insecure_registries: Iterable[str] = (), stage: Callable[[str], None] | None = None,
          agent_user: str | None = None) -> AuditReport:
    """Audit a task environment; see ``overlap.audit`` for the arguments."""
    _check_types(path, {"base": base, "fix_commit": fix_commit, "repo_path": repo_path, "image": image,
                        "platform": platform, "network": network, "instance": instance, "git": git,
                        "rootfs": rootfs, "stage": stage})
    if network not in ("any", "none"):
        raise InputError(f"--network {network}: expected 'any' or 'none'")
    if limits is not None and not isinstance(limits, (str, Mapping)):
        if isinstance(limits, (bytes, bytearray)) or not isinstance(limits, Iterable):
            raise _wrong_type("limits", limits, "a dict or 'name=value' strings")
        limits = list(limits)
        for item in limits:
            if not isinstance(item, str):
                raise _wrong_type("limits", item, "a dict or 'name=value' strings")
    lim = parse_limits(limits)
    given = str(path)
    fix, tests, test_ids = _listed(fix, "fix"), _listed(tests, "tests"), _listed(test_ids, "test_ids")
    insecure_registries = _listed(insecure_registries, "insecure_registries")
    # first, so that whatever the input needs on disk (a zstd archive's plain copy) lives in it too
    private = Path(tempfile.mkdtemp(prefix="overlap-audit-"))
    try:
        os.chmod(private, 0o700)
        if is_registry_ref(given):  # pulled into the blob cache, then read from it as an OCI image
            if rootfs or image:
                raise InputError(f"{given}: a docker:// reference names one image; --rootfs and --image are for "
                                 "local folders and archives (drop them)")
            reference = load_reference(fix=fix, tests=tests, test_ids=test_ids, fix_commit=fix_commit,
                                       instance=instance)
            from .image.pull import open_registry_image  # imported here: a local audit never loads the HTTP client

            with _named(given):
                img, _ = open_registry_image(given, platform=platform, insecure_registries=insecure_registries,
                                             max_bytes=lim["image_bytes"], stage=stage)
            kind, p, targets = "registry", None, [(given, (None, None, None))]
        else:
            with _named(given):
                kind, p, img, targets = _local_targets(given, rootfs, repo_path, image, platform,
                                                       bool(base or fix or tests or instance), private, lim)
            reference = load_reference(fix=fix, tests=tests, test_ids=test_ids, fix_commit=fix_commit,
                                       instance=instance)
        base_source = "argument" if base else "HEAD"
        if base is None and reference.instance_base:
            base, base_source = reference.instance_base, "instance"
        (private / "home").mkdir(mode=0o700)
        runner = GitRunner(private / "home", binary=git, timeout=float(lim["git_timeout"]),
                           scratch=private / "scratch")
        git_version, git_error = None, None
        try:
            git_version = runner.version()
            if version_tuple(git_version) < (2, 25):
                git_error = f"git {git_version} is older than 2.25"
        except GitError as exc:
            git_error = f"git is not usable: {exc.reason}"
        if git is not None and git_error is not None:
            # a binary the user named is a mistake to say, not a reason to leave the history unchecked
            raise InputError(f"--git {git}: {git_error}; give a git binary (2.25 or newer) or leave --git out")
        out_targets = []
        for display, (root, gitdir, *image_path) in targets:
            fsroot = p if kind == "rootfs" else None
            merged, limit_hit = None, None
            target_git_error = git_error
            if img is not None:
                with _named(given):
                    merged, limit_hit, fsroot, (root, gitdir, *image_path) = _open_view(img, private, lim, repo_path)
                odd = _git_odd_entries(merged) if merged is not None else []
                if odd and not target_git_error:
                    target_git_error = unsafe_reason(odd, "in a git folder of the image, never materialised")
                if gitdir is None and limit_hit is None and not odd and root is not None:
                    _refuse_lost_dotgit(given, root, "root filesystem" if kind == "rootfs-tar" else "image")
            origin = gitdir
            gitdir, dropped, alt_names, target_git_error = _git_view(gitdir, fsroot, private, target_git_error)
            ctx = Ctx(kind=kind, path=display, root=root, gitdir=gitdir, runner=runner, private=private,
                      reference=reference, network=network, limits=lim, base_arg=base, base_source=base_source,
                      git_version=git_version, git_error=target_git_error, fsroot=fsroot,
                      repo_path=image_path[0] if image_path else None, origin_gitdir=origin,
                      dropped_alternates=dropped, alt_names=alt_names, image=img, merged=merged, limit_hit=limit_hit,
                      partial_input=img.missing_reason() if img is not None else None, nested_runner=run_nested,
                      agent_user=agent_user)
            if gitdir is None and not limit_hit:
                ctx.prepare_reference_without_git()
            out_targets.append(_run_target(ctx))
        inputs = _inputs(given, reference, out_targets, network, platform, lim, base_source)
        tool = {"name": "overlap", "version": __version__, "git": git_version,
                "python": _platform.python_version()}
        return AuditReport(tool, inputs, out_targets)
    finally:
        remove_tree(private)


@contextmanager
def _named(given: str):
    """An input error about a part of the input (a layer, a blob, a manifest) names the input it is in."""
    try:
        yield
    except InputError as exc:
        message = str(exc)
        if given in message:
            raise
        raise InputError(f"{given}: {message}") from None



def _run_target(ctx: Ctx) -> Target:
    results, findings = run_checks(ctx, CHECKS)
    t = Target(kind=ctx.kind, path=ctx.path, repo_path=ctx.repo_path, checks=results, findings=findings)
    if ctx.image is not None and ctx.merged is not None and ctx.repo_path:
        _add_git_layers(ctx, findings)
    if ctx.image is not None:
        img = ctx.image
        t.image = {"tags": img.tags, "config_digest": img.config_digest, "platform": img.platform,
                   "layers": [{"index": x.index, "diff_id": x.diff_id, "created_by": x.created_by[:200]}
                              for x in img.layers]}
    repo = ctx._repo
    base = {"sha": None, "source": ctx.base_source, "head": None, "setup_commits": 0}
    if repo is not None:
        base.update(sha=repo.base, head=repo.head.oid if repo.head else None, setup_commits=len(repo.setup))
        if repo.base_missing:
            base["missing"] = repo.base_missing
        if ctx.base_source == "HEAD":
            base["note"] = "base = HEAD: setup commits cannot be told apart"
        t.stats = {"objects_total": len(repo.all), "objects_hist": len(repo.hist),
                   "objects_nonbase": len(repo.nonbase)}
    if ctx.gitdir is None and not ctx.git_error:
        base.update(source="none", repository=False, note="no repository: audited by the checks that need no git")
    t.base = base
    index = ctx.index()
    if index is not None:
        t.stats["tracked_files"] = len({e.path for e in index.entries})
    if ctx._files is not None:
        t.stats["files_scanned"] = len(ctx._files)
    if ctx.walk_notes:
        t.stats["skipped"] = {"notes": ctx.walk_notes[:50]}
    unscanned = getattr(getattr(ctx, "_scan", None), "unscanned", None)
    if unscanned:  # files over the scan limits, never read: counted, so a clean verdict says what it did not see
        t.stats["not_scanned"] = capped(sorted(unscanned, key=lambda x: x["path"]), ctx.max_items)
    return t


def _add_git_layers(ctx: Ctx, findings: list[Finding]) -> None:
    """T3: every G finding also names the layer that wrote its ``.git`` file (e.g. ORIG_HEAD by layer 2)."""
    created = {x.index: x.created_by for x in ctx.image.layers}
    prefix = ctx.repo_path.strip("/") + "/"
    for f in findings:
        if f.check.startswith("G") and f.where.startswith(".git/"):
            e = ctx.merged.entries.get(prefix + f.where)
            if e is not None:
                f.evidence["layer"] = {"index": e.layer, "created_by": created.get(e.layer, "")[:200]}


def _inputs(given: str, ref: Reference, targets: list[Target], network: str, platform: str | None,
            limits: dict[str, int], base_source: str) -> dict:
    first = targets[0].base if len(targets) == 1 else {}
    return {"path": given, "base": first.get("sha"), "base_source": base_source,
            "fix": [s.to_dict() for s in ref.fix], "tests": [s.to_dict() for s in ref.tests],
            "test_ids": ref.test_ids, "fix_commit": ref.fix_commit, "instance_id": ref.instance_id,
            "network": network, "platform": platform, "limits": limits}
