"""Benchmark (not a test): `overlap audit docker://…` on a ~2 GiB image from a local registry.

Builds, in a temporary folder under /tmp (deleted at the end), a base image of a few layers of
incompressible random bytes (``--gib`` in total, default 2) and two task images on it, each adding a
small git repository (one with the fix left as an unreachable commit, one single-commit); pushes them to
a ``docker-registry`` on a loopback port; then audits each by ``docker://`` reference in a child process
with its own empty blob cache shared by the two runs, and prints for each run: peak RSS of the child
(``ru_maxrss``), wall time, bytes downloaded (growth of the cache) and the verdict. The second run shares
the base layers, so it downloads only its own layer.

Needs docker-registry, skopeo, umoci and git (Debian packages; .ci/run installs them).
Run: python benchmarks/audit_registry_bench.py [--gib 2] [--layers 4]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "audit" / "registry"))

from regkit import TOOLS, Builder, Registry, make_repo  # noqa: E402

CHILD = """
import json, sys
from overlap.audit import audit
report = audit(sys.argv[1], fix=sys.argv[2:3])
print(json.dumps({"verdict": report.verdict}))
"""


def _cache_bytes(cache: Path) -> int:
    blobs = cache / "blobs"
    return sum(p.stat().st_size for p in blobs.rglob("*") if p.is_file()) if blobs.exists() else 0


def _audit(ref: str, fix: Path, cache: Path) -> dict:
    """One audit in a child process; its peak RSS from getrusage of the waited-for child."""
    before = _cache_bytes(cache)
    env = {**os.environ, "OVERLAP_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("OVERLAP_OFFLINE", None)
    start = time.monotonic()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child runs only the audit, so ru_maxrss is the audit's alone
        try:
            os.close(rfd)
            os.dup2(wfd, 1)
            os.execve(sys.executable, [sys.executable, "-c", CHILD, ref, str(fix)], env)
        finally:
            os._exit(127)
    os.close(wfd)
    with os.fdopen(rfd) as out:
        text = out.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"audit of {ref} failed (exit {os.waitstatus_to_exitcode(status)})")
    return {"ref": ref, **json.loads(text.strip().splitlines()[-1]), "peak_rss_mb": usage.ru_maxrss / 1024,
            "wall_s": wall, "downloaded_bytes": _cache_bytes(cache) - before}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=2.0, help="random layer bytes in the base image (GiB)")
    ap.add_argument("--layers", type=int, default=4, help="how many random layers")
    args = ap.parse_args()
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise SystemExit(f"needs {', '.join(missing)} (apt-get install docker-registry skopeo umoci git)")
    work = Path(tempfile.mkdtemp(prefix="overlap-registry-bench-", dir="/tmp"))
    reg = None
    try:
        reg = Registry(work / "registry")
        b = Builder(work / "build")
        per_layer = int(args.gib * 2**30 / args.layers)
        t0 = time.monotonic()
        src = "empty"
        for i in range(args.layers):
            def add(rootfs: Path, i=i) -> None:
                d = rootfs / "opt" / "data"
                d.mkdir(parents=True, exist_ok=True)
                with open(d / f"random-{i}.bin", "wb") as fh:
                    left = per_layer
                    while left:
                        n = min(left, 64 << 20)
                        fh.write(os.urandom(n))
                        left -= n

            b.derive(src, f"base{i}", add, workdir=None)
            src = f"base{i}"
        fix_text = {}
        b.derive(src, "leak", lambda r: fix_text.setdefault("patch", make_repo(r / "testbed", leak=True)))
        b.derive(src, "clean", lambda r: make_repo(r / "testbed", leak=False))
        fix = work / "fix.patch"
        fix.write_text(fix_text["patch"])
        b.push("leak", reg.host, "bench/task:leak")
        b.push("clean", reg.host, "bench/task:clean")
        shutil.rmtree(work / "build")
        print(f"built and pushed {args.gib:g} GiB in {args.layers} random layers + a git repo layer "
              f"in {time.monotonic() - t0:.0f} s", flush=True)
        cache = work / "cache"
        for tag in ("leak", "clean"):
            r = _audit(f"docker://{reg.host}/bench/task:{tag}", fix, cache)
            print(json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()}), flush=True)
        print(f"children's peak RSS (max): {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB "
              "(includes the image build tools)")
    finally:
        if reg is not None:
            reg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
