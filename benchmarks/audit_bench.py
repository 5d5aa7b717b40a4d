"""Benchmark of ``overlap audit`` on a large synthetic repository (audit spec §14).

Builds, with ``git fast-import``, a repository of 20,000 tracked files and a history of ~2,000 commits
(> 200,000 objects), checks out a base three quarters of the way along, leaves a branch at the tip
(the future history is the leak) and audits it with a reference fix. Prints the object count, the wall
time of the audit and the peak RSS of the auditing Python process.

    python benchmarks/audit_bench.py              # build in a temp folder, audit, clean up
    python benchmarks/audit_bench.py --keep DIR   # keep (or reuse) the repository in DIR

Targets on the 2-core machine (spec §14): repo audit < 30 s and < 600 MiB. The image part of the
benchmark (a 2 GiB three-layer image) waits for the image reader, which is not built yet.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = 20_000
DIRS = 200
COMMITS = 2_000
CHANGES = 50
BASE_AT = 1_500


def _env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "TZ": "UTC"}


def _stream(out) -> None:
    """A fast-import stream: one commit adding every file, then COMMITS commits changing CHANGES files each."""
    def data(b: bytes) -> None:
        out.write(b"data %d\n" % len(b))
        out.write(b)
        out.write(b"\n")

    t0 = 1_577_872_800  # 2020-01-01
    out.write(b"commit refs/heads/main\nmark :1\ncommitter bench <b@example.org> %d +0000\n" % t0)
    data(b"initial")
    for i in range(FILES):
        out.write(b"M 100644 inline d%03d/f%05d.py\n" % (i % DIRS, i))
        data(b"value_%d = %d\n" % (i, i))
    for c in range(1, COMMITS + 1):
        header = b"commit refs/heads/main\nmark :%d\ncommitter bench <b@example.org> %d +0000\n"
        out.write(header % (c + 1, t0 + c * 3600))
        data(b"change %d" % c)
        out.write(b"from :%d\n" % c)
        for k in range(CHANGES):
            i = (c * 7919 + k * 104729) % FILES
            out.write(b"M 100644 inline d%03d/f%05d.py\n" % (i % DIRS, i))
            data(b"value_%d = %d  # commit %d\n" % (i, i * c, c))
    out.write(b"done\n")


def build(repo: Path, home: Path) -> dict[str, str]:
    env = _env(home)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=env, check=True)
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=repo, env=env, stdin=subprocess.PIPE)
    _stream(proc.stdin)
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    rev = lambda r: subprocess.run(["git", "rev-parse", r], cwd=repo, env=env, check=True,  # noqa: E731
                                   capture_output=True, text=True).stdout.strip()
    base = rev(f"main~{COMMITS + 1 - BASE_AT - 1}")
    tip = rev("main")
    subprocess.run(["git", "branch", "-q", "future", tip], cwd=repo, env=env, check=True)
    subprocess.run(["git", "checkout", "-q", "-B", "work", base], cwd=repo, env=env, check=True)
    # the "fix": the first future commit, as a patch, plus its ID
    fix = rev(f"{tip}~{COMMITS - BASE_AT - 1}")
    patch = subprocess.run(["git", "diff", base, fix], cwd=repo, env=env, check=True, capture_output=True).stdout
    (repo.parent / "fix.patch").write_bytes(patch)
    return {"base": base, "fix": fix}


DRIVER = r"""
import json, resource, sys, time
from overlap.audit import audit
repo, base, fix, patch = sys.argv[1:5]
t0 = time.perf_counter()
report = audit(repo, base=base, fix=[patch], fix_commit=fix)
wall = time.perf_counter() - t0
t = report.targets[0]
print(json.dumps({"wall_s": round(wall, 2), "verdict": report.verdict, "objects": t.stats.get("objects_total"),
                  "nonbase": t.stats.get("objects_nonbase"), "tracked": t.stats.get("tracked_files"),
                  "findings": {f.key: f.severity for f in t.findings},
                  "rss_python_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", metavar="DIR", help="build into (or reuse) DIR instead of a temp folder")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="audit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    repo, home = work / "repo", work / "home"
    home.mkdir(exist_ok=True)
    try:
        ids_file = work / "ids.json"
        if not ids_file.exists():
            t0 = time.perf_counter()
            ids = build(repo, home)
            ids_file.write_text(json.dumps(ids))
            print(f"built {repo} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        ids = json.loads(ids_file.read_text())
        out = subprocess.run([sys.executable, "-c", DRIVER, str(repo), ids["base"], ids["fix"],
                              str(work / "fix.patch")], check=True, capture_output=True, text=True).stdout
        res = json.loads(out)
        print(f"repo audit: {res['objects']:,} objects ({res['nonbase']:,} outside base history), "
              f"{res['tracked']:,} tracked files")
        print(f"  wall time {res['wall_s']:.2f} s (target < 30 s)")
        print(f"  peak RSS of the auditing process: {res['rss_python_mib']:.0f} MiB (target < 600 MiB)")
        print(f"  verdict {res['verdict']}; findings: " + ", ".join(f"{k}={v}" for k, v in res["findings"].items()))
        print("image audit: not measured (the image reader is not built yet)")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
