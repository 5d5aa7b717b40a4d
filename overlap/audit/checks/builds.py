"""B1, a second build of the task's target: the fixed code compiled.

A cyber task ships a vulnerable build; an image that also holds a build of the fixed code hands over the fix to
an agent that diffs the two. A binary (ELF, Mach-O, PE, wasm, jar, static archive) is reported when (a) its name
says so (`fix_binary`, `*fixed*`, `*_fix`, `patched`), (b) it is a second build of another binary of the
environment (same ELF machine and type, the same defined global symbols beyond the C runtime's, different
bytes), or (c) it holds fix-only strings (F3's rule on its printable strings, the background counted). Each is
graded by who can read it (``access``): readable by the agent → high; readable only by root while the image sets
no user → medium; the declared agent cannot read it → info. System folders (`/usr`, `/lib`, …) are never paired:
the packages there are builds of their own."""

from __future__ import annotations

import hashlib
import posixpath
import re
import stat
from collections import defaultdict

from ..content.binfmt import ElfInfo, elf_info, kind_of, printable_strings
from ..context import Ctx
from ..model import Finding
from ..tree import TooLarge, read_head, read_regular
from ..wording import cut
from .access import grade_by_reader, who_reads

# the packaged system: its binaries are not the task's builds
SYSTEM_PREFIXES = ("usr/", "lib/", "lib32/", "lib64/", "libx32/", "bin/", "sbin/", "etc/", "boot/", "var/lib/",
                   "var/cache/", "opt/conda/", "proc/", "sys/", "dev/")
KEPT_SYSTEM = ("usr/local/bin/", "usr/local/sbin/")  # where a task's build is often installed
_SKIP_PARTS = frozenset({"site-packages", "dist-packages", "node_modules", ".cache", ".rustup", ".cargo"})
BINARY_SUFFIXES = (".so", ".a", ".jar", ".wasm", ".exe", ".dll", ".dylib")
FIX_NAME = re.compile(r"fix_?binary|fixed|patched|[_.-]fix$")
FIX_FOLDERS = frozenset({"fix", "fixed", "patched", "fix_binary"})
HEAD = 8


def _stem(name: str) -> str:
    name = name.lower()
    for suffix in BINARY_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def named_as_fix(path: str) -> bool:
    """Whether a binary's name (or its folder's) says it is the fixed build."""
    parts = path.lower().split("/")
    return bool(FIX_NAME.search(_stem(parts[-1]))) or any(p in FIX_FOLDERS for p in parts[:-1])


def in_system(rel: str) -> bool:
    rel = rel.lstrip("/")
    if rel.startswith(KEPT_SYSTEM):
        return False
    return rel.startswith(SYSTEM_PREFIXES) or bool(_SKIP_PARTS.intersection(rel.split("/")))


def binaries(ctx: Ctx) -> list[dict]:
    """The non-system binaries of the scanned tree: path, kind, size, sha256, ELF facts (cached per target)."""
    cached = ctx.__dict__.get("_binaries")
    if cached is not None:
        return cached
    out = []
    limit = ctx.limits["archive_member_bytes"]
    for fe in ctx.files():
        if not stat.S_ISREG(fe.st.st_mode) or (ctx.fsroot is not None and in_system(fe.rel)):
            continue
        kind = kind_of(read_head(fe.path, HEAD), fe.rel.rpartition("/")[2].lower())
        if kind is None:
            continue
        try:
            data = read_regular(fe.path, limit)
        except TooLarge:
            data = None
        item = {"rel": fe.rel, "shown": ctx.shown(fe.rel), "kind": kind, "size": fe.st.st_size,
                "sha256": hashlib.sha256(data).hexdigest() if data is not None else None, "data": data,
                "elf": elf_info(data) if kind == "elf" and data is not None else None}
        out.append(item)
    ctx._binaries = out
    return out


def _pair_key(info: ElfInfo | None):
    if info is None or not info.own_symbols:
        return None
    return info.machine, info.etype, info.own_symbols


def _layer(ctx: Ctx, rel: str) -> dict | None:
    """The layer that added a file and its history line (`COPY fix_binary /root/fixed/`)."""
    if ctx.merged is None or ctx.image is None:
        return None
    e = ctx.merged.entries.get(rel.strip("/"))
    if e is None:
        return None
    created = {x.index: x.created_by for x in ctx.image.layers}
    return {"index": e.layer, "created_by": cut(created.get(e.layer, ""), 200)}


def _fix_only_strings(ctx: Ctx, data: bytes | None) -> list[str]:
    """Fix-only strings (rare in the environment's background) held by a binary's printable strings."""
    if data is None or not ctx.reference.fix:
        return []
    from .leftovers import scan  # the one shared pass: its tokens and background are already counted

    s = scan(ctx)
    maybe = [t for t in s.bg.rare_tokens(s.tokens) if t.encode("utf-8", "replace") in data]
    if not maybe:
        return []
    strings = printable_strings(data)
    return sorted({t for t in maybe for x in strings if t in x})


def _l5_reported(ctx: Ctx, shown: str) -> bool:
    from .leftovers import scan

    return any(f.where == shown for f in scan(ctx).out.get("L5", []))


def check_b1(ctx: Ctx) -> list[Finding]:
    """Builds of the fixed code: named so, a second build of a target, or holding fix-only strings."""
    items = binaries(ctx)
    by_key: dict = defaultdict(list)
    for item in items:
        key = _pair_key(item["elf"])
        if key is not None:
            by_key[key].append(item)
    second: dict[str, str] = {}  # path of a second build -> the build it pairs with
    for group in by_key.values():
        if len({i["sha256"] for i in group}) < 2:
            continue
        # the vulnerable target is the build not named as a fix, in the earliest layer, then by path
        ordered = sorted(group, key=lambda i: (named_as_fix(i["rel"]), (_layer(ctx, i["rel"]) or {}).get("index", 0),
                                               i["rel"]))
        first = ordered[0]
        for other in ordered[1:]:
            if other["sha256"] != first["sha256"]:
                second[other["rel"]] = first["shown"]
    out: list[Finding] = []
    for item in items:
        rel = item["rel"]
        reasons = []
        if named_as_fix(rel):
            reasons.append("named as the fixed build")
        if rel in second:
            reasons.append(f"a second build of {second[rel]}")
        tokens = _fix_only_strings(ctx, item["data"])
        if tokens:
            reasons.append("holds strings only the fix adds")
        if not reasons or (reasons == ["holds strings only the fix adds"] and _l5_reported(ctx, item["shown"])):
            continue  # fix-only strings alone in a binary L5 already names: one finding, not two
        access = who_reads(ctx, rel)
        sev, hint = grade_by_reader(ctx, access, "high")
        ev = {"path": item["shown"], "kind": item["kind"], "size": item["size"], "sha256": item["sha256"],
              "why": reasons, **access}
        if rel in second:
            ev["pairs_with"] = second[rel]
        if item["elf"] is not None:
            ev["build_id"] = item["elf"].build_id
            ev["symbols"] = sorted(item["elf"].own_symbols)[: ctx.max_items]
        if tokens:
            ev["tokens"] = [cut(t, 120) for t in tokens[: ctx.max_items]]
        layer = _layer(ctx, rel)
        if layer is not None:
            ev["layer"] = layer
        who = "readable by the agent" if access["readable_by_agent"] else "readable by root only" \
            if not access["readable_by_non_root"] else "not readable by the agent"
        name = posixpath.basename(item["shown"])
        cmd = f"ls -l {ctx.q(item['shown'])}" + (f" && cmp {ctx.q(second[rel])} {ctx.q(item['shown'])}"
                                                  if rel in second else "")
        out.append(ctx.finding("B1", item["shown"], sev, "content",
                               f"a build of the fixed code: {name} ({reasons[0]}; {who})", item["shown"], ev, cmd,
                               hint=hint))
    return out
