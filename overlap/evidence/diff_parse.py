"""Parse a unified diff into a ParsedPatch: git sections by hand (extended headers, index lines, renames,
binary and mode-only entries), hunks with unidiff (which checks hunk lengths, so a truncated hunk is
caught), plain and Mercurial diffs through unidiff."""

from __future__ import annotations

import re
from collections import Counter

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from ..crashes.inputs import is_missing, unwrap_file
from .diff_paths import binary_line_entry, git_header_paths, plain_paths, strip_prefix, unquote_path
from .patch_model import DEFAULT_MAX_CHARS, FilePatch, ParsedPatch, empty_blob, failed_patch, hashes_match

_HEX_RE = re.compile(r"[0-9a-f]+")


_INDEX_RE = re.compile(r"^index ([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)(?: +(\d+))?\s*$")


_GIT_HEADER = "diff --git "


_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.MULTILINE)


def _decode(value: object) -> str | ParsedPatch:
    if isinstance(value, bytes | bytearray):
        if b"\x00" in value:
            return failed_patch("binary", "NUL bytes in patch data", len(value))
        text = bytes(value).decode("utf-8", errors="replace")
        if text.count("\ufffd") > max(8, len(text) // 100):
            return failed_patch("binary", "patch data is not UTF-8 text", len(value))
        return text
    if isinstance(value, str):
        return value
    return failed_patch("unparseable", f"patch is a {type(value).__name__}, not text")


def parse_patch(value: object, *, max_chars: int = DEFAULT_MAX_CHARS) -> ParsedPatch:
    """Parse one patch (str, bytes, or a fetched file with `.text`/`.reason`; None/NaN or a file
    whose text is None = missing). Never raises on bad input.

    Handles git diffs (renames, copies, new/deleted files, mode-only and binary entries, quoted paths
    and paths with spaces, `index` lines with or without mode, `git show`/`format-patch` wrappers,
    several commits concatenated), plain and Mercurial unified diffs (no `index` lines), and CRLF.
    """
    if isinstance(value, ParsedPatch):
        return value
    value, why = unwrap_file(value)
    if why is not None:
        return failed_patch("missing", why)
    if is_missing(value):
        return failed_patch("missing", "no patch text")
    text = _decode(value)
    if isinstance(text, ParsedPatch):
        return text
    chars = len(text)
    if chars > max_chars:
        return failed_patch("too_large", f"{chars} characters > cap {max_chars}; not parsed", chars)
    if not text.strip():
        return failed_patch("empty", "patch text is blank", chars)
    if "\x00" in text:
        return failed_patch("binary", "NUL characters in patch text", chars)
    text = text.replace("\r\n", "\n")
    try:
        entries = _parse_text(text)
    except _PatchError as exc:
        return failed_patch("unparseable", str(exc), chars)
    except Exception as exc:  # noqa: BLE001 - bad input must never crash a comparison
        return failed_patch("unparseable", f"{type(exc).__name__}: {exc}", chars)
    if not entries:
        return failed_patch("no_diff", "no file entry found in the text", chars)
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

    old_path, new_path = git_header_paths(header[len(_GIT_HEADER) :])
    renamed_from = info.get("rename from") or info.get("copy from")
    renamed_to = info.get("rename to") or info.get("copy to")
    if renamed_from:
        old_path = unquote_path(renamed_from)
    if renamed_to:
        new_path = unquote_path(renamed_to)

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
        src = strip_prefix(unquote_path(pf.source_file), "a/") if pf.source_file != "/dev/null" else None
        tgt = strip_prefix(unquote_path(pf.target_file), "b/") if pf.target_file != "/dev/null" else None
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
    if blobs and hunks == 0 and not binary and blobs[0] != blobs[1] and not all(map(empty_blob, blobs)):
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


def _from_unidiff(lines: list[str]) -> list[FilePatch]:
    out: list[FilePatch] = []
    kept: list[str] = []
    for line in lines:
        if line.startswith("Binary file"):
            entry = binary_line_entry(line)
            if entry is not None:
                out.append(entry)
            kept.append("#\n")
        else:
            kept.append(line)
    text = "".join(kept)
    if not text.strip():
        return out
    for pf in PatchSet(text):
        src = None if pf.source_file in ("/dev/null", "", None) else unquote_path(pf.source_file)
        tgt = None if pf.target_file in ("/dev/null", "", None) else unquote_path(pf.target_file)
        src, tgt = plain_paths(src, tgt)
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
