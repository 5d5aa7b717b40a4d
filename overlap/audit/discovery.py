"""Target discovery: what a local input holds to audit (its kind, its repositories, an image's view).

A folder, a folder of repositories, a root filesystem or an image archive becomes a list of targets
(worktree, git folder, path in the image); an image is merged and materialised into the private folder
first. An input whose repository is gone missing is refused (exit 2), never audited as a task without git.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import InputError
from .content.archives import read_when_large
from .git.guard import kind_of
from .image.archive import open_image
from .image.layers import merge
from .image.materialise import _in_git, materialise
from .image.model import LimitHit
from .source import find_task_folder
from .targets import ROOTFS_REPOS, detect_kind, discover_repos, find_rootfs_repo, inside, repo_layout
from .tree import TooLarge, is_dir, read_regular
from .wording import cut


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
