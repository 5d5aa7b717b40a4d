"""Benchmark (not a test): `overlap audit docker://…` on a ~2 GiB image from a local registry.

Builds, in a temporary folder under /tmp (deleted at the end), an OCI layout (written directly, gzip
level 1 layers) with base layers of incompressible random bytes (``--gib`` in total, default 2) and two
task images on them, each adding a small git repository (one with the fix left as an unreachable
commit, one single-commit); pushes them with skopeo to a ``docker-registry`` on a loopback port; then
audits each by ``docker://`` reference in a child process, the two runs sharing one empty blob cache,
and prints for each run: the verdict, the peak RSS (``ru_maxrss``) of the audit process and of the git
processes it ran, the wall time and the bytes downloaded (growth of the cache). The second image shares
the base layers, so it downloads only its own layer and config.

Needs docker-registry, skopeo and git (Debian packages; .ci/run installs them).
Run: python benchmarks/audit_registry_bench.py [--gib 2] [--layers 4]
"""

from __future__ import annotations

import argparse
import gzip
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "audit" / "registry"))

from regkit import TOOLS, Registry, make_repo  # noqa: E402

CHILD = """
import json, resource, sys
from overlap.audit import audit
report = audit(sys.argv[1], fix=sys.argv[2:3])
print(json.dumps({"verdict": report.verdict,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "peak_rss_git_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def _cache_bytes(cache: Path) -> int:
    blobs = cache / "blobs"
    return sum(p.stat().st_size for p in blobs.rglob("*") if p.is_file()) if blobs.exists() else 0


def _audit(ref: str, fix: Path, cache: Path) -> dict:
    """One audit in a child process (spawned, not forked: no memory of this process is inherited), which
    reports its own peak RSS (``ru_maxrss``) and that of the git processes it ran."""
    before = _cache_bytes(cache)
    env = {**os.environ, "OVERLAP_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("OVERLAP_OFFLINE", None)
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-c", CHILD, ref, str(fix)], env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if r.returncode != 0:
        raise SystemExit(f"audit of {ref} failed (exit {r.returncode}): {r.stderr[-2000:]}")
    return {"ref": ref, **json.loads(r.stdout.strip().splitlines()[-1]), "wall_s": wall,
            "downloaded_bytes": _cache_bytes(cache) - before}


class _Hash:
    """A write-only file that hashes (and counts) what passes through to ``out``."""

    def __init__(self, out):
        self.out, self.sha, self.size = out, hashlib.sha256(), 0

    def write(self, b) -> int:
        self.sha.update(b)
        self.size += len(b)
        return self.out.write(b) if self.out is not None else len(b)

    def flush(self) -> None:
        pass


class _Random(io.RawIOBase):
    """``n`` random bytes, read in pieces (never held whole)."""

    def __init__(self, n: int):
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        k = min(len(b), self.left)
        b[:k] = os.urandom(k)
        self.left -= k
        return k


def _layer(blobs: Path, files: list[tuple[str, int | Path]]) -> tuple[dict, str]:
    """A tar+gzip layer written straight into the layout: (descriptor, diff_id). A file is (name, random
    size) or (name, local path)."""
    tmp = blobs / "layer.tmp"
    with open(tmp, "wb") as raw:
        outer = _Hash(raw)
        gz = gzip.GzipFile(fileobj=outer, mode="wb", compresslevel=1, mtime=0)
        inner = _Hash(gz)
        with tarfile.open(fileobj=inner, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for name, what in files:
                info = tarfile.TarInfo(name)
                info.mtime, info.mode = 1700000000, 0o644
                if isinstance(what, Path):
                    info.size = what.stat().st_size
                    with open(what, "rb") as fh:
                        tar.addfile(info, fh)
                else:
                    info.size = what
                    tar.addfile(info, io.BufferedReader(_Random(what), 1 << 20))
        gz.close()
    digest = outer.sha.hexdigest()
    tmp.rename(blobs / digest)
    return ({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": "sha256:" + digest,
             "size": outer.size}, "sha256:" + inner.sha.hexdigest())


def _blob(blobs: Path, data: bytes, media: str) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    (blobs / digest).write_bytes(data)
    return {"mediaType": media, "digest": "sha256:" + digest, "size": len(data)}


def build(work: Path, gib: float, layers: int) -> tuple[Path, Path]:
    """An OCI layout with images ``leak`` and ``clean``: the same random base layers, then each its repo."""
    layout = work / "oci"
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    per = int(gib * 2**30 / layers)
    base = [_layer(blobs, [(f"opt/data/random-{i}.bin", per)]) for i in range(layers)]
    fix = work / "fix.patch"
    index = []
    for tag in ("leak", "clean"):
        repo = work / f"repo-{tag}"
        patch = make_repo(repo, leak=tag == "leak")
        if patch:
            fix.write_text(patch)
        files = [(f"testbed/{p.relative_to(repo)}", p) for p in sorted(repo.rglob("*")) if p.is_file()]
        top = _layer(blobs, files)
        descs, diff_ids = [d for d, _ in base] + [top[0]], [x for _, x in base] + [top[1]]
        config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"WorkingDir": "/testbed"},
                             "rootfs": {"type": "layers", "diff_ids": diff_ids},
                             "history": [{"created_by": f"layer {i}"} for i in range(len(descs))]}).encode()
        manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                               "config": _blob(blobs, config, "application/vnd.oci.image.config.v1+json"),
                               "layers": descs}).encode()
        index.append({**_blob(blobs, manifest, "application/vnd.oci.image.manifest.v1+json"),
                      "annotations": {"org.opencontainers.image.ref.name": tag}})
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": index}))
    return layout, fix


def push(work: Path, layout: Path, tag: str, dest: str) -> None:
    policy = work / "policy.json"
    policy.write_text('{"default": [{"type": "insecureAcceptAnything"}]}')
    subprocess.run(["skopeo", "--policy", str(policy), "copy", "-q", "--dest-tls-verify=false",
                    f"oci:{layout}:{tag}", f"docker://{dest}"], check=True)


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
        t0 = time.monotonic()
        layout, fix = build(work, args.gib, args.layers)
        for tag in ("leak", "clean"):
            push(work, layout, tag, f"{reg.host}/bench/task:{tag}")
        shutil.rmtree(layout)
        print(f"built and pushed {args.gib:g} GiB in {args.layers} random layers + a git repo layer "
              f"in {time.monotonic() - t0:.0f} s", flush=True)
        cache = work / "cache"
        for tag in ("leak", "clean"):
            r = _audit(f"docker://{reg.host}/bench/task:{tag}", fix, cache)
            print(json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()}), flush=True)
    finally:
        if reg is not None:
            reg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
