"""Image-only checks (T3, L8, L11) over the merged map and the config.

L9 on image tags is part of L9 in ``leftovers.py``; these checks read the leftovers pass and the T1/T2 grading."""

from __future__ import annotations

import re
from collections import Counter

from ...words import plural
from ..content.fixed import blob_id
from ..context import Ctx, NotApplicable
from ..image.layers import read_members
from ..model import Finding
from ..wording import capped, cut
from .leftovers import scan
from .times import _grade, group_size_cap

_EDITS = re.compile(r"git\s+apply|\bpatch\b|git\s+checkout|git\s+stash|sed\s+-i")


def _image(ctx: Ctx):
    if ctx.image is None or ctx.merged is None:
        raise NotApplicable("only for image archives")
    return ctx.image, ctx.merged


def check_t3(ctx: Ctx) -> list[Finding]:
    """Last-writing layer of each tracked file: a small group written after the bulk layer."""
    img, merged = _image(ctx)
    if not img.config or len(img.layers) < 2:
        raise NotApplicable("one layer only: no layer order to read")
    index = ctx.index()
    if index is None or ctx.repo_path is None:
        raise NotApplicable("no repository index in the image")
    prefix = ctx.repo_path.strip("/") + "/"
    layer_of = {}
    for e in index.entries:
        me = merged.entries.get(prefix + e.path)
        if e.stage == 0 and me is not None and me.kind == "file":
            layer_of[e.path] = me.layer
    if not layer_of:
        raise NotApplicable("no tracked file found in the image")
    counts = Counter(layer_of.values())
    bulk = min(counts, key=lambda layer: (-counts[layer], layer))
    group = sorted(p for p, layer in layer_of.items() if layer > bulk)
    if not group:
        return []
    created = {layer.index: layer.created_by for layer in img.layers}
    k_max = group_size_cap(len(layer_of)) if len(layer_of) >= 3 else 1
    items = [{"path": p, "layer": layer_of[p], "created_by": cut(created.get(layer_of[p], ""), 200),
              "edit_command": bool(_EDITS.search(created.get(layer_of[p], "")))} for p in group]
    layers = sorted({layer_of[p] for p in group})
    if len(group) > k_max:
        return [ctx.finding("T3", "layers", "info", "location",
                            f"{len(group)} tracked files last written after the bulk layer {bulk}",
                            f"layer {layers[0]}", {"bulk_layer": bulk, "counts": {str(k): v for k, v in
                                                                                   sorted(counts.items())}},
                            "docker history --no-trunc IMAGE", run_on="host",
                            hint="legitimate post-clone edits (an install-time sed)")]
    sev, cmp = _grade(ctx, group, set(layer_of))
    ev = {"bulk_layer": bulk, "k_max": k_max, **capped(items, ctx.max_items), **cmp}
    return [ctx.finding("T3", "layers", sev, "location",
                        f"{plural(len(group), 'tracked file')} rewritten in a later layer than the bulk ({bulk})",
                        f"layer {layers[0]}", ev, "docker history --no-trunc IMAGE", run_on="host")]


def _config_fields(img) -> list[tuple[str, str]]:
    cfg = img.config.get("config") or {}
    out = []
    for i, h in enumerate(img.config.get("history") or []):
        for key in ("created_by", "comment"):
            if h.get(key):
                out.append((f"history.{i}.{key}", str(h[key])))
    for key in ("Env", "Cmd", "Entrypoint"):
        for j, v in enumerate(cfg.get(key) or []):
            out.append((f"config.{key}.{j}", str(v)))
    for k, v in sorted((cfg.get("Labels") or {}).items()):
        out.append((f"config.Labels.{k}", f"{k}={v}"))
    if cfg.get("WorkingDir"):
        out.append(("config.WorkingDir", str(cfg["WorkingDir"])))
    for k, v in sorted(img.annotations.items()):
        out.append((f"annotations.{k}", f"{k}={v}"))
    return out


def check_l8(ctx: Ctx) -> list[Finding]:
    """Image config and history: inline patches, FAIL_TO_PASS in Env, labels and annotations."""
    img, _ = _image(ctx)
    if not img.config:
        raise NotApplicable("a rootfs tar has no image config")
    s = scan(ctx)
    out = []
    for field, text in _config_fields(img):
        hits = s.patch_match(text.replace("\\n", "\n")) if s.hunks else []
        sev, ids = s.ids_graded(text)
        if hits:
            sev = "critical"
        if sev is None and re.match(r"(FAIL_TO_PASS|PASS_TO_PASS)=", text):
            sev = "medium"
        if sev:
            out.append(ctx.finding("L8", field, sev, "content" if hits else "location",
                                   f"image {field} names the hidden tests or the fix", field,
                                   {"field": field, "text": cut(text), "hunks": hits, "test_ids": ids},
                                   "docker inspect IMAGE", run_on="host"))
    return out


def check_l11(ctx: Ctx) -> list[Finding]:
    """Shadowed content (builder only): answer-like files hidden by a whiteout or a later layer."""
    img, merged = _image(ctx)
    s = scan(ctx)
    out = []
    fixed = ctx.fixed_blobs() if ctx._repo is not None else {}
    hexlen = ctx._repo.hexlen if ctx._repo is not None else 40
    sizes = {f.size for f in fixed.values() if f.size is not None}
    # a hidden file of a fixed file's size is read back from its layer and hashed (F1 on shadowed content)
    sized = {tuple(sh["src"]) for sh in merged.shadowed if sh.get("src") and sh.get("size") in sizes
             and tuple(sh["src"]) not in merged.spooled}
    contents = {**merged.spooled, **(read_members(img, sized, ctx.limits) if sized else {})}
    for sh in merged.shadowed:
        data = contents.get(tuple(sh["src"])) if sh.get("src") else None
        same = fixed.get(blob_id(data, hexlen)) if data is not None and sh.get("size") in sizes else None
        if not (sh["interesting"] or same):
            continue
        text = data.decode("utf-8", "replace") if data else ""
        hits = s.patch_match(text) if s.hunks and text else []
        what = (f"fixed {same.path}" if same.kind == "fix" else f"hidden test {same.path}") if same \
            else "reference patch" if hits else "answer-like file"
        out.append(ctx.finding("L11", sh["path"], "info", "content",
                               f"{sh['path']} = {what}, written by layer {sh['layer']}, hidden by layer "
                               f"{sh['hidden_by']} ({sh['how']})", f"layer {sh['layer']} (hidden by layer "
                                                                   f"{sh['hidden_by']})",
                               {"path": sh["path"], "layer": sh["layer"], "hidden_by": sh["hidden_by"],
                                "how": sh["how"], "hunks": hits, "equals_fixed": same.path if same else None},
                               "builder only: extract the layer from the archive", run_on="host"))
    if merged.skipped:
        n = len(merged.skipped)
        out.append(ctx.finding("L11", "archive:skipped", "info", "hygiene",
                               f"{n} archive entr{'y was' if n == 1 else 'ies were'} skipped or relocated "
                               "(hostile or malformed)", "archive",
                               capped(merged.skipped, ctx.max_items), "tar -tvf IMAGE", run_on="host"))
    return out
