"""Attach evidence to a compare result (in place).

For every benchmark: pairs found by the same fix alone (kind `fix`, same-project candidates only), the fix
relation of every pair, the crash grade of every pair with a control rate, and related bugs from the
ARVO-Meta records (reported, not counted). Each check that lacks what it needs says `not_run` and why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from ..model import make_pairs
from .crash import best_grade, control_rate, grade_crash, parse_crash, summarize_grades
from .fixjoin import join_fixes, related_groups, related_pairs
from .itemtexts import ItemTexts
from .patches import FIX_RELATIONS, PatchBook, relate_patches

FIX_JOIN_MODES = ("auto", "on", "off")
MAX_RELATED_GROUP = 10  # records sharing one signature above which it is too common to relate bugs


def _cyber_ids(dataset) -> set[str]:
    """Items with an OSS-Fuzz or CVE key: the ones the same-fix join pairs in `auto` mode (item by item, so
    one CVE row in a set of pull requests makes no pull request a candidate)."""
    keys = dataset.keys
    return set(keys.loc[keys["kind"].isin(["ossfuzz", "cve"]), "item_id"])


def _project_table(dataset) -> pd.DataFrame:
    items = dataset.items
    project = items["project"] if "project" in items.columns else pd.Series(pd.NA, index=items.index)
    return pd.DataFrame({"item_id": items["item_id"], "project": project.astype("string")})


def _shared_project_ids(t: pd.DataFrame, b: pd.DataFrame) -> tuple[list[str], list[str]]:
    t_key, b_key = t["project"].str.lower(), b["project"].str.lower()
    shared = set(t_key.dropna()) & set(b_key.dropna())
    return t.loc[t_key.isin(shared), "item_id"].tolist(), b.loc[b_key.isin(shared), "item_id"].tolist()


def _fix_join(comp, train, tpatch: ItemTexts, bpatch: ItemTexts, tbook, bbook, mode: str) -> dict[str, Any]:
    """Pairs that share a fix and no id: added to the pairs with kind `fix`."""
    if mode == "off":
        return {"status": "not_run", "reason": "the same-fix join was turned off (--fix-join off)"}
    t, b = _project_table(train), _project_table(comp.bench)
    if mode == "auto":
        t, b = t[t["item_id"].isin(_cyber_ids(train))], b[b["item_id"].isin(_cyber_ids(comp.bench))]
        # whether a side has such items at all: a streamed training set holds its paired items only
        if not train.has_kind("ossfuzz", "cve") or not len(b):
            return {"status": "not_run", "reason": "the same-fix join pairs OSS-Fuzz/CVE items, and a side has none "
                    "(use --fix-join on for every item)"}
    for side in (tpatch, bpatch):
        if not side.available:
            return {"status": "not_run", "reason": side.why_not()}
    train_ids, bench_ids = _shared_project_ids(t, b)
    tpatch.prefetch(train_ids)
    bpatch.prefetch(bench_ids)
    joined = join_fixes(t.reset_index(drop=True), b.reset_index(drop=True), train_patches=tbook,
                        bench_patches=bbook)
    found = joined.pairs[joined.pairs["shares_fix"].fillna(False).astype(bool)]
    known = set(zip(comp.pairs["train_id"], comp.pairs["bench_id"], strict=True))
    new = found[[(t, b) not in known for t, b in zip(found["train_id"], found["bench_id"], strict=True)]]
    if len(new):
        added = make_pairs(pd.DataFrame({
            "bench": comp.bench.name, "train_id": new["train_id"].to_numpy(), "bench_id": new["bench_id"].to_numpy(),
            "kinds": "fix", "match_type": "fix", "train_raw": "", "bench_raw": ""}))
        added["pair_kind"] = pd.array(["same_fix"] * len(added), dtype="string")
        added["counted"] = pd.array([True] * len(added), dtype="boolean")
        comp.pairs = pd.concat([comp.pairs, added], ignore_index=True)
    stats = joined.stats
    return {"status": "ran", "pairs_sharing_fix": int(len(found)), "pairs_added": int(len(new)),
            "partly_identical_not_counted": int(stats.partial_pairs), "projects": int(stats.projects),
            "same_project_candidates": int(stats.same_project_pairs), "compared": int(stats.compared),
            "train_patch_status": dict(sorted(stats.train_status.items())),
            "bench_patch_status": dict(sorted(stats.bench_status.items()))}


def _fix_relations(comp, tpatch: ItemTexts, bpatch: ItemTexts, tbook, bbook) -> dict[str, Any]:
    pairs = comp.pairs
    missing = [s.why_not() for s in (tpatch, bpatch) if not s.available]
    relation, reason, method = (_column(pairs, c) for c in ("fix_relation", "fix_reason", "fix_method"))
    todo = relation.isna()  # SWE pairs of some kinds already carry their relation
    if missing:
        relation[todo], reason[todo], method[todo] = "not_run", "; ".join(missing), "none"
    else:
        tpatch.prefetch(pairs.loc[todo, "train_id"])
        bpatch.prefetch(pairs.loc[todo, "bench_id"])
        for index in pairs.index[todo]:
            rel = relate_patches(tbook.get(pairs.at[index, "train_id"]), bbook.get(pairs.at[index, "bench_id"]),
                                 sides=("train", "bench"))
            relation[index], reason[index], method[index] = rel.relation, rel.reason, rel.method
    pairs["fix_relation"] = relation.astype("string")
    pairs["fix_method"] = method.astype("string")
    pairs["fix_reason"] = reason.astype("string")
    counts = Counter(pairs["fix_relation"].dropna())
    return {"status": "not_run" if missing else "ran", "reason": "; ".join(missing) or None,
            "pairs": int(len(pairs)), "by_relation": dict(sorted(counts.items())),
            "by_method": dict(sorted(Counter(pairs["fix_method"].dropna()).items())),
            "sharing_fix": int(pairs["fix_relation"].isin(FIX_RELATIONS).sum())}


def _column(pairs: pd.DataFrame, name: str) -> pd.Series:
    """An existing pair column as plain objects (nulls as None), or an all-None column."""
    if name in pairs.columns:
        return pairs[name].astype("object").where(pairs[name].notna(), None)
    return pd.Series([None] * len(pairs), index=pairs.index, dtype="object")


def _crash_grades(comp, train, tcrash: ItemTexts, bcrash: ItemTexts, seed: int) -> dict[str, Any]:
    pairs = comp.pairs
    missing = [s.why_not() for s in (tcrash, bcrash) if not s.available]
    if len(missing) == 2:  # neither side has crash evidence (e.g. SWE sets): the check does not apply
        return {"status": "not_applicable", "reason": "; ".join(missing), "pairs": 0}
    if missing or not len(pairs):
        pairs["crash_grade"] = pd.array(["not_run"] * len(pairs), dtype="string")
        return {"status": "not_run" if missing else "ran", "reason": "; ".join(missing) or None, "pairs": 0}
    tcrash.prefetch(pairs["train_id"])
    bcrash.prefetch(pairs["bench_id"])
    train_sig = {i: parse_crash(tcrash.get(i)) for i in sorted(set(pairs["train_id"]))}
    bench_sig = {i: parse_crash(bcrash.get(i)) for i in sorted(set(pairs["bench_id"]))}
    grades = [grade_crash(train_sig[t], bench_sig[b]) for t, b in zip(pairs["train_id"], pairs["bench_id"],
                                                                      strict=True)]
    pairs["crash_grade"] = pd.array([g.grade for g in grades], dtype="string")
    pairs["crash_reason"] = pd.array([g.reason for g in grades], dtype="string")
    per_bench_item = pairs.groupby("bench_id")["crash_grade"].agg(lambda s: best_grade(list(s)))
    project_of = _project_table(comp.bench).set_index("item_id")["project"]
    matched = [(project_of.get(b), train_sig[t], bench_sig[b], b)
               for t, b in zip(pairs["train_id"], pairs["bench_id"], strict=True)]
    control = control_rate(matched, seed=seed)
    observed = summarize_grades(g.grade for g in grades)
    return {"status": "ran", "pairs": int(len(pairs)),
            "by_grade": dict(sorted(observed.counts.items())), "rates": _rates(observed.rates),
            "best_grade_per_bench_item": dict(sorted(Counter(per_bench_item).items())),
            "not_run": int(observed.n_not_run),
            "control": {"definition": "same grading over same-project pairs of different matched bugs",
                        "pairs": int(control.n_pairs), "projects": int(control.n_projects),
                        "sampled": bool(control.sampled), "seed": seed,
                        "by_grade": dict(sorted(control.counts.items())), "rates": _rates(control.rates)}}


def _rates(rates: dict[str, float]) -> dict[str, float]:
    return {k: round(float(v), 4) for k, v in sorted(rates.items())}


def _related(result, comp) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Train items that share a fix commit or an identical ClusterFuzz crash state with a bench item in the
    ARVO-Meta records, and are not already paired: reported, not counted."""
    pool = getattr(result, "pool", None)
    if pool is None:
        return pd.DataFrame(), {"status": "not_run", "reason": "no ARVO-Meta records loaded (see baselines)"}
    groups = related_groups(pool.table, id_field="canonical_id")
    # A signature shared by many records (a placeholder fix commit, a generic crash state) relates nothing
    # specific and would expand to n² pairs: such groups are counted, not expanded.
    too_common = groups[groups["n_records"] > MAX_RELATED_GROUP]
    groups = groups[groups["n_records"] <= MAX_RELATED_GROUP]
    ids = {"bench": _canonical_items(comp.bench)}
    expanded = related_pairs(groups, focus_ids=ids["bench"].keys())
    # only the training items of the related ids are looked up (a streamed side's keys are read, not held)
    ids["train"] = _canonical_items(result.train, set(expanded["related_id"].astype(str)))
    known = set(zip(comp.pairs["train_id"], comp.pairs["bench_id"], strict=True))
    rows = []
    for r in expanded.itertuples(index=False):
        for bench_id in ids["bench"].get(r.item_id, ()):
            for train_id in ids["train"].get(r.related_id, ()):
                if (train_id, bench_id) not in known:
                    rows.append({"bench": comp.bench.name, "train_id": train_id, "bench_id": bench_id,
                                 "relation": f"related:{r.kind}", "detail": r.signature,
                                 "n_records": int(r.n_records), "strength": r.strength})
    table = pd.DataFrame(rows).drop_duplicates() if rows else pd.DataFrame()
    counts = Counter(table["relation"]) if len(table) else Counter()
    return table, {"status": "ran", "pairs": int(len(table)), "by_relation": dict(sorted(counts.items())),
                   "signatures_too_common": int(len(too_common)),
                   "pair_specific": int((table["strength"] == "pair").sum()) if len(table) else 0,
                   "note": "reported, not counted as overlap; n_records 2 = pair-specific, >= 3 = weak"}


def _canonical_items(dataset, wanted: set[str] | None = None) -> dict[str, list[str]]:
    """{canonical OSS-Fuzz id: the items holding it, in key order}, of the ids in `wanted` (None: all)."""
    out: dict[str, list[str]] = {}
    for keys in dataset.ossfuzz_key_frames():
        for value, item_id in zip(keys["value"], keys["item_id"], strict=True):
            if wanted is None or str(value) in wanted:
                out.setdefault(str(value), []).append(item_id)
    return out


def mark_harness_specs(dataset) -> int:
    """`spec_harness` on a dataset's items: its task is a one-line crash spec that names the fuzz harness
    (`LLVMFuzzerTestOneInput`, …) instead of a crash site — a malformed task `overlap filter --drop
    spec:harness` can remove. Returns how many items carry it."""
    if "crash_report" not in dataset.items.columns:
        return 0
    flags = []
    for text in dataset.items["crash_report"]:
        signature = parse_crash(text) if isinstance(text, str) else None
        flags.append(bool(signature is not None and signature.source == "spec" and signature.harness))
    dataset.items["spec_harness"] = pd.array(flags, dtype="boolean")
    return int(sum(flags))


def attach_evidence(result, *, fix_join: str = "auto", seed: int = 0) -> None:
    """Add evidence columns to every benchmark's pairs and an `evidence` section to its summary block."""
    train = result.train
    harness_specs = mark_harness_specs(train)
    if "spec_harness" in train.items.columns:
        result.sections["train_specs_naming_the_harness"] = harness_specs
    tpatch, tcrash = ItemTexts(train, "patch"), ItemTexts(train, "crash_report")
    tbook = PatchBook(tpatch.get)  # one parse per train item across all benchmarks
    for comp in result.benches:
        bpatch, bcrash = ItemTexts(comp.bench, "patch"), ItemTexts(comp.bench, "crash_report")
        bbook = PatchBook(bpatch.get)
        section = {"fix_join": _fix_join(comp, train, tpatch, bpatch, tbook, bbook, fix_join)}
        section["fix"] = _fix_relations(comp, tpatch, bpatch, tbook, bbook)
        section["crash"] = _crash_grades(comp, train, tcrash, bcrash, seed)
        related, section["related"] = _related(result, comp)
        section["truncated"] = {"train": {"patch": tpatch.truncation(), "crash_report": tcrash.truncation()},
                                "bench": {"patch": bpatch.truncation(), "crash_report": bcrash.truncation()}}
        if len(related):
            comp.related = related if comp.related is None or not len(comp.related) else pd.concat(
                [comp.related, related], ignore_index=True)
        comp.sections["evidence"] = section
    result.parameters["fix_join"] = fix_join
