"""A fake of the Hub for tests: local folders laid out like Hub dataset repos, served through an fsspec
filesystem with HfFileSystem's paths (`datasets/owner/name@<sha>/file`), and a Hub cache folder laid out as
huggingface_hub writes it (for HF_HUB_OFFLINE=1). No network."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from fsspec.implementations.local import LocalFileSystem


class FakeHubFileSystem(LocalFileSystem):
    """Repos are folders `root/<owner>/<name>/<sha>/…`; `refs` maps (repo, branch or tag) → sha.

    Paths are HfFileSystem's: `datasets/<owner>/<name>@<revision>/<path in repo>`. `opened` lists the
    files opened (to check projection reads only the files asked for).
    """

    def __init__(self, root: Path, refs: dict[tuple[str, str], str]) -> None:
        super().__init__()
        self.root = Path(root)
        self.refs = refs
        self.opened: list[str] = []

    def resolve_revision(self, repo_id: str, revision: str | None) -> str | None:
        return self.refs.get((repo_id, revision or "main"))

    def _local(self, path: str) -> str:
        path = str(path).removeprefix("hf://").removeprefix("datasets/")
        repo_rev, _, inner = path.partition("@")
        sha, _, rest = inner.partition("/")
        local = self.root / repo_rev / sha
        if not local.is_dir():
            raise FileNotFoundError(path)
        return str(local / rest) if rest else str(local)

    def find(self, path, maxdepth=None, withdirs=False, detail=False, **kwargs):
        local = self._local(path)
        prefix = str(path).rstrip("/")
        out = {}
        for file in sorted(Path(local).rglob("*")):
            if file.is_file():
                rel = file.relative_to(local).as_posix()
                data = file.read_bytes()
                info = {"name": f"{prefix}/{rel}", "size": len(data), "type": "file"}
                if file.suffix in (".parquet", ".gz", ".zst"):
                    info["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                out[f"{prefix}/{rel}"] = info
        return out if detail else sorted(out)

    def cat_file(self, path, start=None, end=None, **kwargs):
        # LocalFileSystem.cat_file opens through `self.open`, which maps the path once more (and failed)
        return Path(self._local(path)).read_bytes()[start:end]

    def open(self, path, mode="rb", **kwargs):
        self.opened.append(str(path))
        return open(self._local(path), mode)


def make_repo(root: Path, repo_id: str, files: dict[str, Path | bytes], sha: str = "a" * 40) -> Path:
    """A repo folder for FakeHubFileSystem: `files` maps a path in the repo to a local file or bytes."""
    folder = root / repo_id / sha
    for name, content in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            shutil.copyfile(content, target)
    return folder


def make_hub_cache(cache: Path, repo_id: str, files: dict[str, Path | bytes], sha: str,
                   refs: tuple[str, ...] = ("main",)) -> Path:
    """A Hub cache folder as huggingface_hub writes it: `datasets--owner--name/{refs/<ref>, blobs/<sha256>,
    snapshots/<sha>/<file> → ../../blobs/<sha256>}`."""
    repo = cache / f"datasets--{repo_id.replace('/', '--')}"
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    for ref in refs:
        (repo / "refs" / ref).write_text(sha)
    snapshot = repo / "snapshots" / sha
    for name, content in files.items():
        data = content if isinstance(content, bytes) else Path(content).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / digest).write_bytes(data)
        target = snapshot / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(repo / "blobs" / digest, target.parent), target)
    return snapshot
