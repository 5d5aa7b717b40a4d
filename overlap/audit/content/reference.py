"""The reference answer: fix and test patches, fixed files, test IDs.

Over 400 lines on purpose: every way of giving the reference ends in one ``Reference``, built in one place.

``load_reference`` turns ``--fix``/``--tests``/``--test-id``/``--instance`` into a :class:`Reference`
(paths R, patches, direct files). ``compute_fixed`` then builds the post-fix content of every path
by applying each file's patch to B's blob with the hardened ``git apply`` inside a private scratch
folder (never the audited repo), and hashes it in process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...errors import InputError
from ..git.cmd import GitError, GitRunner
from ..git.guard import kind_of
from ..tree import TooLarge, read_regular

PATCH_LIMIT = 64 << 20
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    header: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    old_path: str | None
    new_path: str | None
    text: bytes
    old_abbrev: str | None = None
    new_abbrev: str | None = None
    new_mode: int | None = None
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return sorted({p for p in (self.old_path, self.new_path) if p})


def _unquote(raw: bytes) -> str:
    s = raw.decode("utf-8", "surrogateescape")
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        body = s[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        s = body.encode("latin-1", "replace").decode("utf-8", "replace")
    return s


def _safe_rel(path: str, source: str) -> str:
    parts = PurePosixPath(path).parts
    if path.startswith("/") or not parts or ".." in parts:
        raise InputError(f"{source}: path {path!r} leaves the repository; use paths relative to its root")
    return "/".join(parts)


def _strip(path: str | None, source: str) -> str | None:
    """A patch path without its ``a/``-style prefix (``-p1``); None for /dev/null."""
    if path is None or path == "/dev/null":
        return None
    path = path.split("\t", 1)[0]
    parts = PurePosixPath(path).parts
    if len(parts) >= 2 and parts[0] in ("a", "b", "i", "w", "c", "o"):
        path = "/".join(parts[1:])
    return _safe_rel(path, source)


def parse_patch(data: bytes, source: str) -> list[FilePatch]:
    """Split a unified diff (git or plain) into per-file patches. InputError when it holds no diff."""
    lines = data.split(b"\n")
    files: list[FilePatch] = []
    starts: list[int] = []
    cur: FilePatch | None = None
    header_paths: tuple[str | None, str | None] | None = None
    i, n = 0, len(lines)
    seen_minus = False
    while i < n:
        line = lines[i].rstrip(b"\r")
        if line.startswith(b"diff --git "):
            rest = line[11:]
            header_paths = None
            half = (len(rest) - 1) // 2
            if rest[half : half + 1] == b" " and rest[:half][2:] == rest[half + 1 :][2:]:
                header_paths = (_strip(_unquote(rest[:half]), source), _strip(_unquote(rest[half + 1 :]), source))
            cur = FilePatch(header_paths[0] if header_paths else None, header_paths[1] if header_paths else None, b"")
            files.append(cur)
            starts.append(i)
            seen_minus = False
            i += 1
            continue
        if line.startswith(b"--- ") and i + 1 < n and lines[i + 1].startswith(b"+++ "):
            old = _strip(_unquote(line[4:].split(b"\t")[0]), source)
            new = _strip(_unquote(lines[i + 1][4:].rstrip(b"\r").split(b"\t")[0]), source)
            if cur is None or seen_minus:
                cur = FilePatch(old, new, b"")
                files.append(cur)
                starts.append(i)
            else:
                cur.old_path, cur.new_path = old, new
            seen_minus = True
            i += 2
            continue
        if cur is None:
            i += 1
            continue
        m = _HUNK.match(line)
        if m:
            old_left = int(m.group(2) or 1) if m.group(2) != b"0" else 0
            new_left = int(m.group(4) or 1) if m.group(4) != b"0" else 0
            hunk = Hunk(line.decode("utf-8", "replace"))
            cur.hunks.append(hunk)
            i += 1
            while i < n and (old_left > 0 or new_left > 0):
                h = lines[i].rstrip(b"\r")
                tag, body = h[:1], h[1:].decode("utf-8", "replace")
                if tag == b"+":
                    hunk.added.append(body)
                    new_left -= 1
                elif tag == b"-":
                    hunk.removed.append(body)
                    old_left -= 1
                elif tag == b" " or h == b"":
                    old_left -= 1
                    new_left -= 1
                elif tag == b"\\":
                    pass
                else:
                    break
                i += 1
            continue
        if line.startswith(b"new file mode ") or line.startswith(b"new mode "):
            try:
                cur.new_mode = int(line.split()[-1], 8)
            except ValueError:
                pass
        elif line.startswith(b"deleted file mode "):
            cur.new_path = None
        elif line.startswith(b"index "):
            m2 = re.match(rb"index ([0-9a-f]+)\.\.([0-9a-f]+)", line)
            if m2:
                cur.old_abbrev, cur.new_abbrev = m2.group(1).decode(), m2.group(2).decode()
        elif line.startswith(b"rename from ") or line.startswith(b"copy from "):
            cur.old_path = _strip(_unquote(line.split(b" ", 2)[2]), source)
        elif line.startswith(b"rename to ") or line.startswith(b"copy to "):
            cur.new_path = _strip(_unquote(line.split(b" ", 2)[2]), source)
        elif line.startswith(b"GIT binary patch") or line.startswith(b"Binary files "):
            cur.binary = True
        i += 1
    if not files:
        raise InputError(f"{source}: not a unified diff (no 'diff --git' or '---/+++' header found)")
    bounds = starts[1:] + [n]
    for fp, a, b in zip(files, starts, bounds, strict=True):
        fp.text = b"\n".join(lines[a:b]) + b"\n"
        if fp.new_abbrev and set(fp.new_abbrev) == {"0"}:
            fp.new_path = None
    return files


@dataclass
class RefSource:
    kind: str  # fix | tests
    source: str  # as given by the user
    sha256: str
    patches: list[FilePatch] = field(default_factory=list)
    direct: dict[str, bytes] = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        out = {p for fp in self.patches for p in fp.paths} | set(self.direct)
        return sorted(out)

    def to_dict(self) -> dict:
        return {"source": self.source, "sha256": self.sha256, "paths": self.paths}


@dataclass
class FixedFile:
    kind: str  # fix | tests
    path: str
    blob: str | None = None
    size: int | None = None
    data: bytes | None = None
    base_blob: str | None = None
    base_data: bytes | None = None
    status: str = "ok"  # ok | incomplete | unchanged
    reason: str | None = None


@dataclass
class Reference:
    fix: list[RefSource] = field(default_factory=list)
    tests: list[RefSource] = field(default_factory=list)
    test_ids: list[str] = field(default_factory=list)
    fix_commit: str | None = None
    instance_base: str | None = None
    instance_id: str | None = None
    fixed: list[FixedFile] = field(default_factory=list)

    @property
    def given(self) -> bool:
        return bool(self.fix or self.tests)

    @property
    def paths(self) -> set[str]:
        return {p for s in self.fix + self.tests for p in s.paths}

    def fixed_blobs(self, kind: str | None = None) -> dict[str, FixedFile]:
        return {f.blob: f for f in self.fixed if f.blob and f.status == "ok" and (kind is None or f.kind == kind)}

    def added_paths(self) -> set[str]:
        """Paths the fix creates (no old side)."""
        return {fp.new_path for s in self.fix for fp in s.patches if fp.old_path is None and fp.new_path}

    def base_texts(self) -> dict[str, str]:
        """B's content of every patched path that was read to compute the fixed content."""
        return {f.path: f.base_data.decode("utf-8", "replace") for f in self.fixed if f.base_data is not None}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_user_file(path: str, what: str) -> bytes:
    """A file named on the command line, resolved once here (relative to the working folder; a symlink the
    user gives is the user's choice and is followed). Only a regular file is opened."""
    real = os.path.realpath(path)
    try:
        data = read_regular(real, PATCH_LIMIT)
    except TooLarge:
        raise InputError(f"{what} {path}: larger than {PATCH_LIMIT >> 20} MiB") from None
    if data is None:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise InputError(f"{what} {path}: {kind_of(mode)}, not a regular file (save it to a file first)")
        raise InputError(f"{what} {path}: no such file (give a patch file or REPO_PATH=LOCAL_FILE)")
    return data


def _load_source(arg: str, kind: str) -> RefSource:
    opt = "--fix" if kind == "fix" else "--tests"
    if os.path.exists(arg):  # any existing entry is the patch (a FIFO or a folder is refused by name)
        data = _read_user_file(arg, opt)
        return RefSource(kind, arg, _sha256(data), parse_patch(data, f"{opt} {arg}"))
    repo_path, sep, local = arg.partition("=")
    if not sep:
        raise InputError(f"{opt} {arg}: no such file (give a patch file or REPO_PATH=LOCAL_FILE)")
    if not repo_path.strip():
        raise InputError(f"{opt} {arg}: empty repository path before '='")
    rel = _safe_rel(repo_path.strip(), f"{opt} {arg}")
    data = _read_user_file(local, opt)
    return RefSource(kind, arg, _sha256(data), direct={rel: data})


def test_ids_from_patch(fp: FilePatch) -> list[str]:
    """Names of test functions a test patch adds (Python, Go, JS/TS, Rust, Java; best effort)."""
    path = fp.new_path
    if not path:
        return []
    out = []
    for h in fp.hunks:
        prev = ""
        for ln in h.added:
            s = ln.strip()
            m = (re.match(r"(?:async\s+)?def\s+(test\w*)\s*\(", s) or re.match(r"func\s+(Test\w+)\s*\(", s)
                 or re.match(r"(?:it|test)\s*\(\s*['\"`](.+?)['\"`]", s))
            if m is None and prev in ("@Test", "#[test]"):
                m = re.search(r"(?:fn|void)\s+(\w+)\s*\(", s)
            if m:
                out.append(f"{path}::{m.group(1)}")
            if s:
                prev = s
    return out


def _instance_bytes(text: str, instance, field: str) -> bytes:
    """A patch held in an instance file as the bytes of the diff: a diff that is not UTF-8 (a Latin-1 source
    file) reaches it as escaped lone surrogates (``\\udcff``, as a batch writes it), which stand for its bytes."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise InputError(f"--instance {instance}: {field} holds a lone surrogate that stands for no byte") from None


def _json_type(value) -> str:
    return {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(type(value), "value")


def load_reference(*, fix=(), tests=(), test_ids=(), fix_commit=None, instance=None) -> Reference:
    ref = Reference()
    inst: dict = {}
    if instance:
        raw = _read_user_file(str(instance), "--instance")
        try:
            text = raw.decode("utf-8").strip()
            inst = json.loads(text.splitlines()[0] if text.startswith("{") and "\n{" in text else text)
        except (UnicodeDecodeError, json.JSONDecodeError, IndexError, RecursionError) as exc:
            raise InputError(f"--instance {instance}: not a JSON object ({exc})") from None
        if not isinstance(inst, dict):
            raise InputError(f"--instance {instance}: expected one JSON object with SWE-bench fields")
        # a field of the wrong type is refused by name: a patch given as a list would otherwise be dropped and
        # the audit run without a reference, and a numeric base would reach git as no revision at all
        for field in ("base_commit", "patch", "test_patch", "fix_commit"):
            if inst.get(field) is not None and not isinstance(inst[field], str):
                raise InputError(f"--instance {instance}: {field} is a JSON {_json_type(inst[field])}, expected a "
                                 "string")
        if inst.get("instance_id") is not None and not isinstance(inst["instance_id"], (str, int)):
            raise InputError(f"--instance {instance}: instance_id is a JSON {_json_type(inst['instance_id'])}, "
                             "expected a string")
        ref.instance_id = None if inst.get("instance_id") is None else str(inst["instance_id"])
        ref.instance_base = inst.get("base_commit")
    ref.fix = [_load_source(a, "fix") for a in fix]
    ref.tests = [_load_source(a, "tests") for a in tests]
    if not ref.fix and isinstance(inst.get("patch"), str) and inst["patch"].strip():
        data = _instance_bytes(inst["patch"], instance, "patch")
        ref.fix = [RefSource("fix", "instance:patch", _sha256(data), parse_patch(data, "--instance patch"))]
    if not ref.tests and isinstance(inst.get("test_patch"), str) and inst["test_patch"].strip():
        data = _instance_bytes(inst["test_patch"], instance, "test_patch")
        ref.tests = [RefSource("tests", "instance:test_patch", _sha256(data),
                               parse_patch(data, "--instance test_patch"))]
    ids = list(test_ids)
    f2p = inst.get("FAIL_TO_PASS")
    if isinstance(f2p, str):
        try:
            f2p = json.loads(f2p)
        except json.JSONDecodeError:
            f2p = [f2p]
    if not test_ids and isinstance(f2p, list):
        ids += [str(x) for x in f2p]
    for src in ref.tests:
        for fp in src.patches:
            ids += test_ids_from_patch(fp)
    ref.test_ids = sorted(set(ids))
    fc = fix_commit or inst.get("fix_commit")
    if fc is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{7,64}", str(fc)):
            raise InputError(f"--fix-commit {fc}: expected a hex commit ID (7 to 64 digits)")
        ref.fix_commit = str(fc).lower()
    return ref


def blob_id(data: bytes, hexlen: int = 40) -> str:
    h = hashlib.sha1() if hexlen == 40 else hashlib.sha256()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class BaseUnreadable(Exception):
    """B's content of a path exists but cannot be read here (a submodule whose objects are not in the input):
    the fixed content stays unknown, with ``reason``, instead of passing for "not in B"."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def compute_fixed(ref: Reference, base_blob: Callable[[str], tuple[str, bytes] | None], runner: GitRunner,
                  scratch: Path, *, hexlen: int = 40) -> list[FixedFile]:
    """Post-fix content of every reference path; ``base_blob(path)`` gives B's (blob id, bytes) or None, or
    raises BaseUnreadable."""
    out: list[FixedFile] = []
    for src in ref.fix + ref.tests:
        for path, data in sorted(src.direct.items()):
            out.append(FixedFile(src.kind, path, blob_id(data, hexlen), len(data), data))
        for k, fp in enumerate(src.patches):
            if fp.new_path is None:
                continue
            ff = FixedFile(src.kind, fp.new_path)
            out.append(ff)
            if fp.new_mode == 0o160000:
                ff.status, ff.reason = "incomplete", "submodule change"
                continue
            _apply_one(fp, ff, base_blob, runner, scratch, k, hexlen)
    ref.fixed = out
    return out


def _apply_one(fp: FilePatch, ff: FixedFile, base_blob, runner: GitRunner, scratch: Path, k: int,
               hexlen: int) -> None:
    work = scratch
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700)
    old = None
    if fp.old_path is not None:
        try:
            got = base_blob(fp.old_path)
        except BaseUnreadable as exc:
            ff.status, ff.reason = "incomplete", exc.reason
            return
        if got is None:
            ff.status, ff.reason = "incomplete", f"{fp.old_path} is not in B (or B is missing)"
            return
        ff.base_blob, old = got
        ff.base_data = old
        target = work / fp.old_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(old)
    patch_file = work.parent / f"scratch-{k}.patch"
    texts = [fp.text]
    lines = [x for x in fp.text.splitlines(keepends=True) if x.strip()]
    if lines and all(x.endswith(b"\r\n") for x in lines) and b"\r" not in (old or b""):
        # a patch saved with CRLF line ends (a Windows editor, a web form) for a file without them: git apply
        # refuses it as it is, and the file the patch means is the one with the CRs dropped
        texts.append(fp.text.replace(b"\r\n", b"\n"))
    try:
        for n, text in enumerate(texts):
            patch_file.write_bytes(text)
            try:
                runner.run(["apply", "--whitespace=nowarn", str(patch_file)], cwd=work)
                break
            except GitError as exc:
                if n == len(texts) - 1:
                    ff.status, ff.reason = "incomplete", f"patch does not apply to B at {fp.new_path}: {exc.reason}"
                    return
    finally:
        patch_file.unlink(missing_ok=True)
    result = work / fp.new_path
    if result.is_symlink():
        data = os.readlink(result).encode("utf-8", "surrogateescape")
    else:
        try:
            data = read_regular(result, 1 << 31)
        except TooLarge:
            data = None
    if data is None:
        ff.status, ff.reason = "incomplete", f"{fp.new_path}: no file after applying the patch"
        return
    ff.blob = blob_id(data, hexlen)
    ff.size = len(data)
    ff.data = data
    if fp.new_abbrev and not ff.blob.startswith(fp.new_abbrev):
        ff.status, ff.reason = "incomplete", (
            f"patch does not match base B at {fp.new_path}: computed blob {ff.blob[:12]}, "
            f"index line says {fp.new_abbrev}")
    elif ff.base_blob == ff.blob:
        ff.status, ff.reason = "unchanged", "content equals B's (mode-only change)"


def reverse_applies(runner: GitRunner, scratch: Path, files: dict[str, bytes], patch: bytes) -> bool:
    """Whether ``patch`` is already applied to ``files`` (``git apply -R --check`` in the scratch folder)."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(mode=0o700)
    for rel, data in files.items():
        target = scratch / _safe_rel(rel, "patch")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    patch_file = scratch.parent / "scratch-reverse.patch"
    patch_file.write_bytes(patch)
    try:
        runner.run(["apply", "-R", "--check", str(patch_file)], cwd=scratch)
        return True
    except GitError:
        return False
    finally:
        patch_file.unlink(missing_ok=True)
