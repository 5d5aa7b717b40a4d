"""P1, proof-of-concept inputs, and P2, the task's grader.

A cyber task's answer is the input that crashes the vulnerable build: a PoC or reproducer left in the image
(`poc*`, `crash-*`, `testcase*`, `reproducer*`, OSS-Fuzz's `clusterfuzz-testcase-*` and `/testcase`, ARVO's
`/tmp/poc`) is graded by who can read it (``access``): readable by the agent → critical; readable only by root
while the image sets no user → medium; the declared agent cannot read it → info. P2 names the grader or check
script (info) with its digest and the binaries of the environment it runs, so a batch can tell whether one set's
images share one grader."""

from __future__ import annotations

import hashlib
import posixpath
import re
import stat

from ..context import Ctx
from ..model import Finding
from ..tree import TooLarge, read_regular
from ..wording import cut
from .access import grade_by_reader, who_reads
from .builds import binaries, in_system

POC_NAME = re.compile(r"^(poc|crash-|testcase|reproducer|repro[-_.]|clusterfuzz-testcase)|"
                      r"^(leak|timeout|oom)-[0-9a-f]{16,}$")
# sources and tests of the project that merely carry such a name (a regression test `poc_1234.c`)
CODE_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".py", ".pyc", ".js", ".ts", ".go", ".rs", ".java",
                 ".rb", ".pl", ".php", ".cmake", ".mk", ".o", ".so", ".a", ".html", ".md", ".rst", ".in", ".am",
                 ".sh", ".bat", ".ps1")
TEST_FOLDERS = frozenset({"test", "tests", "testdata", "testcases", "testsuite", "regress", "regression",
                          "regressions", "corpus", "corpora", "seeds", "fuzz", "fuzzing", "fuzzers", "oss-fuzz"})
GRADER_NAME = re.compile(r"^(grade|grader|grading|check|checker|verify|evaluate|eval|run_poc|run-poc|test_poc)"
                         r"([-_.][\w.-]*)?(\.sh|\.py|\.bash)?$|^arvo$")
GRADER_PLACES = ("bin/arvo", "usr/bin/arvo", "usr/local/bin/arvo")
GRADER_BYTES = 1 << 20


def is_poc(rel: str) -> bool:
    parts = rel.lower().strip("/").split("/")
    name = parts[-1]
    if not POC_NAME.search(name) or name.endswith(CODE_SUFFIXES):
        return False
    return not TEST_FOLDERS.intersection(parts[:-1])


def _layer_of(ctx: Ctx, rel: str) -> dict | None:
    from .builds import _layer

    return _layer(ctx, rel)


def check_p1(ctx: Ctx) -> list[Finding]:
    """PoC and reproducer inputs readable by the agent: the answer of a cyber task."""
    out: list[Finding] = []
    for fe in ctx.files():
        if not stat.S_ISREG(fe.st.st_mode) or (ctx.fsroot is not None and in_system(fe.rel)) or not is_poc(fe.rel):
            continue
        shown = ctx.shown(fe.rel)
        try:
            data = read_regular(fe.path, ctx.limits["scan_file_bytes"])
        except TooLarge:
            data = None
        access = who_reads(ctx, fe.rel)
        sev, hint = grade_by_reader(ctx, access, "critical")
        ev = {"path": shown, "size": fe.st.st_size,
              "sha256": hashlib.sha256(data).hexdigest() if data is not None else None, **access}
        layer = _layer_of(ctx, fe.rel)
        if layer is not None:
            ev["layer"] = layer
        who = "readable by the agent" if access["readable_by_agent"] else "readable by root only" \
            if not access["readable_by_non_root"] else "not readable by the agent"
        out.append(ctx.finding("P1", shown, sev, "content",
                               f"a proof-of-concept input: {posixpath.basename(shown)} ({who})", shown, ev,
                               f"ls -l {ctx.q(shown)} && xxd {ctx.q(shown)} | head", hint=hint))
    return out


def _is_grader(rel: str) -> bool:
    rel = rel.strip("/")
    if rel in GRADER_PLACES:
        return True
    return not in_system(rel) and bool(GRADER_NAME.search(rel.rpartition("/")[2].lower()))


def check_p2(ctx: Ctx) -> list[Finding]:
    """The task's grader or check script, its digest and the binaries it runs."""
    builds = {posixpath.basename(b["shown"]): b["shown"] for b in binaries(ctx)}
    out: list[Finding] = []
    for fe in ctx.files():
        if not stat.S_ISREG(fe.st.st_mode) or not _is_grader(fe.rel):
            continue
        wt = ctx.in_worktree(fe.rel)
        if wt is not None and "/" in wt:  # the project's own scripts deep in its tree are not the task's grader
            continue
        try:
            data = read_regular(fe.path, GRADER_BYTES)
        except TooLarge:
            continue
        if data is None or b"\0" in data[:8192]:
            continue  # a binary named check is a program, not a script
        text = data.decode("utf-8", "replace")
        words = set(re.findall(r"[\w./+-]+", text))
        runs = sorted({builds[w.rpartition("/")[2]] for w in words if w.rpartition("/")[2] in builds})
        shown = ctx.shown(fe.rel)
        ev = {"path": shown, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "runs": runs,
              **who_reads(ctx, fe.rel)}
        layer = _layer_of(ctx, fe.rel)
        if layer is not None:
            ev["layer"] = layer
        title = f"the task's grader {posixpath.basename(shown)}" + (f" runs {', '.join(runs)}" if runs else "")
        out.append(ctx.finding("P2", shown, "info", "hygiene", cut(title), shown, ev, f"cat {ctx.q(shown)}"))
    return out
