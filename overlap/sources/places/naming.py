"""How a place and its files are named: which names are data files (`DataFile`, `data_format`), what a Hub id
`owner/name[:config][@revision]` or a `file://` URI names, and which files belong to a split by their names."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ...errors import InputError

DATA_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv")
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}
HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?::(?P<config>[\w.-]+))?(?:@(?P<revision>[^\s@:]+))?$",
                    re.ASCII)


@dataclass(frozen=True)
class DataFile:
    """One file to read: `path` as the filesystem names it, `name` as the provenance records it."""

    path: str
    name: str
    sha256: str | None = None  # known without reading the file (a Hub LFS file), else computed when local


def data_format(name: str) -> tuple[str, str | None]:
    """(format, compression) of a file name: `x.jsonl.gz` → (`jsonl`, `gzip`); ("", None) if not data."""
    lower = name.lower()
    compression = None
    for suffix, codec in COMPRESSIONS.items():
        if lower.endswith(suffix):
            lower, compression = lower[: -len(suffix)], codec
    for suffix in DATA_SUFFIXES:
        if lower.endswith(suffix):
            return suffix[1:], compression
    return "", None


def is_data_file(name: str) -> bool:
    return bool(data_format(name)[0])


def parse_hub_id(text: str) -> tuple[str, str | None, str | None] | None:
    """`owner/name[:config][@revision]` (also `owner/name@revision:config`) → (repo, config, revision)."""
    text = text.strip().removeprefix("hf://datasets/").removeprefix("datasets/")
    match = HUB_ID.match(text)
    if not match:
        swapped = re.match(r"^(?P<repo>[^@:\s]+/[^@:\s]+)@(?P<revision>[^\s@:]+):(?P<config>[\w.-]+)$", text)
        if not swapped:
            return None
        match = swapped
    if not all(_HUB_NAME.match(part) for part in match["repo"].split("/")):
        return None
    return match["repo"], match["config"], match["revision"]


# One part of a Hub repo id as the Hub allows it (huggingface_hub.utils.validate_repo_id): ASCII letters, digits,
# `-`, `_`, `.`, no `--` or `..`, not starting or ending with `-` or `.`, at most 96 characters.
_HUB_NAME = re.compile(r"^(?!.*(?:--|\.\.))[A-Za-z0-9_](?:[\w.-]{0,94}[A-Za-z0-9_])?$", re.ASCII)


def file_uri_path(text: str) -> str:
    """The local path a `file://` URI names (`file:///data/x.jsonl`, `file://localhost/...`); other text as is."""
    if not text[:7].lower() == "file://":
        return text
    parts = urllib.parse.urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise InputError(f"{text}: a file:// URI of another host ({parts.netloc}); give a local path (file:///path)")
    return urllib.parse.unquote(parts.path)


def split_matches(name: str, split: str) -> bool:
    """Whether a repo-relative file belongs to `split` by the Hub's naming conventions: a folder of that
    name (`train/…`), or a file name starting with it (`train-00000-of-00001.parquet`, `test.csv`)."""
    parts = name.lower().split("/")
    split = split.lower()
    if split in parts[:-1]:
        return True
    return re.match(rf"^{re.escape(split)}(?:[-_.]|$)", parts[-1]) is not None


def _by_split(names: list[tuple[Any, str]], split: str | None, where: str) -> list[tuple[Any, str]]:
    if split is None:
        return names
    chosen = [(p, n) for p, n in names if split_matches(n, split)]
    if not chosen and names:
        raise InputError(f"{where}: no file of split '{split}' (a folder '{split}/' or files named '{split}-…', "
                         f"'{split}.…'); files: {', '.join(n for _, n in names[:8])}")
    return chosen
