"""Benchmark of ``overlap audit`` on a large synthetic repository.

Builds, with ``git fast-import``, a repository of 20,000 tracked files and a history of ~2,000 commits
(> 200,000 objects), checks out a base three quarters of the way along, leaves a branch at the tip
(the future history is the leak) and audits it with a reference fix. Prints the object count, the wall
time of the audit and the peak RSS of the auditing Python process.

    python benchmarks/audit_bench.py              # build in a temp folder, audit, clean up
    python benchmarks/audit_bench.py --keep DIR   # keep (or reuse) the repository in DIR

It then wraps that repository into a three-layer ``docker save`` archive of more than 2 GiB
(uncompressed): a bulk layer of large files, the repository at /testbed, and a layer that adds more
data and rewrites two tracked files; and audits the archive.

Targets on the 2-core machine: repo audit < 30 s and < 600 MiB; image audit < 120 s and
< 400 MiB.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
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


BIG = 5 << 20


def _big_files(t: tarfile.TarFile, folder: str, count: int, seed: int) -> None:
    block = hashlib.sha256(str(seed).encode()).digest() * (BIG // 32)
    for i in range(count):
        ti = tarfile.TarInfo(f"{folder}/blob{i:04d}.bin")
        ti.size, ti.mtime = BIG, 1_700_000_000
        t.addfile(ti, io.BytesIO(block))


def build_image(work: Path, repo: Path) -> Path:
    """Three plain-tar layers (about 1 GiB, the repository, about 1 GiB) in a legacy docker save archive."""
    layers = []
    for i in range(3):
        path = work / f"layer{i}.tar"
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
            if i == 0:
                _big_files(t, "usr/share/bulk", 205, 0)
            elif i == 1:
                t.add(repo, arcname="testbed")
            else:
                _big_files(t, "opt/data", 200, 2)
                for rel in ("d000/f00000.py", "d001/f00001.py"):
                    ti = t.gettarinfo(str(repo / rel), arcname=f"testbed/{rel}")
                    ti.mtime += 600
                    with open(repo / rel, "rb") as fh:
                        t.addfile(ti, fh)
        layers.append(path)
    diff_ids = []
    for path in layers:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        diff_ids.append("sha256:" + h.hexdigest())
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {"WorkingDir": "/testbed"},
                      "rootfs": {"type": "layers", "diff_ids": diff_ids},
                      "history": [{"created_by": c} for c in ("bulk", "COPY repo /testbed", "RUN sed -i …")]}).encode()
    out = work / "image.tar"
    with tarfile.open(out, "w") as t:
        cname = hashlib.sha256(cfg).hexdigest() + ".json"
        ti = tarfile.TarInfo(cname)
        ti.size = len(cfg)
        t.addfile(ti, io.BytesIO(cfg))
        for i, path in enumerate(layers):
            t.add(path, arcname=f"{i}/layer.tar")
        man = json.dumps([{"Config": cname, "RepoTags": ["bench:1"],
                           "Layers": [f"{i}/layer.tar" for i in range(3)]}]).encode()
        ti = tarfile.TarInfo("manifest.json")
        ti.size = len(man)
        t.addfile(ti, io.BytesIO(man))
    for path in layers:
        path.unlink()
    return out


DRIVER = r"""
import json, re, resource, sys, time
from overlap.audit import audit


def peak_rss_kib():
    # VmHWM is this process image's own peak; ru_maxrss also counts the parent's RSS recorded at exec
    try:
        return int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1))
    except (OSError, AttributeError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


repo, base, fix, patch = sys.argv[1:5]
t0 = time.perf_counter()
report = audit(repo, base=base, fix=[patch], fix_commit=fix)
wall = time.perf_counter() - t0
t = report.targets[0]
print(json.dumps({"wall_s": round(wall, 2), "verdict": report.verdict, "objects": t.stats.get("objects_total"),
                  "nonbase": t.stats.get("objects_nonbase"), "tracked": t.stats.get("tracked_files"),
                  "findings": {f.key: f.severity for f in t.findings},
                  "rss_python_mib": round(peak_rss_kib() / 1024, 1)}))
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
        f1 = sum(k.startswith("F1:") for k in res["findings"])
        print(f"  verdict {res['verdict']}; {f1} F1 findings; others: " + ", ".join(
            f"{k}={v}" for k, v in res["findings"].items() if not k.startswith("F1:")))
        image = work / "image.tar"
        if not image.exists():
            t0 = time.perf_counter()
            build_image(work, repo)
            print(f"built {image} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out = subprocess.run([sys.executable, "-c", DRIVER, str(image), ids["base"], ids["fix"],
                              str(work / "fix.patch")], check=True, capture_output=True, text=True).stdout
        res = json.loads(out)
        size = sum(m.size for m in tarfile.open(image).getmembers() if m.name.endswith("layer.tar"))
        print(f"image audit: 3 layers, {size / 2**30:.2f} GiB uncompressed, {res['objects']:,} objects")
        print(f"  wall time {res['wall_s']:.2f} s (target < 120 s)")
        print(f"  peak RSS of the auditing process: {res['rss_python_mib']:.0f} MiB (target < 400 MiB)")
        print(f"  verdict {res['verdict']}; findings: " + ", ".join(
            f"{k}={v}" for k, v in res["findings"].items() if not k.startswith("F1:")))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
