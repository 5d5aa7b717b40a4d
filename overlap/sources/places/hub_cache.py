"""A Hub cache snapshot read offline, checked complete for the files about to be read.

The cache has no list of a repo's files: a snapshot folder holds links to the blobs that were downloaded. A
download cut short, or a blob deleted to save space, leaves a snapshot that lists fewer files (or links to
blobs that are gone), and reading what is there would give a part of the dataset as if it were the whole. Two
signs are certain without the network: a link whose blob is missing, and a set of shards named
`<name>-<i>-of-<n>` (the Hub's own naming) with some of the n absent. Either is an error naming the file.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ...errors import HubUnavailableError
from ...words import plural, verb

# `train-00000-of-00002.parquet`, `data/test-00001-of-00004-5b3c1a.parquet` (older conversions add a hash): the
# Hub's five-digit numbering, index and total of one width; a name like `pass-1-of-5.jsonl` is no shard set
_COMMIT = re.compile(r"[0-9a-f]{40}")
_BLOB = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_CHECKED: set[tuple[str, int, int]] = set()  # blobs found whole in this process (path, size, mtime)
_SHARD = re.compile(r"^(?P<head>.*?)(?P<index>\d{5,})-of-(?P<total>\d{5,})(?P<tail>[^/]*)$")


def cached_revisions(cache_dir: str | None, repo_id: str) -> list[str]:
    """The commits the Hub cache (`cache_dir`, default huggingface_hub's) holds a snapshot of for the dataset
    `repo_id`: a revision asked for by a name the cache has no ref for may be one of them, downloaded by sha."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    folder = Path(cache_dir or constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="dataset")
    try:
        return sorted(p.name for p in (folder / "snapshots").iterdir() if p.is_dir() and _COMMIT.fullmatch(p.name))
    except OSError:
        return []


def snapshot_names(folder: Path) -> list[str]:
    """Repo-relative names of the files of a cached snapshot, links to missing blobs included (sorted)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() or (p.is_symlink() and not p.exists()))


def missing_shards(names: list[str]) -> list[str]:
    """The shards absent from each `<name>-<i>-of-<n>` set that `names` holds some of, named as the present
    ones are (a hash part that differs between shards is shown as `*`); past five of a set, one line counts
    the rest."""
    sets: dict[tuple[str, str, str], dict[int, tuple[int, str]]] = {}
    for name in names:
        folder, _, base = name.rpartition("/")
        match = _SHARD.match(base)
        if match and len(match["index"]) == len(match["total"]) and int(match["index"]) <= int(match["total"]):
            key = (folder, match["head"], match["total"])
            sets.setdefault(key, {})[int(match["index"])] = (len(match["index"]), match["tail"])
    out = []
    for (folder, head, total_text), present in sorted(sets.items()):
        total = int(total_text)
        # numbered from 0 (the Hub's own) or from 1 (some uploaders): a shard numbered `total` says from 1. With
        # neither shard 0 nor shard `total`, a shard is missing either way: named as the Hub numbers them
        first = 1 if total in present else 0
        expected = range(first, first + total)
        inside = sum(1 for index in present if index in expected)
        if inside == len(expected):
            continue
        width = next(iter(present.values()))[0]
        tails = {tail for _, tail in present.values()}
        tail = tails.pop() if len(tails) == 1 else "*" + Path(next(iter(tails))).suffix
        prefix = f"{folder}/" if folder else ""
        shown = []
        index = expected.start
        # stops after five: a hostile `-of-<n>` never makes a walk as long as n
        while index < expected.stop and len(shown) < 5:
            if index not in present:
                shown.append(f"{prefix}{head}{index:0{width}d}-of-{total_text}{tail}")
            index += 1
        out.extend(shown)
        rest = len(expected) - inside - len(shown)
        if rest:
            out.append(f"{plural(rest, 'more shard')} of {prefix}{head}*-of-{total_text}")
    return out


def check_snapshot(folder: Path, names: list[str], repo_id: str) -> None:
    """Refuse reading `names` (repo-relative) from the cached snapshot `folder` when one of them links to a
    missing blob or a shard of their `-of-<n>` sets is not cached: an HubUnavailableError naming the file and
    saying how to fill the cache."""
    dangling = [n for n in names if not (folder / n).exists()]
    absent = missing_shards(names)
    if not dangling and not absent:
        return
    where = f"{repo_id}@{folder.name[:12]}"
    if dangling:
        what = (f"{', '.join(dangling[:3])}{' …' if len(dangling) > 3 else ''} "
                f"{verb(len(dangling), 'links', 'link')} to a blob that is not there")
    else:
        shown = ", ".join(absent[:3]) + (" …" if len(absent) > 3 else "")
        what = f"{shown} {verb(len(absent), 'is', 'are')} not cached beside the other shards of " \
               f"{verb(len(absent), 'its', 'their')} set"
    raise HubUnavailableError(
        f"{where}: the Hub cache is incomplete ({what}: an interrupted or partly deleted download), and reading "
        f"the rest would leave those rows out; run once with internet (without HF_HUB_OFFLINE) to download "
        f"{repo_id} again, or pass --data NAME=DIR with a folder holding every file")


def check_blob(path: Path, name: str, where: str) -> None:
    """Refuse a cached text file whose bytes are not the blob its name says (`blobs/<sha256>` for an LFS file,
    `blobs/<git sha1>` for another): a JSON lines or CSV blob cut short at a line end reads as fewer rows without
    any error. A parquet file is not hashed: it cannot be read without its footer, which is at its end."""
    real = Path(os.path.realpath(path))
    if name.lower().endswith(".parquet") or not _BLOB.fullmatch(real.name):
        return
    try:
        stat = real.stat()
    except OSError:
        return  # the reader reports it, naming the file
    key = (str(real), stat.st_size, stat.st_mtime_ns)
    if key in _CHECKED:
        return
    # a 64-hex name is an LFS file's sha256; a 40-hex one the git blob id (the Hub's ETag), or, from a server
    # that names files by a plain sha1, that: either way the bytes must give the name
    digests = [hashlib.sha256()] if len(real.name) == 64 else [hashlib.sha1(b"blob %d\0" % stat.st_size),
                                                               hashlib.sha1()]
    with open(real, "rb") as handle:
        for block in iter(lambda: handle.read(4 << 20), b""):
            for digest in digests:
                digest.update(block)
    if all(digest.hexdigest() != real.name for digest in digests):
        raise HubUnavailableError(
            f"{where}: {name} in the Hub cache is not the file that was downloaded (its blob {real.name[:12]}… holds "
            f"other bytes: cut short or overwritten), so rows would be lost; delete {real} and run once with "
            "internet (without HF_HUB_OFFLINE) to download it again, or pass --data NAME=DIR with a folder holding "
            "every file")
    _CHECKED.add(key)
