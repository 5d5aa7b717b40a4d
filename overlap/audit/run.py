"""``audit()``: target discovery, the check registry, and the run.

Over 400 lines on purpose: the check registry and the run over targets read as one sequence.

Each check is registered as ``Check(id, needs, run)``; unmet needs give ``not_applicable`` with the
reason (or ``incomplete`` when git cannot read the repository), so ``checks[]`` always names every
check. All temporary data lives in one private folder (mode 0700), removed on exit, error or Ctrl-C.
"""

from __future__ import annotations

import os
import platform as _platform
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..errors import InputError
from .checks import builds, fixed, git, gitmeta, leftovers, near, poc, times
from .checks import image as imagechecks
from .content.archives import read_when_large
from .content.reference import Reference, load_reference
from .context import DEFAULT_LIMITS, Ctx, Incomplete, NotApplicable, capped, cut
from .git.cmd import GitError, GitRunner, version_tuple
from .git.files import ParseError
from .git.guard import kind_of, unsafe_reason
from .image.archive import open_image
from .image.layers import merge
from .image.materialise import _in_git, materialise
from .image.model import LimitHit
from .image.reference import is_registry_ref
from .model import CHECK_IDS, AuditReport, CheckResult, Finding, Target
from .scratch import remove_tree
from .source import find_task_folder
from .targets import ROOTFS_REPOS, detect_kind, discover_repos, find_rootfs_repo, inside, private_gitdir, repo_layout
from .tree import TooLarge, is_dir, read_regular


@dataclass(frozen=True)
class Check:
    id: str
    needs: frozenset[str]
    run: Callable[[Ctx], list[Finding]] | None  # None: not implemented yet


def _c(cid: str, needs: Iterable[str], fn) -> Check:
    return Check(cid, frozenset(needs), fn)


CHECKS: tuple[Check, ...] = (
    _c("G1", {"git"}, git.check_g1), _c("G2", {"git"}, git.check_g2), _c("G3", {"git"}, git.check_g3),
    _c("G4", {"git"}, git.check_g4), _c("G5", {"git"}, git.check_g5), _c("G6", {"git"}, git.check_g6),
    _c("G7", {"git"}, git.check_g7), _c("G8", {"git"}, git.check_g8), _c("G9", {"git"}, gitmeta.check_g9),
    _c("G10", {"git"}, gitmeta.check_g10), _c("G11", {"git"}, gitmeta.check_g11),
    _c("G12", {"git"}, gitmeta.check_g12), _c("G13", {"git"}, gitmeta.check_g13),
    _c("G14", {"git"}, gitmeta.check_g14), _c("G15", set(), gitmeta.check_g15),
    _c("F1", {"reference"}, fixed.check_f1), _c("F2", {"reference"}, fixed.check_f2),
    _c("F3", {"reference"}, near.check_f3),
    _c("T1", set(), times.check_t1), _c("T2", set(), times.check_t2), _c("T3", {"image"}, imagechecks.check_t3),
    _c("L1", set(), leftovers.check_l1), _c("L2", set(), leftovers.check_l2), _c("L3", set(), leftovers.check_l3),
    _c("L4", set(), leftovers.check_l4), _c("L5", set(), leftovers.check_l5), _c("L6", set(), leftovers.check_l6),
    _c("L7", set(), leftovers.check_l7), _c("L8", {"image"}, imagechecks.check_l8), _c("L9", set(), leftovers.check_l9),
    _c("L10", set(), leftovers.check_l10), _c("L11", {"image"}, imagechecks.check_l11),
    _c("B1", set(), builds.check_b1), _c("P1", set(), poc.check_p1), _c("P2", set(), poc.check_p2),
)
assert tuple(c.id for c in CHECKS) == tuple(cid for cid, _ in CHECK_IDS)
# a nested store gets G1–G12 against its own base (G13), and G14: a submodule moved past its gitlink
GIT_STORE_CHECKS = tuple(c for c in CHECKS if c.id in {f"G{i}" for i in (*range(1, 13), 14)})

# parse errors of git files, attributed to the check that reads the file
_PARSE_OWNER = (("logs/", "G2"), ("worktrees/", "G8"), ("packed-refs", "G1"), ("refs/", "G1"), ("HEAD", "G1"),
                ("FETCH_HEAD", "G4"), ("info/refs", "G4"), ("index", "G7"), ("objects/info/commit-graph", "G12"),
                ("objects/pack/multi-pack-index", "G12"), ("info/grafts", "G11"), ("shallow", "G11"))


def _owner(message: str) -> str:
    for prefix, cid in _PARSE_OWNER:
        if message.startswith(prefix):
            return cid
    return "G5" if ".idx" in message else "G6"


def run_check(ctx: Ctx, check: Check) -> tuple[CheckResult, list[Finding]]:
    res = CheckResult(check.id)
    findings: list[Finding] = []
    try:
        if ctx.limit_hit:
            raise Incomplete(ctx.limit_hit)
        if "image" in check.needs and ctx.image is None:
            raise NotApplicable("only for image archives")
        if check.run is None:
            raise NotApplicable("not implemented yet")
        if "reference" in check.needs and not ctx.reference.given:
            raise NotApplicable("no reference given (--fix, --tests or --instance)")
        if "git" in check.needs:
            _ = ctx.repo  # NotApplicable without git, Incomplete when git cannot read it
        findings = check.run(ctx)
        if ctx.partial_input:  # what it found stands; what it could not see keeps the verdict off `clean`
            res.status, res.reason = "incomplete", ctx.partial_input
        elif "git" in check.needs and ctx._repo is not None and (gaps := ctx._repo.store_gaps()):
            res.status, res.reason = "incomplete", gaps
    except NotApplicable as exc:
        res.status, res.reason = "not_applicable", exc.reason
    except Incomplete as exc:
        res.status, res.reason = "incomplete", exc.reason
        findings = exc.findings
    except GitError as exc:
        res.status, res.reason = "incomplete", exc.reason
    except ParseError as exc:
        res.status, res.reason = "incomplete", str(exc)
    if res.reason:
        res.reason = _public_paths(ctx, res.reason)
    res.findings = len(findings)
    return res, findings


def _public_paths(ctx: Ctx, text: str) -> str:
    """``text`` with each path under the private folder named as the report names it: git quotes the file it
    failed on (`stored in /tmp/overlap-audit-…/view/testbed/.git/objects/pack/…`), and the report must name no
    temporary path (the JSON is deterministic)."""
    private = str(ctx.private)
    if private not in text:
        return text

    def shown(m: re.Match) -> str:
        named = ctx._shown_store_path(Path(m.group(0)))
        return named if private not in named else "…/" + Path(m.group(0)).name

    return re.sub(re.escape(private) + r"(?:/[^\s()'\"]*)?", shown, text)


def run_checks(ctx: Ctx, checks: Iterable[Check]) -> tuple[list[CheckResult], list[Finding]]:
    results, findings = [], []
    for check in checks:
        res, found = run_check(ctx, check)
        results.append(res)
        findings.extend(found)
    repo = ctx._repo
    if repo is not None and repo.parse_errors:
        by_id = {r.id: r for r in results}
        for msg in repo.parse_errors:
            r = by_id.get(_owner(msg))
            if r is None or r.status == "not_applicable":
                continue
            if r.status != "incomplete":
                r.status, r.reason = "incomplete", msg
            elif msg not in (r.reason or ""):
                r.reason = f"{r.reason}; {msg}"
    keys: dict[str, int] = {}
    for f in findings:  # keys must be unique within a target
        n = keys.get(f.key, 0)
        keys[f.key] = n + 1
        if n:
            f.subject = f"{f.subject}#{n + 1}"
    return results, findings


def _git_view(gitdir: Path | None, fsroot: Path | None, private: Path, git_error: str | None):
    """(git folder for git, dropped alternates, their image names, git error) of a store inside a root
    filesystem or image: alternates, ``commondir`` and ``gitdir`` are rewritten into a private copy;
    a common folder that is not in the input blocks git (its host namesake is never read)."""
    dropped: list[str] = []
    alt_names: dict[str, str] = {}
    if fsroot is None or gitdir is None:
        return gitdir, dropped, alt_names, git_error
    missing: list[tuple[str, str]] = []
    gitdir = private_gitdir(gitdir, fsroot, private, dropped, alt_names, missing)
    lost = [f"{file} names {cut(line, 80)}" for file, line in missing if file.endswith("/commondir")]
    if lost and not git_error:
        git_error = "a linked worktree's common git folder is not in the input: " + lost[0]
    return gitdir, dropped, alt_names, git_error


def submodule_base(ctx: Ctx, rel: str) -> str | None:
    """A checked-out submodule's base: the gitlink at its path in B's tree (None: use its own HEAD)."""
    repo = ctx._repo
    if repo is None or not repo.base or repo.base not in repo.commits or not rel.endswith("/.git"):
        return None
    path = ctx.in_worktree(rel[:-5].lstrip("/") if ctx.fsroot is not None else rel[:-5])
    if not path:
        return None
    return repo.blobs_at([repo.base], [path], gitlinks=True)[repo.base].get(path)


def run_nested(ctx: Ctx, rel: str, gitdir: Path):
    """Audit a nested git store (G1–G12) against its own base: the gitlink in B's tree for a submodule,
    else its HEAD; cached per target. Handed to every ``Ctx`` as ``nested_runner`` (``ctx.nested``), so the
    checks that descend (F1, F2, G13) reach it without importing this module."""
    cache = ctx.__dict__.setdefault("_nested_cache", {})
    if rel not in cache:
        base = submodule_base(ctx, rel)
        # a store inside an image or rootfs names image paths (alternates, commondir): rewritten like the main one
        view, dropped, alt_names, git_error = _git_view(gitdir, ctx.fsroot, ctx.private, ctx.git_error)
        sub = Ctx(kind="nested", path=rel, root=None, gitdir=view, runner=ctx.runner, private=ctx.private,
                  reference=ctx.reference, network=ctx.network, limits=ctx.limits, git_version=ctx.git_version,
                  git_error=git_error, nested_depth=ctx.nested_depth + 1, base_arg=base,
                  base_source="argument" if base else "HEAD", fsroot=ctx.fsroot, origin_gitdir=gitdir,
                  dropped_alternates=dropped, alt_names=alt_names, tree=ctx.tree or ctx.scope,
                  nested_runner=ctx.nested_runner)
        results, findings = run_checks(sub, GIT_STORE_CHECKS)
        incomplete = [f"{r.id}: {r.reason}" for r in results if r.status == "incomplete"]
        cache[rel] = (sub._repo, findings, incomplete)
    return cache[rel]


# ------------------------------------------------------------------------------------------- run
_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


MAX_TIMEOUT = 86_400


def parse_limits(limits: Mapping[str, object] | Iterable[str] | None) -> dict[str, int]:
    out = dict(DEFAULT_LIMITS)
    if not limits:
        return out
    limits = [limits] if isinstance(limits, str) else limits  # one "name=value", not its letters
    pairs = limits.items() if isinstance(limits, Mapping) else [str(x).partition("=")[::2] for x in limits]
    for name, value in pairs:
        if name not in DEFAULT_LIMITS:
            raise InputError(f"--limit {name}: unknown limit (known: {', '.join(sorted(DEFAULT_LIMITS))})")
        m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(value))
        if not m:
            raise InputError(f"--limit {name}={value}: expected a whole number, optionally with K, M or G")
        out[name] = int(m.group(1)) * _SUFFIX[m.group(2).lower()]
        # a timeout past a day, or a size past 2**53 bytes, bounds nothing (and a huge one overflows the clock)
        most = MAX_TIMEOUT if name.endswith("_timeout") else 1 << 53
        if out[name] > most:
            raise InputError(f"--limit {name}={value}: at most {most:,}{' seconds' if most == MAX_TIMEOUT else ''}")
    return out


def _listed(value, name: str = "") -> list[str]:
    """One path (or id) or several: a str or path is one item, never its letters; None is none. Anything else
    (a number, bytes) is an InputError naming the argument `name`."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [_text(value, name)]
    if isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise _wrong_type(name, value, "a str or path, or a list of them")
    return [_text(v, name) for v in value]


def _text(value, name: str) -> str:
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, str):
            return text
    raise _wrong_type(name, value, "a str or path")


def _wrong_type(name: str, value, expected: str) -> InputError:
    return InputError(f"audit({name}={value!r:.60}): expected {expected}, not {type(value).__name__}")


def _check_types(path, options: dict) -> None:
    """A library call's arguments of the wrong type, each one InputError naming it (the CLI gives only text)."""
    _text(path, "path")
    for name in ("base", "fix_commit", "repo_path", "image", "platform", "network"):
        if (options[name] is not None or name == "network") and not isinstance(options[name], str):
            raise _wrong_type(name, options[name], "a str")
    for name in ("instance", "git"):
        if options[name] is not None:
            _text(options[name], name)
    if not isinstance(options["rootfs"], bool):
        raise _wrong_type("rootfs", options["rootfs"], "True or False")
    if options["stage"] is not None and not callable(options["stage"]):
        raise _wrong_type("stage", options["stage"], "a function taking a line of text")


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


def _local_targets(given: str, rootfs: bool, repo_path: str | None, image: str | None, platform: str | None,
                   single: bool, private: Path, lim: dict[str, int]):
    """(kind, resolved path, image or None, [(display, (worktree, git folder, image path))]) of a local PATH
    (a compressed image archive's plain copy goes into ``private``, up to the ``image_bytes`` limit)."""
    if not os.path.lexists(given):
        raise InputError(f"{given}: no such file or folder")
    # every input path is resolved once, here: git runs from a private folder, so a relative path would
    # name another file there; the report records the arguments as given (``inputs``) and names what it
    # audited by the resolved path (targets, "see it" commands), so `.`, `./x` and `/abs/x` audit alike
    p = Path(os.path.realpath(given))
    mode = os.stat(p).st_mode if os.path.exists(p) else 0
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):  # a FIFO or device is never opened
        raise InputError(f"{given}: {kind_of(mode) if mode else 'a dangling symlink'}, not a folder or a tar "
                         "archive (give a repository folder or an image tar)")
    kind = detect_kind(p, rootfs)
    layout = repo_layout(p) if kind == "repo" else None
    img = None
    if kind in IMAGE_KINDS:
        img = open_image(p, kind, image=image, platform=platform, spool=private, max_bytes=lim["image_bytes"])
        targets = [(str(p), (None, None, None))]
    elif kind == "rootfs":
        found = _repo_or_task(p, repo_path, None)
        if found[1] is None and found[0] is not None:
            _refuse_lost_dotgit(given, found[0], "root filesystem")
        targets = [(str(p), found)]
    elif layout is not None:
        targets = [(str(p), (*layout, None))]
    else:
        repos = discover_repos(p)
        if not repos:
            broken = _broken_dotgit(p)
            if broken:
                raise InputError(f"no git repository found in {given} ({broken}); give the folder that holds the "
                                 "repository's git data")
            # no repository at all: the folder is the task, audited by every check that needs no git
            return "folder", p, None, [(str(p), (p, None, None))]
        if single:
            raise InputError(f"{given}: holds {len(repos)} repositories; --base, --fix, --tests and --instance "
                             "need a single repository (audit each one separately)")
        targets = [(str(r), (*repo_layout(r), None)) for r in repos]
    return kind, p, img, targets


IMAGE_KINDS = ("docker-save", "oci-layout", "rootfs-tar")


def _broken_dotgit(folder: Path) -> str | None:
    """Why a `.git` that is there is no repository (a `gitdir:` file or a symlink to a folder that is gone, a
    loop), or None: "no .git" would send the user looking for the wrong thing."""
    dotgit = folder / ".git"
    try:
        mode = os.lstat(dotgit).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        try:
            link = os.readlink(dotgit)
        except OSError:
            return None
        return f".git is a symlink to {cut(link, 120)!r}, which is no git folder or loops"
    if stat.S_ISREG(mode):
        try:
            data = read_regular(dotgit, 4096) or b""
        except TooLarge:
            data = b""
        if not data.startswith(b"gitdir:"):
            return ".git is a file without a 'gitdir:' line"
        line = data[7:].strip().decode("utf-8", "backslashreplace")
        return f".git is a gitdir: file naming {cut(line, 120)!r}, which is no git folder: moved or deleted"
    if stat.S_ISDIR(mode):
        return ".git is no git folder: it needs a HEAD file and objects/ and refs/ folders"
    return None


def no_repository(given: str, what: str) -> InputError:
    """An input holding no repository is a usage error (exit 2), never an empty `clean` audit."""
    if what == "folder":
        where = "no .git and no git folder down to depth 4"
        instead = "give the repository folder itself, an image archive, or a root filesystem with --rootfs"
    else:
        where = "looked in " + ("WorkingDir, " if what == "image" else "") + ", ".join(ROOTFS_REPOS)
        instead = f"give --repo-path PATH (where the repository sits in the {what}), or the repository folder"
    return InputError(f"no git repository found in {given} ({where}); {instead}")


def _git_odd_entries(merged) -> list[str]:
    """Entries of an image's git folders that are not regular files or folders (symlinks,
    FIFOs, devices) are recorded and never materialised, so git would silently miss them: the git route is
    incomplete, naming each (a ``hooks/`` entry is never read: ignored)."""
    out = []
    for path, e in sorted(merged.entries.items()):
        if e.kind in ("file", "dir", "hardlink") or not _in_git(path) or "/hooks/" in f"/{path}":
            continue
        what = {"symlink": "a symlink", "fifo": "a FIFO", "device": "a device"}.get(e.kind, f"a {e.kind} entry")
        out.append(f"/{path}: {what}" + (f" to {cut(e.link, 80)}" if e.kind == "symlink" and e.link else ""))
    return out


def _open_view(img, private: Path, lim: dict[str, int], repo_path: str | None):
    """Passes 1 and 2 for an image: (merged map, limit hit, view folder, repository layout in the view)."""
    view = private / "view"
    if img.unread:
        return None, img.unread, None, (None, None, None)
    try:
        merged = merge(img, lim)
        materialise(img, merged, view, lim, read_when_large)
    except LimitHit as exc:
        return None, exc.reason, None, (None, None, None)
    workdir = (img.config.get("config") or {}).get("WorkingDir")
    if repo_path is None and workdir:
        found = find_rootfs_repo(view, None if workdir in ("", "/") else workdir) if _is_repo_in(view, workdir) \
            else find_rootfs_repo(view, None)
        if found[1] is None:
            found = _repo_or_task(view, None, workdir)
    else:
        found = _repo_or_task(view, repo_path, workdir)
    return merged, None, view, found


def _repo_or_task(fsroot: Path, repo_path: str | None, workdir: str | None):
    """(worktree, git folder, image path) of the repository in a root filesystem; with none, (task folder, None,
    its image path): `--repo-path` may name a folder without git, and the known places are searched for one."""
    if repo_path is None or _is_repo_in(fsroot, repo_path):
        found = find_rootfs_repo(fsroot, repo_path)
        if found[1] is not None:
            return found
    folder, image_path = find_task_folder(fsroot, repo_path, workdir)
    return folder, None, image_path


def _refuse_lost_dotgit(given: str, folder: Path, what: str) -> None:
    """A task folder whose `.git` leads nowhere (a gitdir: file naming a host path, a broken folder) is the
    user's repository gone missing, not a task without git: refused (exit 2), never audited as one."""
    if os.path.lexists(folder / ".git"):
        raise no_repository(given, what)


def _is_repo_in(view: Path, image_path: str) -> bool:
    d = inside(view, image_path)
    return d is not None and is_dir(d) and repo_layout(d, view) is not None


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
