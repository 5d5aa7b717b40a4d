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

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

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

_HEX_RE = re.compile(r"[0-9a-f]+")
_INDEX_RE = re.compile(r"^index ([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)(?: +(\d+))?\s*$")
_GIT_HEADER = "diff --git "
_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.MULTILINE)


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
        return _usable_hash(self.pre_blob) and _usable_hash(self.post_blob)

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
def _usable_hash(value: str | None) -> bool:
    return value is not None and len(value) >= MIN_HASH_LEN


def hashes_match(a: str | None, b: str | None) -> bool:
    """Two (possibly abbreviated) hashes agree on their common prefix of at least MIN_HASH_LEN hex."""
    if not (_usable_hash(a) and _usable_hash(b)):
        return False
    n = min(len(a), len(b))  # type: ignore[arg-type]
    return a[:n] == b[:n]  # type: ignore[index]


_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's hash of an empty file


def _empty_blob(value: str) -> bool:
    """All-zero (no file) or git's empty-file blob."""
    return not value.strip("0") or (len(value) >= MIN_HASH_LEN and _EMPTY_BLOB.startswith(value))


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ == "NAType"  # pandas.NA, without importing pandas


def _fail(status: str, reason: str, chars: int = 0) -> ParsedPatch:
    return ParsedPatch(status=status, reason=reason, chars=chars)


def _decode(value: object) -> str | ParsedPatch:
    if isinstance(value, bytes | bytearray):
        if b"\x00" in value:
            return _fail("binary", "NUL bytes in patch data", len(value))
        text = bytes(value).decode("utf-8", errors="replace")
        if text.count("\ufffd") > max(8, len(text) // 100):
            return _fail("binary", "patch data is not UTF-8 text", len(value))
        return text
    if isinstance(value, str):
        return value
    return _fail("unparseable", f"patch is a {type(value).__name__}, not text")


def parse_patch(value: object, *, max_chars: int = DEFAULT_MAX_CHARS) -> ParsedPatch:
    """Parse one patch (str, bytes, or a fetched file with `.text`/`.reason`; None/NaN or a file
    whose text is None = missing). Never raises on bad input.

    Handles git diffs (renames, copies, new/deleted files, mode-only and binary entries, quoted paths
    and paths with spaces, `index` lines with or without mode, `git show`/`format-patch` wrappers,
    several commits concatenated), plain and Mercurial unified diffs (no `index` lines), and CRLF.
    """
    if isinstance(value, ParsedPatch):
        return value
    if hasattr(value, "text") and hasattr(value, "reason"):  # a fetched per-item file (sources.TaskFile)
        if value.text is None:  # type: ignore[attr-defined]
            return _fail("missing", value.reason or "no patch file")  # type: ignore[attr-defined]
        value = value.text  # type: ignore[attr-defined]
    if _is_missing(value):
        return _fail("missing", "no patch text")
    text = _decode(value)
    if isinstance(text, ParsedPatch):
        return text
    chars = len(text)
    if chars > max_chars:
        return _fail("too_large", f"{chars} characters > cap {max_chars}; not parsed", chars)
    if not text.strip():
        return _fail("empty", "patch text is blank", chars)
    if "\x00" in text:
        return _fail("binary", "NUL characters in patch text", chars)
    text = text.replace("\r\n", "\n")
    try:
        entries = _parse_text(text)
    except _PatchError as exc:
        return _fail("unparseable", str(exc), chars)
    except Exception as exc:  # noqa: BLE001 - bad input must never crash a comparison
        return _fail("unparseable", f"{type(exc).__name__}: {exc}", chars)
    if not entries:
        return _fail("no_diff", "no file entry found in the text", chars)
    files = _merge_entries(entries)
    by_path = {f.path: f for f in files}
    return ParsedPatch(status="ok", files=tuple(files), chars=chars, by_path=by_path)


class _PatchError(Exception):
    pass


def _lines_with_ends(text: str) -> list[str]:
    # str.splitlines would also split on \x0b, \x1c, \u2028 ... which can occur inside diff lines.
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1] + "\n")
    return out


def _parse_text(text: str) -> list[FilePatch]:
    lines = _lines_with_ends(text)
    starts = [i for i, line in enumerate(lines) if line.startswith(_GIT_HEADER)]
    if any(line.startswith(("diff --cc ", "diff --combined ")) for line in lines):
        raise _PatchError("combined (merge) diff is not supported")
    entries: list[FilePatch] = []
    preamble = lines[: starts[0]] if starts else lines
    # Non-git unified diffs (plain `diff -u`, Mercurial): let unidiff find the files. For git text the
    # preamble is a commit message; only parse it if it holds hunks of its own.
    if not starts or _HUNK_RE.search("".join(preamble)) or any(x.startswith("Binary file") for x in preamble):
        entries.extend(_from_unidiff(preamble))
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        entries.extend(_parse_git_section(lines[start:end]))
    return entries


# -- git sections -----------------------------------------------------------------------------------
_EXT_HEADERS = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "similarity index ",
    "dissimilarity index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "index ",
)


def _parse_git_section(section: list[str]) -> list[FilePatch]:
    header = section[0].rstrip("\n")
    info: dict[str, str] = {}
    blobs: tuple[str, str] | None = None
    binary = False
    body_start = len(section)
    for i, raw in enumerate(section[1:], start=1):
        line = raw.rstrip("\n")
        if line.startswith(("--- ", "+++ ", "@@ ")):
            body_start = i
            break
        if line.startswith(("Binary files ", "GIT binary patch")):
            binary = True
            body_start = len(section)
            break
        for prefix in _EXT_HEADERS:
            if line.startswith(prefix):
                value = line[len(prefix) :].strip()
                if prefix == "index ":
                    m = _INDEX_RE.match(line)
                    if m:
                        blobs = (m.group(1).lower(), m.group(2).lower())
                        if m.group(3):
                            info.setdefault("mode", m.group(3))
                else:
                    info[prefix.strip()] = value
                break
        # Any other line (a commit message between concatenated commits, a format-patch signature
        # after a hunk-less entry) belongs to no file and is skipped.

    old_path, new_path = _git_header_paths(header[len(_GIT_HEADER) :])
    renamed_from = info.get("rename from") or info.get("copy from")
    renamed_to = info.get("rename to") or info.get("copy to")
    if renamed_from:
        old_path = _unquote(renamed_from)
    if renamed_to:
        new_path = _unquote(renamed_to)

    hunk_files: list = []
    if body_start < len(section):
        # unidiff's `Binary files` pattern backtracks badly on long lines; here such a line is junk.
        body = "".join("#\n" if x.startswith("Binary file") else x for x in section[body_start:])
        try:
            hunk_files = list(PatchSet(body))
        except UnidiffParseError as exc:
            raise _PatchError(f"{header}: {exc}") from None
        if len(hunk_files) > 1:
            raise _PatchError(f"git entry '{header}' holds more than one file")
    removed, added, hunks = _changed_lines(hunk_files[0]) if hunk_files else (Counter(), Counter(), 0)
    if hunk_files:
        pf = hunk_files[0]
        src = _strip_prefix(_unquote(pf.source_file), "a/") if pf.source_file != "/dev/null" else None
        tgt = _strip_prefix(_unquote(pf.target_file), "b/") if pf.target_file != "/dev/null" else None
        if not renamed_from and src:
            old_path = src
        if not renamed_to and tgt:
            new_path = tgt
        binary = binary or pf.is_binary_file

    if "new file mode" in info:
        change = "added"
    elif "deleted file mode" in info:
        change = "deleted"
    elif renamed_from and "rename from" in info:
        change = "renamed"
    elif renamed_from:
        change = "copied"
    elif hunks == 0 and not binary and blobs is None and ("old mode" in info or "new mode" in info):
        change = "mode_only"
    else:
        change = "modified"

    if change == "modified" and hunks == 0 and not binary and blobs is None and not info:
        # A `diff --git` line (perhaps with ---/+++) and nothing else: a truncated entry.
        raise _PatchError(f"git entry '{header}' has no content (truncated?)")
    if old_path is None and new_path is None:
        raise _PatchError(f"cannot tell the file of git entry '{header}'")
    if blobs and hunks == 0 and not binary and blobs[0] != blobs[1] and not all(map(_empty_blob, blobs)):
        # git prints hunks for every content change it can show as text; an index change without
        # them is a diff cut short after the header.
        raise _PatchError(f"git entry '{header}' changes content but has no hunks (truncated?)")

    old_mode = info.get("old mode") or info.get("deleted file mode") or info.get("mode")
    new_mode = info.get("new mode") or info.get("new file mode") or info.get("mode")
    if change == "added":
        old_mode = None
    if change == "deleted":
        new_mode = None
    pre, post = blobs if blobs else (None, None)
    path = (new_path if change != "deleted" else old_path) or old_path or new_path
    return [
        FilePatch(
            path=path,  # type: ignore[arg-type]
            change=change,
            old_path=old_path if change != "added" else None,
            new_path=new_path if change != "deleted" else None,
            pre_blob=pre if pre and _HEX_RE.fullmatch(pre) else None,
            post_blob=post if post and _HEX_RE.fullmatch(post) else None,
            old_mode=old_mode,
            new_mode=new_mode,
            binary=binary,
            hunks=hunks,
            removed=removed,
            added=added,
        )
    ]


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """Paths from `diff --git <a> <b>`; handles quoting and spaces (`a/x y b/x y`)."""
    rest = rest.strip()
    if len(rest) > 10_000:  # not a real pair of paths; the ---/+++ or rename lines decide
        return None, None
    if rest.startswith('"'):
        m = re.match(r'("(?:[^"\\]|\\.)*")\s+(.+)$', rest)
        if m:
            return _strip_prefix(_unquote(m.group(1)), "a/"), _strip_prefix(_unquote(m.group(2)), "b/")
        return None, None
    if rest.endswith('"'):
        m = re.match(r'(.+?)\s+("(?:[^"\\]|\\.)*")$', rest)
        if m:
            return _strip_prefix(m.group(1), "a/"), _strip_prefix(_unquote(m.group(2)), "b/")
        return None, None
    # Unquoted: the usual case is `a/P b/P` with the same P, whatever spaces P holds.
    if rest.startswith("a/") and len(rest) % 2 == 1:
        half = (len(rest) - 1) // 2
        left, right = rest[:half], rest[half + 1 :]
        if right.startswith("b/") and left[2:] == right[2:]:
            return left[2:], right[2:]
    cuts = [m.start() for m in re.finditer(r" b/", rest)]
    if rest.startswith("a/") and len(cuts) == 1:
        return rest[2 : cuts[0]], rest[cuts[0] + 3 :]
    parts = rest.split(" ")
    if len(parts) == 2:  # --no-prefix
        return parts[0], parts[1]
    return None, None  # ambiguous; the ---/+++ or rename lines decide


_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of a path (`"a/caf\\303\\251.c"` -> `a/café.c`)."""
    path = path.rstrip("\t").strip()
    if not (len(path) >= 2 and path.startswith('"') and path.endswith('"')):
        return path
    body, out, i = path[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out.extend(_ESCAPES.get(nxt, nxt).encode())
            i += 2
            continue
        out.extend(c.encode())
        i += 1
    return out.decode("utf-8", errors="replace")


def _strip_prefix(path: str | None, prefix: str) -> str | None:
    if path is None:
        return None
    if path.startswith(prefix):
        path = path[len(prefix) :]
    while path.startswith("./"):
        path = path[2:]
    return path


# -- non-git unified diffs ----------------------------------------------------------------------------
def _binary_line(line: str) -> FilePatch | None:
    """A `Binary files A and B differ` / `Binary file A has changed` line of a plain diff, parsed
    without regex backtracking (unidiff's pattern is quadratic on long lines)."""
    body = line.rstrip("\n")
    if body.startswith("Binary files ") and body.endswith(" differ"):
        mid = body[len("Binary files ") : -len(" differ")]
        cuts = [i for i in range(len(mid)) if mid.startswith(" and ", i)]
        if not cuts:
            return None
        pairs = [(mid[:i].split("\t")[0], mid[i + 5 :].split("\t")[0]) for i in cuts]
        src, tgt = next((p for p in pairs if p[0][2:] == p[1][2:]), pairs[0])
    elif body.startswith("Binary file ") and body.endswith(" has changed"):
        src = tgt = body[len("Binary file ") : -len(" has changed")].split("\t")[0]
    else:
        return None
    src, tgt = _plain_paths(None if src == "/dev/null" else src, None if tgt == "/dev/null" else tgt)
    if src is None and tgt is None:
        return None
    change = "added" if src is None else "deleted" if tgt is None else "modified" if src == tgt else "renamed"
    path = tgt if tgt is not None else src
    return FilePatch(path=path, change=change, old_path=src, new_path=tgt, binary=True)  # type: ignore[arg-type]


def _from_unidiff(lines: list[str]) -> list[FilePatch]:
    out: list[FilePatch] = []
    kept: list[str] = []
    for line in lines:
        if line.startswith("Binary file"):
            entry = _binary_line(line)
            if entry is not None:
                out.append(entry)
            kept.append("#\n")
        else:
            kept.append(line)
    text = "".join(kept)
    if not text.strip():
        return out
    for pf in PatchSet(text):
        src = None if pf.source_file in ("/dev/null", "", None) else _unquote(pf.source_file)
        tgt = None if pf.target_file in ("/dev/null", "", None) else _unquote(pf.target_file)
        src, tgt = _plain_paths(src, tgt)
        if src is None and tgt is None:
            raise _PatchError("file entry without a path")
        if src is None:
            change = "added"
        elif tgt is None:
            change = "deleted"
        else:
            change = "modified" if src == tgt else "renamed"
        removed, added, hunks = _changed_lines(pf)
        if hunks == 0 and not pf.is_binary_file:
            raise _PatchError(f"entry '{pf.source_file}' has no hunks (truncated?)")
        path = tgt if tgt is not None else src
        out.append(
            FilePatch(
                path=path,  # type: ignore[arg-type]
                change=change,
                old_path=src,
                new_path=tgt,
                binary=bool(pf.is_binary_file),
                hunks=hunks,
                removed=removed,
                added=added,
            )
        )
    return out


def _plain_paths(src: str | None, tgt: str | None) -> tuple[str | None, str | None]:
    """Strip `a/` `b/` (or differing first components, as `patch -p1` would) from plain-diff paths."""
    if src is not None and tgt is not None:
        if src.startswith("a/") and tgt.startswith("b/"):
            return _strip_prefix(src, "a/"), _strip_prefix(tgt, "b/")
        s, t = src.split("/", 1), tgt.split("/", 1)
        if len(s) == 2 and len(t) == 2 and s[0] != t[0] and s[1] == t[1]:
            return s[1], t[1]
        return _strip_prefix(src, ""), _strip_prefix(tgt, "")
    if src is not None:
        return _strip_prefix(src, "a/"), None
    if tgt is not None:
        return None, _strip_prefix(tgt, "b/")
    return None, None


def _changed_lines(pf) -> tuple[Counter, Counter, int]:
    removed: Counter = Counter()
    added: Counter = Counter()
    for hunk in pf:
        for line in hunk:
            if line.is_removed or line.is_added:
                value = line.value.strip()
                if value:
                    (removed if line.is_removed else added)[value] += 1
    return removed, added, len(pf)


def _merge_entries(entries: list[FilePatch]) -> list[FilePatch]:
    """One entry per path. A path listed twice (several commits concatenated) becomes their net change:
    blobs chain first pre -> last post when the hashes link up (else unknown), lines are summed."""
    merged: dict[str, FilePatch] = {}
    for f in entries:
        prev = merged.get(f.path)
        if prev is None:
            merged[f.path] = f
            continue
        chained = prev.has_blobs and f.has_blobs and hashes_match(prev.post_blob, f.pre_blob)
        merged[f.path] = FilePatch(
            path=f.path,
            change=prev.change if prev.change == f.change else "modified",
            old_path=prev.old_path,
            new_path=f.new_path,
            pre_blob=prev.pre_blob if chained else None,
            post_blob=f.post_blob if chained else None,
            old_mode=prev.old_mode,
            new_mode=f.new_mode,
            binary=prev.binary or f.binary,
            hunks=prev.hunks + f.hunks,
            removed=prev.removed + f.removed,
            added=prev.added + f.added,
        )
    return sorted(merged.values(), key=lambda f: f.path)


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
    if (not fa.content_free and not (fa.removed or fa.added)) or (not fb.content_free and not (fb.removed or fb.added)):
        return None, "none"  # whitespace-only hunks: nothing to compare
    return la == lb, "changed_lines"


def relate_patches(
    a: ParsedPatch, b: ParsedPatch, *, use_lines: bool = True, sides: tuple[str, str] = ("a", "b")
) -> PatchRelation:
    """Relation of parsed patch `a` to parsed patch `b` (see the module docstring).

    `use_lines=False` disables the changed-lines fallback: files without index lines are then
    undecided, and a pair with nothing else is `not_comparable` (`no_index_lines`). `sides` names the
    two patches in the reason text (e.g. `("train", "bench")`).
    """
    for side, p in zip(sides, (a, b), strict=True):
        if not p.ok:
            return PatchRelation("not_comparable", "none", f"{p.status}: {side} patch: {p.reason}")
    shared = sorted(a.paths & b.paths)
    counts = {"a_files": len(a.files), "b_files": len(b.files)}
    if not shared:
        return PatchRelation("not_comparable", "none", "no_shared_file: the patches touch no common file", **counts)
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
            if method == "blobs" and fa.hunks and fb.hunks and (fa.removed, fa.added) == (fb.removed, fb.added):
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
    detail = (
        f"{equal} of {n} shared file(s) equal; {sides[0]} has {len(a.files)}, {sides[1]} has {len(b.files)} file(s)"
    )
    if undecided:
        detail += f"; {len(undecided)} undecided ({undecided[0]}{', ...' if len(undecided) > 1 else ''})"
    if same_lines_other_base:
        detail += f"; {same_lines_other_base} file(s) differ in blobs but have the same changed lines"
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
    `.text` and `.reason` (`sources.taskfiles.TaskFile`). It is a mapping, or a callable for lazy
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
            parsed = _fail("missing", f"{type(exc).__name__}: {exc}")
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
