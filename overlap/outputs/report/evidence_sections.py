"""Report sections for the evidence, text and SWE summary blocks (registered on import; see sections.py).

Each reads its block defensively: a field a producer does not write is left out, never an error.
"""

from __future__ import annotations

from typing import Any

from .cell_text import count, part_of, plural, share
from .sections import Block, Note, Section, Table, fmt, generic_blocks, register_section

GRADE_ORDER = ("type_and_frame", "frame_only", "harness_entry_point", "type_only", "type_only_no_frame",
               "file_only", "no_match", "no_match_no_frame", "not_run")
RELATION_ORDER = ("identical", "contains", "contained", "partly_identical", "different", "not_comparable",
                  "not_run")


def _ordered(counts: dict[str, Any], order: tuple[str, ...]) -> list[str]:
    return [k for k in order if k in counts] + sorted(k for k in counts if k not in order)


def _not_run(block: Any, what: str) -> list[Block] | None:
    if not isinstance(block, dict):
        return []
    if block.get("status") in ("not_run", "not_applicable"):
        return [Note(f"{what}: {block.get('status').replace('_', ' ')} ({block.get('reason', 'no reason given')})")]
    return None


def evidence_blocks(value: Any, view, bench: dict | None) -> list[Block]:
    """Fix relations, pairs found by fix alone, crash grades beside the control rate, related bugs."""
    if not isinstance(value, dict):
        return generic_blocks(value, view, bench)
    blocks: list[Block] = []
    fix = value.get("fix", {})
    skipped = _not_run(fix, "Fix relation")
    if skipped is None:
        counts = fix.get("by_relation", {})
        blocks.append(Table(["fix relation", "pairs"],
                            [[k, count(counts[k])] for k in _ordered(counts, RELATION_ORDER)],
                            f"{part_of(fix.get('sharing_fix', 0), fix.get('pairs', 0), word='pair')} share the fix "
                            f"(decided by: {fmt(fix.get('by_method', {}))})"))
    else:
        blocks += skipped
    join = value.get("fix_join", {})
    skipped = _not_run(join, "Pairs by fix alone")
    if skipped is None:
        blocks.append(Note(f"Pairs found by the same fix alone (no shared id): {count(join.get('pairs_added', 0))}, "
                           f"from {plural(join.get('same_project_candidates', 0), 'same-project candidate')} "
                           f"({count(join.get('compared', 0))} compared); "
                           f"{plural(join.get('partly_identical_not_counted', 0), 'partly identical pair')} "
                           "reported, not counted."))
    else:
        blocks += skipped
    crash = value.get("crash", {})
    skipped = _not_run(crash, "Crash grades")
    if skipped is None and crash.get("pairs"):
        matched, control = crash.get("by_grade", {}), crash.get("control", {})
        rates, control_rates = crash.get("rates", {}), control.get("rates", {})
        rows = [[g, count(matched.get(g, 0)), share(rates.get(g)) if g != "not_run" else "",
                 share(control_rates.get(g)) if g != "not_run" else ""]
                for g in _ordered(matched, GRADE_ORDER) if matched.get(g) or control.get("by_grade", {}).get(g)]
        blocks.append(Table(["crash grade", "matched pairs", "matched rate", "control rate"], rows,
                            f"control: {control.get('definition', 'same-project pairs of different bugs')} "
                            f"({plural(control.get('pairs', 0), 'pair')} in "
                            f"{plural(control.get('projects', 0), 'project')}"
                            f"{', sampled' if control.get('sampled') else ''})"))
    elif skipped:
        blocks += skipped
    related = value.get("related", {})
    if isinstance(related, dict) and related.get("status") == "ran" and related.get("pairs"):
        kinds = fmt(related.get("by_relation"))
        blocks.append(Note(f"Related bugs (reported, not counted): {plural(related['pairs'], 'pair')}, "
                           f"{count(related.get('pair_specific', 0))} pair-specific; by kind {kinds}."))
    return blocks


def text_blocks(value: Any, view, bench: dict | None) -> list[Block]:
    """What an n-gram filter flags among the id-matched and the rest, its blind spot, and pair runs."""
    skipped = _not_run(value, "Text check")
    if skipped is not None:
        return skipped or generic_blocks(value, view, bench)
    blocks: list[Block] = []
    for check in value.get("checks", [value]):
        fields = check.get("fields") or {}
        short = (check.get("bench") or {}).get("short") or {}
        rows = []
        for n, flags in sorted((check.get("flags") or {}).items(), key=lambda kv: -int(kv[0])):
            matched, rest = flags.get("id_matched") or {}, flags.get("rest") or {}
            rows.append([n, part_of(matched.get('flagged', 0), matched.get('items', 0)),
                         count(matched.get("by_counterpart", 0)), count(matched.get("by_other_bench_item", 0)),
                         part_of(rest.get('flagged', 0), rest.get('items', 0)),
                         count(flags.get("boilerplate", {}).get("train_items", 0)), count(short.get(str(n), 0))])
        blocks.append(Table(["n", "id-matched flagged", "by own counterpart", "by another bench item",
                             "rest flagged", "boilerplate only", "bench items shorter than n"], rows,
                            f"word n-grams of train `{fields.get('train')}` vs bench `{fields.get('bench')}`"))
        runs = check.get("runs") or {}
        if runs.get("with_text"):
            at_least = ", ".join(f"≥ {n}: {c}" for n, c in sorted((runs.get("at_least_n") or {}).items(),
                                                                     key=lambda kv: -int(kv[0])))
            blocks.append(Note(f"Longest shared word run over {plural(runs['with_text'], 'id-matched pair')}: "
                               f"median {plural(runs.get('median'), 'word')}, max {plural(runs.get('max'), 'word')} "
                               f"({at_least})."))
        idents = check.get("identifiers") or {}
        if idents.get("pairs"):
            function = part_of(idents.get("function_named", 0), idents.get("with_function_target", 0), word="pair")
            file = part_of(idents.get("file_named", 0), idents.get("with_file_target", 0))
            blocks.append(Note(f"Bench text names the train item's function in {function}, its file in {file}."))
    return blocks


def swe_blocks(value: Any, view, bench: dict | None) -> list[Block]:
    """Pull-request identity: bench items each key finds, the counted overlap by kind, subsets, repos."""
    if not isinstance(value, dict) or "found_by_key" not in value:
        return generic_blocks(value, view, bench)
    found, shares = value["found_by_key"], value.get("found_by_key_share", {})
    blocks: list[Block] = [Table(["key", "bench items found", "share"],
                                 [[k, count(found[k]), share(shares[k]) if k in shares else ""] for k in found],
                                 "exact repo+PR, case-folded, canonical (known renames), base+PR, base")]
    overlap = value.get("overlap", {})
    by_kind = overlap.get("bench_items_by_kind", {})
    blocks.append(Table(["pair kind (counted)", "bench items"], [[k, count(v)] for k, v in by_kind.items()],
                        f"overlap: {plural(overlap.get('bench_items', 0), 'bench item')} "
                        f"({share(overlap.get('share'))})"))
    subsets = value.get("subsets", {})
    if subsets:
        blocks.append(Table(["subset", "bench items", "overlap", "share"],
                            [[k, count(v.get("bench_items")), count(v.get("overlap")), share(v.get("share"))]
                             for k, v in subsets.items()], "by subset"))
    repos = value.get("by_repo", [])
    if repos:
        top = sorted(repos, key=lambda r: (-(r.get("overlap") or 0), str(r.get("repo"))))[:30]
        blocks.append(Table(["repo", "bench items", "overlap", "share", "train items in repo"],
                            [[r.get("repo"), count(r.get("bench_items")), count(r.get("overlap")),
                              share(r.get("share")), count(r.get("train_items_in_repo"))] for r in top],
                            "by repo (largest overlap first)"))
    renames = value.get("suggested_renames", [])
    if renames:
        blocks.append(Table(["train repo", "bench repo", "pairs"],
                            [[r.get("train_repo"), r.get("bench_repo"), r.get("pairs")] for r in renames],
                            "suggested renames: the same PR at the same commit under two names"))
    return blocks


register_section(Section("evidence", "Evidence", evidence_blocks))
register_section(Section("text", "Text (n-gram filter view and pair runs)", text_blocks))
register_section(Section("swe", "Pull-request identity", swe_blocks))
