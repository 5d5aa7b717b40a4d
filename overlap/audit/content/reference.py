"""The reference answer: ``load_reference`` turns ``--fix``/``--tests``/``--test-id``/``--instance`` into one
:class:`Reference` (paths R, patches, direct files, test IDs, the fix commit).

Every way of giving the reference ends here, built in one place; ``fixed.compute_fixed`` then fills in the
post-fix content of every path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field

from ...errors import InputError
from ..git.guard import kind_of
from ..tree import TooLarge, read_regular
from .patch import FilePatch, _safe_rel, parse_patch, test_ids_from_patch

PATCH_LIMIT = 64 << 20


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
