"""Benchmark of ``overlap audit`` on a full-clone-sized history with large blobs: peak memory of the
near-copy scan of non-base blobs (F3) and wall time.

Builds, with ``git fast-import``, a repository of about 65,000 objects (the size of a large project's full
clone): a base with 2,000 small files, then a branch of future history (kept by a ref, so every object on
it is outside base history) of 5,000 commits touching small files and ~1,000 text blobs of 0.25–2 MiB
(about 1 GiB in all). One large blob carries a near copy of the reference fix, so F3 must find exactly one
store hit. The audit runs in a child process, which reports its own peak RSS (``VmHWM``; the git
processes it starts are not counted: ``cat-file`` streams).

    python benchmarks/audit_history_bench.py                       # this checkout
    python benchmarks/audit_history_bench.py --code OLD --code .   # compare checkouts (before/after)
    python benchmarks/audit_history_bench.py --keep DIR            # keep (or reuse) the repository

Target: peak RSS of the audit < 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL_FILES = 2_000
DIRS = 100
COMMITS = 5_000
BIG_BLOBS = 1_000
BIG_MIN, BIG_MAX = 256 << 10, 2 << 20
TARGET_MB = 500

FIX = """\
diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,3 @@
 def add(a, b):
-    return a - b
+    \"\"\"Return the sum of a and b, fixed for the overflow report.\"\"\"
+    return a + b  # the sum, never the difference of the operands
"""

CHILD = r"""
import json, sys, time
from overlap.audit import audit
t0 = time.monotonic()
r = audit(sys.argv[1], base=sys.argv[2], fix=[sys.argv[3]])
wall = time.monotonic() - t0
t = r.targets[0]
f3 = [f for f in t.findings if f.check == "F3"]
hwm = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
print(json.dumps({"wall_s": round(wall, 1), "vmhwm_mb": round(hwm / 1024, 1),
                  "verdict": r.verdict, "objects": t.stats.get("objects_total"),
                  "f3": {c.id: c.status for c in t.checks}.get("F3"),
                  "f3_store_hits": sorted(h["blob"] for f in f3 if f.subject == "store" for h in f.evidence["items"])}))
"""


def _env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "TZ": "UTC"}


def _text_pool(rng: random.Random) -> bytes:
    """4 MiB of source-like lines; large blobs are windows of it behind a unique first line."""
    lines, size = [], 0
    while size < (4 << 20) + BIG_MAX:
        ln = f"    value_{rng.randrange(10**6)} = compute({rng.randrange(10**9)}, {rng.random():.6f})\n"
        lines.append(ln)
        size += len(ln)
    return "".join(lines).encode()


def _stream(out) -> None:
    rng = random.Random(42)
    pool = _text_pool(rng)

    def data(b: bytes) -> None:
        out.write(b"data %d\n" % len(b))
        out.write(b)
        out.write(b"\n")

    t0 = 1_577_872_800
    out.write(b"commit refs/heads/main\nmark :1\ncommitter bench <b@example.org> %d +0000\n" % t0)
    data(b"base")
    out.write(b"M 100644 inline src/calc.py\n")
    data(b"def add(a, b):\n    return a - b\n")
    for i in range(SMALL_FILES):
        out.write(b"M 100644 inline d%03d/f%05d.py\n" % (i % DIRS, i))
        data(b"value_%d = %d\n" % (i, i))
    near_at = BIG_BLOBS // 2
    big_every = COMMITS // BIG_BLOBS
    nbig = 0
    for c in range(1, COMMITS + 1):
        out.write(b"commit refs/heads/future\nmark :%d\ncommitter bench <b@example.org> %d +0000\n"
                  % (c + 1, t0 + c * 600))
        data(b"future %d" % c)
        out.write(b"from :%d\n" % c)
        for k in range(5):
            i = (c * 7919 + k * 104729) % SMALL_FILES
            out.write(b"M 100644 inline d%03d/f%05d.py\n" % (i % DIRS, i))
            data(b"value_%d = %d  # commit %d\n" % (i, i * c, c))
        if c % big_every == 0 and nbig < BIG_BLOBS:
            size = rng.randrange(BIG_MIN, BIG_MAX)
            start = rng.randrange(0, len(pool) - size)
            body = b"# large generated module %d\n" % nbig + pool[start:start + size]
            if nbig == near_at:  # a near copy of the fix inside a large vendored file
                body += (b"def add(a, b):\n    \"\"\"Return the sum of a and b, fixed for the overflow report.\"\"\"\n"
                         b"    return a + b  # the sum, never the difference of the operands\n")
            out.write(b"M 100644 inline big/m%04d.py\n" % nbig)
            data(body)
            nbig += 1
    out.write(b"done\n")


def build(repo: Path, home: Path) -> str:
    env = _env(home)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=env, check=True)
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=repo, env=env, stdin=subprocess.PIPE)
    _stream(proc.stdin)
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, env=env, check=True)
    base = subprocess.run(["git", "rev-parse", "main"], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    (repo.parent / "fix.patch").write_text(FIX)
    return base


def run_audit(code: Path, repo: Path, base: str, home: Path) -> dict:
    env = {**_env(home), "PYTHONPATH": str(code.resolve())}
    # cwd: ``python -c`` puts the current folder before PYTHONPATH, which would pick the wrong checkout
    proc = subprocess.run([sys.executable, "-c", CHILD, str(repo), base, str(repo.parent / "fix.patch")],
                          env=env, cwd=home, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"audit failed ({code}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, help="build the repository here (reused when it exists)")
    ap.add_argument("--code", type=Path, action="append",
                    help="a checkout of overlap to audit with (repeat to compare; default: this one)")
    args = ap.parse_args()
    codes = args.code or [Path(__file__).resolve().parents[1]]
    tmp = Path(tempfile.mkdtemp(prefix="audit-history-bench-"))
    try:
        home = tmp / "home"
        home.mkdir()
        root = args.keep or tmp
        repo = root / "repo"
        if repo.exists():
            base = subprocess.run(["git", "rev-parse", "main"], cwd=repo, env=_env(home), check=True,
                                  capture_output=True, text=True).stdout.strip()
            print(f"reusing {repo}")
        else:
            root.mkdir(parents=True, exist_ok=True)
            t0 = time.monotonic()
            base = build(repo, home)
            print(f"built {repo} in {time.monotonic() - t0:.1f} s")
        for code in codes:
            res = run_audit(code, repo, base, home)
            ok = "ok" if res["vmhwm_mb"] < TARGET_MB else f"OVER {TARGET_MB} MB"
            print(f"{code}: objects={res['objects']} wall={res['wall_s']} s peak_rss={res['vmhwm_mb']} MB ({ok}) "
                  f"verdict={res['verdict']} F3={res['f3']} "
                  f"store_hits={[h[:12] for h in res['f3_store_hits']]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
