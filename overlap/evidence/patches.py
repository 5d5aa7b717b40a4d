"""Fix patches: parse unified (git) diffs once, then say how two patches relate.

A patch is reduced to one `FilePatch` per touched file: the (pre, post) blob hashes from its `index`
line, and the changed lines (removed / added, whitespace-trimmed, blank lines dropped) as multisets.
`relate_patches(a, b)` compares two parsed patches file by file:

- per shared file, by blobs when both sides have usable hashes (abbreviated hashes are compared on
  their common prefix, at least 7 hex digits), else by the changed-line multisets (the fallback);
- then on the file sets: `identical` (same files, every one equal), `contains` / `contained` (one
  side's files are a strict subset of the other's and every shared file is equal), `partly_identical`
  (some shared files equal, but not the above), `different` (no shared file equal), `not_comparable`
  (a side is missing/empty/unparseable/too large, no shared file, or nothing comparable).

A strict subset is never `identical`, and a patch that could not be parsed completely (truncated hunk,
garbage inside a hunk, binary junk, over the size cap) is `not_comparable` with the reason, so bad
input can never produce a false `identical`.

Parsing is the expensive step: parse each item's patch once (`parse_patch`, or a `PatchBook` that
caches by item id) and relate the parsed objects; `relate_patches` never re-parses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from ..words import plural
from .diff_parse import parse_patch
from .patch_model import (
    DEFAULT_MAX_CHARS,
    FIX_RELATIONS,
    METHODS,
    MIN_HASH_LEN,
    PATCH_STATUSES,
    RELATIONS,
    FilePatch,
    ParsedPatch,
    PatchRelation,
    failed_patch,
    hashes_match,
)


# --------------------------------------------------------------------------------------------- relating
def _compare_file(fa: FilePatch, fb: FilePatch, use_lines: bool) -> tuple[bool | None, str]:
    """(equal?, method) for one shared file; equal is None when it cannot be decided."""
    if fa.has_blobs and fb.has_blobs:
        return hashes_match(fa.pre_blob, fb.pre_blob) and hashes_match(fa.post_blob, fb.post_blob), "blobs"
    if fa.content_free and fb.content_free and fa.pre_blob is None and fb.pre_blob is None:
        return fa._meta() == fb._meta(), "blobs"  # no content change on either side: headers decide
    if not use_lines:
        return None, "none"
    if fa.binary or fb.binary:
        return None, "none"
    la = fa._meta() if fa.content_free else (fa.removed, fa.added)
    lb = fb._meta() if fb.content_free else (fb.removed, fb.added)
    if (not fa.content_free and not (fa.removed or fa.added)) or (
        not fb.content_free and not (fb.removed or fb.added)
    ):
        return None, "none"  # whitespace-only hunks: nothing to compare
    return la == lb, "changed_lines"


def relate_patches(
    a: ParsedPatch | object,
    b: ParsedPatch | object,
    *,
    use_lines: bool = True,
    sides: tuple[str, str] = ("a", "b"),
) -> PatchRelation:
    """Relation of patch `a` to patch `b` (see the module docstring).

    Pass ParsedPatch objects (parse each item once); anything else is parsed here with parse_patch.
    `use_lines=False` disables the changed-lines fallback: files without index lines are then
    undecided, and a pair with nothing else is `not_comparable` (`no_index_lines`). `sides` names the
    two patches in the reason text (e.g. `("train", "bench")`).
    """
    a, b = parse_patch(a), parse_patch(b)
    for side, p in zip(sides, (a, b), strict=True):
        if not p.ok:
            return PatchRelation("not_comparable", "none", f"{p.status}: {side} patch: {p.reason}")
    shared = sorted(a.paths & b.paths)
    counts = {"a_files": len(a.files), "b_files": len(b.files)}
    if not shared:
        return PatchRelation(
            "not_comparable", "none", "no_shared_file: the patches touch no common file", **counts
        )
    equal = differ = 0
    methods: set[str] = set()
    undecided: list[str] = []
    same_lines_other_base = 0
    for path in shared:
        fa, fb = a.by_path[path], b.by_path[path]
        outcome, method = _compare_file(fa, fb, use_lines)
        if outcome is None:
            undecided.append(path)
            continue
        methods.add(method)
        if outcome:
            equal += 1
        else:
            differ += 1
            if (
                method == "blobs"
                and fa.hunks
                and fb.hunks
                and (fa.removed, fa.added) == (fb.removed, fb.added)
            ):
                same_lines_other_base += 1
    n = len(shared)
    counts |= {"shared_files": n, "equal_files": equal}
    method = "changed_lines" if "changed_lines" in methods else ("blobs" if methods else "none")
    if equal == 0 and differ == 0:
        if not use_lines:
            code = "no_index_lines: shared files lack usable index lines (changed-lines fallback off)"
        else:
            code = "no_comparable_content: shared files are binary or whitespace-only without index lines"
        return PatchRelation("not_comparable", "none", code, **counts)
    detail = f"{equal} of {plural(n, 'shared file')} equal; {sides[0]} has {len(a.files)}, "
    detail += f"{sides[1]} has {plural(len(b.files), 'file')}"
    if undecided:
        detail += f"; {len(undecided)} undecided ({undecided[0]}{', ...' if len(undecided) > 1 else ''})"
    if same_lines_other_base:
        detail += f"; {plural(same_lines_other_base, 'file')} with other blobs but the same changed lines"
    reason = f"compared: {detail}"
    if equal == 0:
        return PatchRelation("different", method, reason, **counts)
    if equal < n:
        return PatchRelation("partly_identical", method, reason, **counts)
    a_only, b_only = len(a.paths) - n, len(b.paths) - n
    if a_only == 0 and b_only == 0:
        relation = "identical"
    elif b_only == 0:
        relation = "contains"
    elif a_only == 0:
        relation = "contained"
    else:
        relation = "partly_identical"
    return PatchRelation(relation, method, reason, **counts)


# --------------------------------------------------------------------------------------------- caching
PatchSource = Mapping[str, object] | Callable[[str], object]


class PatchBook:
    """Parsed patches by item id, each parsed at most once.

    `source` maps an item id to its patch: str, bytes, ParsedPatch, None, or a fetched file with
    `.text` and `.reason` (`sources.places.taskfiles.TaskFile`). It is a mapping, or a callable for lazy
    fetching; a callable may return None or raise KeyError/LookupError/OSError when the item has no
    patch, which becomes status `missing` with the error as reason. `parses` counts parse_patch calls.
    """

    def __init__(self, source: PatchSource, *, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        self._source = source
        self._max_chars = max_chars
        self._cache: dict[str, ParsedPatch] = {}
        self.parses = 0

    @classmethod
    def from_items(cls, items, column: str = "patch", *, max_chars: int = DEFAULT_MAX_CHARS) -> PatchBook:
        """From an Items table (`item_id` + `column`); a missing column makes every patch `missing`."""
        if column not in items.columns:
            return cls({}, max_chars=max_chars)
        return cls(dict(zip(items["item_id"].astype(str), items[column], strict=True)), max_chars=max_chars)

    def get(self, item_id: str) -> ParsedPatch:
        cached = self._cache.get(item_id)
        if cached is not None:
            return cached
        try:
            raw = self._source(item_id) if callable(self._source) else self._source.get(item_id)
        except (LookupError, OSError) as exc:
            parsed = failed_patch("missing", f"{type(exc).__name__}: {exc}")
        else:
            if isinstance(raw, ParsedPatch):
                parsed = raw
            else:
                self.parses += 1
                parsed = parse_patch(raw, max_chars=self._max_chars)
        self._cache[item_id] = parsed
        return parsed

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._cache

    def statuses(self) -> Counter:
        """How many of the patches read so far have each status."""
        return Counter(p.status for p in self._cache.values())


__all__ = [
    "DEFAULT_MAX_CHARS", "FIX_RELATIONS", "METHODS", "MIN_HASH_LEN", "PATCH_STATUSES", "RELATIONS",
    "FilePatch", "ParsedPatch", "PatchBook", "PatchRelation", "PatchSource", "hashes_match", "parse_patch",
    "relate_patches",
]  # fmt: skip
