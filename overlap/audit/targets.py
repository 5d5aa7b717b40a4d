"""Finding what to audit (PATH kinds): repositories, folders of them, root filesystems
and image archives, and the repository inside a root filesystem or image view.

Paths named by the input (``gitdir:`` files, alternates, ``--repo-path``) are resolved inside the root
filesystem with ``inside``, through real folders only: a host path named by the image is never read.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
import tempfile
from pathlib import Path

from ..errors import InputError
from . import zstd_input
from .tree import TooLarge, is_dir, is_regular, list_dir, read_regular


def _looks_like_gitdir(p: Path) -> bool:
    return (p / "HEAD").is_file() and is_dir(p / "objects") and is_dir(p / "refs")


def repo_layout(path: Path, fsroot: Path | None = None) -> tuple[Path | None, Path] | None:
    """(worktree root or None, git folder) when ``path`` is a repository, else None.

    In a root filesystem or image view (``fsroot``), a ``gitdir:`` file is resolved inside it: an
    absolute path names the image's file, never the host's.
    """
    dotgit = path / ".git"
    if is_dir(dotgit) and _looks_like_gitdir(dotgit):
        return path, dotgit
    if dotgit.is_symlink():  # `.git` linked to a git folder elsewhere: git follows it, in the image's own tree
        target = inside(fsroot, "/" + str(dotgit.relative_to(fsroot))) if fsroot is not None \
            else Path(os.path.realpath(dotgit))
        if target is not None and is_dir(target) and _looks_like_gitdir(target):
            return path, target
    if dotgit.is_file() and not dotgit.is_symlink():
        try:
            data = read_regular(dotgit, 4096) or b""
        except TooLarge:
            data = b""
        if data.startswith(b"gitdir:"):
            line = data[7:].strip().decode("utf-8", "replace")
            if fsroot is not None:
                image_path = line if line.startswith("/") else posixpath.normpath(
                    "/" + str(path.relative_to(fsroot)) + "/" + line)
                target = inside(fsroot, image_path)
            else:  # normalised without touching the disk, so one folder has one name
                target = Path(os.path.normpath(line if line.startswith("/") else path / line))
            if target is not None and is_dir(target):
                return path, target
    if _looks_like_gitdir(path):
        return None, path
    return None


SKIP_DISCOVERY = {"node_modules", ".venv", "venv", "site-packages", "__pycache__", ".tox", ".nox"}


def discover_repos(folder: Path, max_depth: int = 4) -> list[Path]:
    out: list[Path] = []
    stack = [(folder, 0)]
    while stack:
        d, depth = stack.pop()
        if repo_layout(d) is not None:
            out.append(d)
            continue
        if depth >= max_depth:
            continue
        for e in reversed(list_dir(d)):
            if e.is_dir(follow_symlinks=False) and e.name not in SKIP_DISCOVERY:
                stack.append((Path(e.path), depth + 1))
    return sorted(out)


ROOTFS_TOPS = {"bin", "etc", "usr", "lib", "lib64", "var", "root", "home", "tmp", "opt", "srv", "sbin", "app",
               "testbed", "workspace", "repo", "src"}


def detect_kind(path: Path, rootfs: bool) -> str:
    """The PATH kinds, in order."""
    if path.is_file():
        try:
            with zstd_input.tar_stream(path) if zstd_input.is_zstd(path) else tarfile.open(path) as tar:
                names = set()
                for i, m in enumerate(tar):
                    names.add(m.name[2:] if m.name.startswith("./") else m.name.lstrip("/"))
                    if i > 10_000 or "manifest.json" in names:
                        break
        except (tarfile.TarError, OSError, EOFError) as exc:
            if "unexpected end of data" in str(exc):  # tar headers, then the file stops: a cut copy
                raise InputError(f"{path}: the tar archive is truncated (it ends inside a member); save, export "
                                 "or copy it again") from None
            raise InputError(f"{path}: not a folder or a tar archive (give a repository folder or an image tar)") \
                from None
        if "manifest.json" in names:
            return "docker-save"
        if "oci-layout" in names and "index.json" in names:
            return "oci-layout"
        tops = {n.split("/", 1)[0] for n in names}
        if not tops & ROOTFS_TOPS and not any(n.endswith(".git/HEAD") for n in names):
            raise InputError(f"{path}: a tar with neither manifest.json nor oci-layout/index.json, and no root "
                             "filesystem folders (etc, usr, bin, ...): give an image archive or a rootfs tar")
        return "rootfs-tar"
    if (path / "manifest.json").is_file():
        return "docker-save"
    if (path / "oci-layout").is_file() and (path / "index.json").is_file():
        return "oci-layout"
    if rootfs:
        return "rootfs"
    return "repo"


ROOTFS_REPOS = ("/testbed", "/app", "/workspace", "/repo", "/home/*", "/src")


MAX_LINK_HOPS = 40  # the kernel's limit on symlinks followed in one path


def inside(fsroot: Path, image_path: str) -> Path | None:
    """An absolute image path as a host path under ``fsroot``, its symlinks followed as the container follows
    them, inside the image: an absolute target starts again at ``fsroot`` and `..` stops at it (chroot rules),
    so no link reaches a host file. The result is a real file or folder, never a link (None: no such path, a
    part that is a file, or a loop)."""
    parts = [x for x in image_path.split("/") if x not in ("", ".")]
    resolved: list[str] = []
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        cur = fsroot.joinpath(*resolved, part)
        if cur.is_symlink():
            hops += 1
            try:
                target = os.readlink(cur)
            except OSError:
                return None
            if hops > MAX_LINK_HOPS:
                return None
            if target.startswith("/"):
                resolved = []
            parts = [x for x in target.split("/") if x not in ("", ".")] + parts
            continue
        if parts and not is_dir(cur):
            return None
        resolved.append(part)
    found = fsroot.joinpath(*resolved)
    return found if os.path.lexists(found) else None


def checkout_exists(fsroot: Path | None, checkout: str | None) -> bool:
    """Whether a linked worktree's checkout exists: inside the root filesystem or image when there is one
    (its absolute paths are the image's, never the host's), else on this machine."""
    if not checkout:
        return False
    if fsroot is None:
        return os.path.lexists(checkout)
    return checkout.startswith("/") and inside(fsroot, checkout) is not None


def find_rootfs_repo(fsroot: Path, repo_path: str | None) -> tuple[Path | None, Path | None, str | None]:
    """(worktree, git folder, image path) of the audited repo in a root filesystem (image mode)."""
    if repo_path:
        d = inside(fsroot, repo_path)
        layout = repo_layout(d, fsroot) if d is not None and is_dir(d) else None
        if layout is None:
            raise InputError(f"--repo-path {repo_path}: no git repository there (a folder with .git, or a git "
                             "folder, inside the image or root filesystem)")
        return (*layout, "/" + repo_path.strip("/"))
    for cand in ROOTFS_REPOS:
        if cand.endswith("/*"):
            parent = inside(fsroot, cand[:-2])
            names = [e.name for e in list_dir(parent)] if parent is not None and is_dir(parent) else []
            paths = [f"{cand[:-2]}/{n}" for n in names]
        else:
            paths = [cand]
        for ip in paths:
            d = inside(fsroot, ip)
            layout = repo_layout(d, fsroot) if d is not None and is_dir(d) else None
            if layout is not None:
                return (*layout, ip)
    return None, None, None


def materialise_if_alternates(gitdir: Path, fsroot: Path, private: Path, dropped: list[str],
                              names: dict[str, str]) -> Path:
    """Copy a git folder whose alternates name image paths into the private folder, rewriting each line
    to the copy's view of the image: git must never read a host path named by the image."""
    if not is_regular(gitdir / "objects" / "info" / "alternates"):
        return gitdir
    copy = Path(tempfile.mkdtemp(prefix="git-", dir=private))
    shutil.rmtree(copy)
    shutil.copytree(gitdir, copy, symlinks=True)
    _rewrite_alternates(gitdir / "objects", copy / "objects", fsroot, private, dropped, names, {}, 0)
    return copy


MAX_ALTERNATES_DEPTH = 5  # git's own limit on chained alternates


def _rewrite_alternates(objects: Path, copy: Path, fsroot: Path, private: Path, dropped: list[str],
                        names: dict[str, str], memo: dict[str, Path], depth: int) -> None:
    """Write ``copy/info/alternates`` from ``objects/info/alternates``: each line resolved inside ``fsroot``.
    An alternate with alternates of its own is copied and rewritten the same way (a chain), since git
    follows every link of the chain; a line naming no folder of the image is dropped and listed."""
    lines = []
    data = b""
    if depth < MAX_ALTERNATES_DEPTH:
        try:
            data = read_regular(objects / "info" / "alternates", 1 << 20) or b""
        except TooLarge:
            data = b""
    here = _image_path(fsroot, objects)
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        image_abs = line if line.startswith("/") else os.path.normpath(here + "/" + line)
        target = inside(fsroot, image_abs)
        if target is None or not is_dir(target):
            dropped.append(line)
            continue
        if is_regular(target / "info" / "alternates"):
            if str(target) not in memo:
                chained = Path(tempfile.mkdtemp(prefix="objects-", dir=private))
                shutil.rmtree(chained)
                shutil.copytree(target, chained, symlinks=True)
                memo[str(target)] = chained
                _rewrite_alternates(target, chained, fsroot, private, dropped, names, memo, depth + 1)
            target = memo[str(target)]
        lines.append(str(target))
        names[str(target)] = image_abs
    (copy / "info").mkdir(exist_ok=True)
    (copy / "info" / "alternates").write_text("".join(f"{x}\n" for x in lines))


def _image_path(fsroot: Path, host: Path) -> str:
    try:
        return "/" + str(host.relative_to(fsroot))
    except ValueError:
        return "/"


def _first_line(path: Path) -> str | None:
    try:
        data = read_regular(path, 4096)
    except TooLarge:
        return None
    return data.decode("utf-8", "replace").strip().splitlines()[0].strip() if data and data.strip() else None


def private_gitdir(gitdir: Path, fsroot: Path, private: Path, dropped: list[str], names: dict[str, str],
                   missing: list[tuple[str, str]]) -> Path:
    """The git folder git may be pointed at, for a repository inside a root filesystem or image.

    A linked worktree's git folder names its common folder in ``commondir`` (relative, or an absolute
    path of the image) and its checkout in ``gitdir``: both are resolved inside ``fsroot`` and written
    into a private copy, so git never follows a path of the image on the host. A path that is not in
    the image is left out of the copy and listed in ``missing`` as (file, line). The common folder
    itself gets its alternates rewritten (``materialise_if_alternates``).
    """
    commondir = gitdir / "commondir"
    if not is_regular(commondir):
        return materialise_if_alternates(gitdir, fsroot, private, dropped, names)
    here = _image_path(fsroot, gitdir)
    line = _first_line(commondir) or ""
    common = inside(fsroot, line if line.startswith("/") else posixpath.normpath(here + "/" + line)) if line \
        else None
    copy = Path(tempfile.mkdtemp(prefix="git-wt-", dir=private))
    shutil.rmtree(copy)
    shutil.copytree(gitdir, copy, symlinks=True)
    (copy / "commondir").unlink()
    if common is not None and is_dir(common):
        common = materialise_if_alternates(common, fsroot, private, dropped, names)
        (copy / "commondir").write_text(f"{common}\n")
    else:
        missing.append((here + "/commondir", line))
    checkout = _first_line(gitdir / "gitdir")
    if (copy / "gitdir").exists():
        (copy / "gitdir").unlink()
    if checkout:
        target = inside(fsroot, checkout if checkout.startswith("/") else posixpath.normpath(here + "/" + checkout))
        if target is not None:
            (copy / "gitdir").write_text(f"{target}\n")
        else:
            missing.append((here + "/gitdir", checkout))
    return copy
