"""Records of the patch evidence: FilePatch, ParsedPatch, PatchRelation, and hash comparison."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

#: Patches longer than this (characters, after decoding) are not parsed: status `too_large`.
DEFAULT_MAX_CHARS = 5_000_000


#: Shortest abbreviated blob hash that is compared.
MIN_HASH_LEN = 7


RELATIONS = ("identical", "contains", "contained", "partly_identical", "different", "not_comparable")


#: Relations that mean "the two items share a fix".
FIX_RELATIONS = ("identical", "contains", "contained")


METHODS = ("blobs", "changed_lines", "none")


#: Values of `ParsedPatch.status`; everything but `ok` makes every relation `not_comparable`.
PATCH_STATUSES = ("ok", "missing", "empty", "no_diff", "unparseable", "too_large", "binary")


# --------------------------------------------------------------------------------------------- records
@dataclass(frozen=True, eq=False)
class FilePatch:
    """One file entry of a patch.

    `path` is the key files are matched on: the post-image path, or the pre-image path for a deleted
    file, without the `a/` / `b/` prefixes. `removed` / `added` are multisets of trimmed non-blank
    changed lines. Blobs are lowercase hex as written (abbreviated or full), `None` when the entry has
    no `index` line (or an unusable one).
    """

    path: str
    change: str  # modified | added | deleted | renamed | copied | mode_only
    old_path: str | None = None
    new_path: str | None = None
    pre_blob: str | None = None
    post_blob: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False
    hunks: int = 0
    removed: Counter = field(default_factory=Counter)
    added: Counter = field(default_factory=Counter)

    @property
    def has_blobs(self) -> bool:
        return usable_hash(self.pre_blob) and usable_hash(self.post_blob)

    @property
    def content_free(self) -> bool:
        """A rename, copy, mode change or empty-file entry: no hunks and not binary."""
        return self.hunks == 0 and not self.binary

    def _meta(self) -> tuple:
        renamed_from = self.old_path if self.change in ("renamed", "copied") else None
        return ("meta", self.change, renamed_from, self.new_mode)


@dataclass(frozen=True, eq=False)
class ParsedPatch:
    """A patch parsed once. `status` is one of PATCH_STATUSES; `reason` says why it is not `ok`."""

    status: str
    reason: str = ""
    files: tuple[FilePatch, ...] = ()
    chars: int = 0
    by_path: Mapping[str, FilePatch] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(self.by_path)

    @property
    def has_index_lines(self) -> bool:
        return any(f.has_blobs for f in self.files)


@dataclass(frozen=True)
class PatchRelation:
    """How patch `a` relates to patch `b`.

    relation: one of RELATIONS (`contains` = a's files strictly include b's; `contained` = the reverse).
    method: `blobs` when every decided shared file was compared on index hashes, `changed_lines` when
    at least one had to be compared on changed lines, `none` when nothing was compared.
    reason: `code: detail`; the code (see `reason_code`) is machine-readable, e.g. `missing`,
    `unparseable`, `no_shared_file`, `no_index_lines`, `no_comparable_content`, `compared`.
    """

    relation: str
    method: str
    reason: str
    shared_files: int = 0
    equal_files: int = 0
    a_files: int = 0
    b_files: int = 0

    @property
    def shares_fix(self) -> bool:
        return self.relation in FIX_RELATIONS

    @property
    def reason_code(self) -> str:
        return self.reason.split(":", 1)[0]


# --------------------------------------------------------------------------------------------- parsing
def usable_hash(value: str | None) -> bool:
    return value is not None and len(value) >= MIN_HASH_LEN


def hashes_match(a: str | None, b: str | None) -> bool:
    """Two (possibly abbreviated) hashes agree on their common prefix of at least MIN_HASH_LEN hex."""
    if not (usable_hash(a) and usable_hash(b)):
        return False
    n = min(len(a), len(b))  # type: ignore[arg-type]
    return a[:n] == b[:n]  # type: ignore[index]


_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's hash of an empty file


def empty_blob(value: str) -> bool:
    """All-zero (no file) or git's empty-file blob."""
    return not value.strip("0") or (len(value) >= MIN_HASH_LEN and _EMPTY_BLOB.startswith(value))


def failed_patch(status: str, reason: str, chars: int = 0) -> ParsedPatch:
    return ParsedPatch(status=status, reason=reason, chars=chars)
