"""The task's folder and its source when the environment holds no Git repository.

Cyber task images (ARVO-, CyberGym-style) ship a vulnerable build and its source as a tree or a tarball, often
without `.git`; SWE-style images may ship no history at all. The task's folder is then looked for where the
repository would be (``--repo-path``, the image's working folder, the known places), and the base version of a
file the fix changes is read from that tree, or from a source tarball beside it, so ``--fix`` still gives the
fixed content to look for."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .content.archives import ARCHIVE_SUFFIXES, members
from .targets import ROOTFS_REPOS, inside
from .tree import TooLarge, is_dir, list_dir, read_regular

# where a task without git keeps its source or build: the repository places first, then the cyber ones
# (a project folder of /src before /src itself: OSS-Fuzz-style images keep one project there)
TASK_PLACES = (*(p for p in ROOTFS_REPOS if p != "/src"), "/src/*", "/src", "/out", "/tmp")
# folders of /src that are toolchains, never the task (OSS-Fuzz base-builder images hold these)
_NOT_TASKS = frozenset({"aflplusplus", "libfuzzer", "honggfuzz", "centipede", "llvm-project", "libufuzzer"})
# a tarball whose name says it holds the fixed code is never the base
_FIX_WORDS = ("fix", "patched", "solution", "gold")


def find_task_folder(fsroot: Path, repo_path: str | None, workdir: str | None) -> tuple[Path | None, str | None]:
    """(host folder, image path) of the task in a root filesystem with no repository; (None, None) when none of
    the places holds anything."""
    if repo_path:
        d = inside(fsroot, repo_path)
        if d is None or not is_dir(d):
            raise InputError(f"--repo-path {repo_path}: no such folder inside the image or root filesystem")
        return d, "/" + repo_path.strip("/")
    places = ([workdir] if workdir and workdir.strip("/") else []) + list(TASK_PLACES)
    for cand in places:
        if cand.endswith("/*"):
            parent = inside(fsroot, cand[:-2])
            names = sorted(e.name for e in list_dir(parent)) if parent is not None and is_dir(parent) else []
            paths = [f"{cand[:-2]}/{n}" for n in names if n.lower() not in _NOT_TASKS]
        else:
            paths = [cand]
        for ip in paths:
            d = inside(fsroot, ip)
            if d is not None and is_dir(d) and list_dir(d):
                return d, "/" + ip.strip("/")
    return None, None


def _tarballs(root: Path) -> list[Path]:
    """Source archives in the task folder and beside it, those named as fixed code left out."""
    out: list[Path] = []
    for folder in (root, root.parent):
        for e in list_dir(folder) if is_dir(folder) else ():
            low = e.name.lower()
            if low.endswith(ARCHIVE_SUFFIXES) and not any(w in low for w in _FIX_WORDS) and e.is_file(
                    follow_symlinks=False):
                out.append(Path(e.path))
    return sorted(out)


class SourceTree:
    """Reads the base version of a task path from the task folder, else from a source tarball the task ships
    (the member whose path, less its top folder, is the task path)."""

    def __init__(self, root: Path | None, limit: int):
        self.root = root
        self.limit = limit
        self._members: dict[str, bytes] | None = None
        self.prefer_tarball = False  # read a source tarball's member before the tree's file
        self.sources: dict[str, str] = {}  # task path -> where its base was read (a file or tarball!/member)

    def read(self, path: str) -> bytes | None:
        if self.root is None:
            return None
        if self.prefer_tarball and path in self._tarball_members():
            return self._tarball_members()[path]
        try:
            data = read_regular(self.root / path, self.limit)
        except TooLarge:
            data = None
        if data is not None:
            self.sources[path] = path
            return data
        got = self._tarball_members().get(path)
        return got

    def _tarball_members(self) -> dict[str, bytes]:
        if self._members is None:
            self._members = {}
            for tarball in _tarballs(self.root):
                for name, data in members(tarball, self.limit):
                    inner = name.rpartition("!/")[2]
                    parts = inner.strip("/").split("/")
                    for rel in ("/".join(parts), "/".join(parts[1:])):
                        if data is not None and rel and rel not in self._members:
                            self._members[rel] = data
                            self.sources.setdefault(rel, f"{tarball.name}!/{inner}")
        return self._members
