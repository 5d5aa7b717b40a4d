"""Crash signatures: parse sanitizer reports, one-line crash specs and ClusterFuzz text; grade pairs.

Three inputs, one `CrashSignature`:

- `parse_sanitizer_report(text)`: a full report (ASan, MSan, UBSan incl. `runtime error:` lines,
  LSan, libFuzzer deadly signal / OOM / timeout, Rust panics). Crash type from the `SUMMARY:` line,
  else the `ERROR:`/`WARNING:` headline (a generic `undefined-behavior` / `deadly signal` summary is
  refined by the `runtime error:` / `panicked at` line); the first stack; the top *project* frame,
  skipping sanitizer, compiler-rt, libFuzzer, libc, C++/Rust standard library and unsymbolised frames.
- `parse_crash_spec(text)`: MiMo's one-line spec,
  ``AddressSanitizer: SEGV in function `xsltFuzzXPath` in file `libxslt/tests/fuzz/fuzz.c` ``.
- `parse_clusterfuzz(text)`: ClusterFuzz issue text with `Crash Type:` and `Crash State:` lines
  (ARVO-Meta `report.comments[0].content`, OSV details).

Function names are compared as *bare* names (`bare_function`): no template arguments, parameters,
qualifiers, namespaces/classes, lambda/closure wrappers or Rust hashes. Types are canonicalised
(`canonical_crash_type`) and compared by family (`types_match`), so `SEGV`, `Segv on unknown address`
and `Null-dereference READ` agree.

`grade_crash(a, b)` gives one of GRADES; `best_grade` picks the strongest of several; `control_rate`
grades same-project pairs of *different* matched bugs, the rate a match would reach by chance.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..crashes.crash_types import UB_TYPES, canonical_crash_type, types_match, ubsan_type
from ..crashes.frames import HARNESS_FUNCTIONS, Frame, bare_function, classify_frame
from ..crashes.reports import parse_sanitizer_report
from ..crashes.signature import CrashSignature
from ..crashes.specs import parse_clusterfuzz, parse_crash, parse_crash_spec

#: Grades, strongest first (best_grade picks the earliest). `not_run`: a side has no usable signature.
GRADES = (
    "type_and_frame",
    "frame_only",
    "harness_entry_point",
    "type_only",
    "type_only_no_frame",
    "file_only",
    "no_match",
    "no_match_no_frame",
    "not_run",
)


_GRADE_RANK = {g: i for i, g in enumerate(GRADES)}


@dataclass(frozen=True)
class CrashGrade:
    """Grade of one pair. type/frame/file_match are None when that part could not be compared."""

    grade: str
    type_match: bool | None = None
    frame_match: bool | None = None
    file_match: bool | None = None
    reason: str = ""


@dataclass(frozen=True)
class GradeSummary:
    """Counts and rates per grade. Rates are over graded pairs (`not_run` excluded from the
    denominator and reported as `n_not_run`). For a control: n_projects with at least two matched
    bugs, and `sampled` when the pairs were capped."""

    n_pairs: int
    counts: dict[str, int]
    rates: dict[str, float]
    n_not_run: int = 0
    n_projects: int = 0
    sampled: bool = False

    def rate(self, grade: str) -> float:
        return self.rates.get(grade, 0.0)


def _norm_path(path: str) -> list[str]:
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    return parts


def files_match(a: str | None, b: str | None) -> bool:
    """Same file: one path's components are a suffix of the other's (`/src/x/a/b.c` ~ `a/b.c`)."""
    if not a or not b:
        return False
    pa, pb = _norm_path(a), _norm_path(b)
    if not pa or not pb:
        return False
    short, long_ = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    return long_[-len(short) :] == short


_SITE_SANITIZER_RE = re.compile(r"^_{2,3}interceptor_|^__(?:asan|msan|hwasan)_(?:mem|str|bcmp)")


def _site_names(sig: CrashSignature) -> list[str]:
    """Bare names of the crash-site frames: symbolised frames down to the top project frame, without
    the sanitizer's own reporting frames and the fuzzing engine (interceptors such as
    `__interceptor_memcpy` count, as `memcpy`)."""
    names: list[str] = []
    for f in sig.frames:
        if f.kind in ("project", "harness", "libc", "stdlib") or (
            f.kind == "sanitizer" and _SITE_SANITIZER_RE.match(f.function)
        ):
            names.append(f.bare)
        if f is sig.top_frame:
            break
    return names


def grade_crash(a: CrashSignature | str, b: CrashSignature | str) -> CrashGrade:
    """Grade how well two crash signatures agree (strings are parsed with parse_crash).

    - `not_run`: a side has no usable signature (missing, blank or unparseable text).
    - `harness_entry_point`: a side's top frame is a fuzz harness entry (LLVMFuzzerTestOneInput, ...),
      so the frame says nothing about the crash site (type_match still reported).
    - frames compared (bare names of the top project frames; when a side has none, the crash-site
      frames down to the top project frame, so a spec naming `memcpy` meets a stack whose first frame
      is `__interceptor_memcpy`):
      `type_and_frame`, `frame_only`, `type_only`, `file_only` (same file, different function and
      type), `no_match`.
    - a side has no symbolised frame: `type_only_no_frame`, `file_only` (files still agree), or
      `no_match_no_frame`.
    """
    sa = parse_crash(a) if not isinstance(a, CrashSignature) else a
    sb = parse_crash(b) if not isinstance(b, CrashSignature) else b
    for side, sig in (("a", sa), ("b", sb)):
        if not sig.usable:
            return CrashGrade("not_run", reason=f"{side}: {sig.status}: {sig.reason}")
    type_match = types_match(sa.crash_type, sb.crash_type)
    type_note = f"types {sa.crash_type}/{sb.crash_type}"
    for side, sig in (("a", sa), ("b", sb)):
        if sig.harness:
            return CrashGrade(
                "harness_entry_point",
                type_match=type_match,
                reason=f"{side} names the harness {sig.top_frame.bare}; {type_note}",
            )  # type: ignore[union-attr]
    file_match = files_match(sa.file, sb.file) if sa.file and sb.file else None
    ta, tb = sa.top_frame, sb.top_frame
    if ta is not None and tb is not None:
        frame_match, names = ta.bare == tb.bare, (ta.bare, tb.bare)
    else:
        # A side without a project frame (a spec naming `memcpy`, a stack that crashed in libc with
        # unsymbolised callers): compare the crash-site frames down to the top project frame.
        la, lb = _site_names(sa), _site_names(sb)
        if not la or not lb:
            if type_match:
                grade = "type_only_no_frame"
            elif file_match:
                grade = "file_only"
            else:
                grade = "no_match_no_frame"
            missing = "a" if not la else "b"
            return CrashGrade(
                grade,
                type_match=type_match,
                file_match=file_match,
                reason=f"{missing} has no symbolised frame; {type_note}",
            )
        frame_match, names = bool(set(la) & set(lb)), (la[0], lb[0])
    reason = f"{type_note}; frames {names[0]}/{names[1]}"
    if type_match and frame_match:
        grade = "type_and_frame"
    elif frame_match:
        grade = "frame_only"
    elif type_match:
        grade = "type_only"
    elif file_match:
        grade = "file_only"
    else:
        grade = "no_match"
    return CrashGrade(
        grade, type_match=type_match, frame_match=frame_match, file_match=file_match, reason=reason
    )


def best_grade(grades: Iterable[CrashGrade | str]) -> str:
    """The strongest grade (earliest in GRADES); `not_run` for none."""
    best = "not_run"
    for g in grades:
        name = g.grade if isinstance(g, CrashGrade) else str(g)
        if name not in _GRADE_RANK:
            raise ValueError(f"unknown crash grade '{name}'")
        if _GRADE_RANK[name] < _GRADE_RANK[best]:
            best = name
    return best


def summarize_grades(grades: Iterable[CrashGrade | str]) -> GradeSummary:
    """Counts and rates per grade (rates over graded pairs, `not_run` excluded)."""
    counts = dict.fromkeys(GRADES, 0)
    for g in grades:
        counts[g.grade if isinstance(g, CrashGrade) else str(g)] += 1
    n = sum(counts.values())
    graded = n - counts["not_run"]
    rates = {g: (counts[g] / graded if graded else 0.0) for g in GRADES if g != "not_run"}
    return GradeSummary(n_pairs=n, counts=counts, rates=rates, n_not_run=counts["not_run"])


def control_rate(
    matched: Iterable[Sequence], *, max_pairs: int | None = 200_000, seed: int = 0
) -> GradeSummary:
    """Grades of same-project pairs of *different* matched bugs: what a match reaches by chance.

    `matched`: one tuple per matched pair, `(project, train_sig, bench_sig)` or
    `(project, train_sig, bench_sig, bug_id)`; signatures may be CrashSignature or text. Every train
    signature is graded against the bench signature of every other matched pair of the same project,
    skipping pairs of the same bug: same `bug_id`, or the same CrashSignature object on the train or
    bench side (an item matched twice). Pass `bug_id` when signatures are given as text.
    With more than `max_pairs` control pairs, a seeded uniform sample of that size is graded
    (`sampled=True`).
    """
    by_project: dict[str, list[tuple]] = defaultdict(list)
    for row in matched:
        project, train_sig, bench_sig = row[0], row[1], row[2]
        bug = row[3] if len(row) > 3 else None
        if project is None or (isinstance(project, float) and math.isnan(project)):
            continue
        t = train_sig if isinstance(train_sig, CrashSignature) else parse_crash(train_sig)
        b = bench_sig if isinstance(bench_sig, CrashSignature) else parse_crash(bench_sig)
        # The same parsed signature object in two rows is the same item matched twice: not a control.
        tid = (
            id(train_sig) if isinstance(train_sig, CrashSignature) else ("row", len(by_project[str(project)]))
        )
        bid = (
            id(bench_sig) if isinstance(bench_sig, CrashSignature) else ("row", len(by_project[str(project)]))
        )
        by_project[str(project)].append((t, b, bug, tid, bid))
    groups = {p: rows for p, rows in sorted(by_project.items()) if len(rows) >= 2}
    total = sum(len(r) * (len(r) - 1) for r in groups.values())
    sampled = max_pairs is not None and total > max_pairs
    rng = random.Random(seed)
    grades: list[CrashGrade] = []
    for rows in groups.values():
        k = len(rows)
        n_ordered = k * (k - 1)
        if sampled:
            quota = max(1, round(max_pairs * n_ordered / total))  # type: ignore[operator]
            picks = sorted(rng.sample(range(n_ordered), min(quota, n_ordered)))
        else:
            picks = range(n_ordered)
        for p in picks:
            i, r = divmod(p, k - 1)
            j = r if r < i else r + 1
            ti, _, bug_i, tid_i, bid_i = rows[i]
            _, bj, bug_j, tid_j, bid_j = rows[j]
            if (bug_i is not None and bug_i == bug_j) or tid_i == tid_j or bid_i == bid_j:
                continue
            grades.append(grade_crash(ti, bj))
    summary = summarize_grades(grades)
    return GradeSummary(
        n_pairs=summary.n_pairs,
        counts=summary.counts,
        rates=summary.rates,
        n_not_run=summary.n_not_run,
        n_projects=len(groups),
        sampled=sampled,
    )


__all__ = [
    "GRADES", "HARNESS_FUNCTIONS", "UB_TYPES", "CrashGrade", "CrashSignature", "Frame", "GradeSummary",
    "bare_function", "best_grade", "canonical_crash_type", "classify_frame", "control_rate", "files_match",
    "grade_crash", "parse_clusterfuzz", "parse_crash", "parse_crash_spec", "parse_sanitizer_report",
    "summarize_grades", "types_match", "ubsan_type",
]  # fmt: skip
