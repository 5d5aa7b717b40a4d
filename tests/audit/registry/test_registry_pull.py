"""`overlap audit docker://…` against a real registry (docker-registry on loopback, images from umoci and
skopeo): verdicts by tag and by digest, the shared base layer fetched once, offline runs, platforms."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from overlap.audit import audit
from overlap.audit.image.blobcache import BlobCache
from overlap.audit.image.pull import pull
from overlap.errors import InputError


def test_unreachable_fix_commit_is_a_leak(images, cache):
    report = audit(f"docker://{images.host}/task/leak:1", fix=[str(images.fix_patch)])
    assert report.verdict == "leak"
    t = report.to_dict()["targets"][0]
    assert t["kind"] == "registry" and t["path"] == f"docker://{images.host}/task/leak:1"
    assert t["repo_path"] == "/testbed"
    assert {f["check"] for f in t["findings"] if f["severity"] == "critical"} >= {"F1"}
    assert t["image"]["tags"] == [f"{images.host}/task/leak:1"]
    assert not [f for f in t["findings"] if f["key"] == "L11:archive:skipped"]  # umoci's `./` root is no escape


def test_by_digest_and_without_reference(images, cache):
    digest, _ = images.registry.manifest("task/leak", "1")
    report = audit(f"docker://{images.host}/task/leak@{digest}")
    assert report.verdict == "leak"  # a non-base commit descending from B is future history
    # the digest pins content: it is no commit id, in the image's name or in the target's
    named = [f for t in report.targets for f in t.findings if f.check == "L9" and digest[7:19] in f.title]
    assert not named, [(f.subject, f.title) for f in named]
    by_tag = audit(f"docker://{images.host}/task/leak:1")
    assert sorted(f.check for f in by_tag.targets[0].findings) == sorted(f.check for f in report.targets[0].findings)


def test_single_commit_image_is_not_a_leak(images, cache):
    report = audit(f"docker://{images.host}/task/clean:1", fix=[str(images.fix_patch)])
    assert report.verdict != "leak", [(f.check, f.severity) for t in report.targets for f in t.findings]
    assert report.verdict in ("clean", "suspect")


def test_shared_base_layer_is_downloaded_once(images, cache, proxy):
    first = pull(f"docker://{proxy.addr}/task/leak:1", log=lambda *a: None)
    assert images.base_layer in first.downloaded_blobs
    before = len(proxy.log)
    second = pull(f"docker://{proxy.addr}/task/clean:1")
    fetched = [p for _, p, _ in proxy.log[before:] if "/blobs/" in p]
    assert not any(images.base_layer in p for p in fetched)
    assert images.base_layer in second.cached_blobs and images.base_layer not in second.downloaded_blobs
    assert len(second.downloaded_blobs) == 2  # its own layer and config
    base_size = BlobCache(cache).path(images.base_layer).stat().st_size
    assert second.downloaded_bytes < first.downloaded_bytes - base_size + 1
    # a third pull of the same image fetches no blob at all
    again = pull(f"docker://{proxy.addr}/task/clean:1")
    assert again.downloaded_bytes == 0 and not again.downloaded_blobs
    assert not list((cache / "tmp").iterdir())  # no scratch left behind


def test_offline_uses_only_the_cache(images, cache, proxy, monkeypatch):
    ref = f"docker://{proxy.addr}/task/leak:1"
    pull(ref)
    monkeypatch.setenv("OVERLAP_OFFLINE", "1")
    proxy.rules.append(lambda h: h.reply(500) or True)  # the network is gone
    n = len(proxy.log)
    assert audit(ref, fix=[str(images.fix_patch)]).verdict == "leak"
    assert len(proxy.log) == n
    with pytest.raises(InputError) as exc:
        audit(f"docker://{proxy.addr}/task/clean:1")
    assert "not in the cache" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("value", ["1", "true", "YES"])
def test_hf_hub_offline_leaves_registries_open(images, cache, proxy, monkeypatch, tmp_path, value):
    """HF_HUB_OFFLINE is about the Hugging Face Hub alone (clusters set it): a registry image not in the cache is
    pulled, by one audit and by a `--targets` study's workers; only OVERLAP_OFFLINE closes the registry."""
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    ref = f"docker://{proxy.addr}/task/leak:1"
    assert audit(ref, fix=[str(images.fix_patch)]).verdict == "leak"
    assert proxy.paths("/blobs/")  # pulled over the network, not refused for the cache
    from overlap.audit.study.run import BatchOptions, run_batch
    from overlap.audit.study.targets import read_targets

    targets = tmp_path / "targets.jsonl"
    targets.write_text(json.dumps({"image": f"docker://{proxy.addr}/task/clean:1", "instance_id": "c",
                                   "patch": str(images.fix_patch)}) + "\n")
    (entry,) = run_batch(read_targets(targets), BatchOptions(jobs=1, timeout=300))["targets"]
    assert entry["status"] == "ok", entry.get("error")
    monkeypatch.setenv("OVERLAP_OFFLINE", "1")
    with pytest.raises(InputError, match="not in the cache"):
        audit(f"docker://{proxy.addr}/task/base:1")


def test_platform_of_an_index(images, cache):
    reg = images.registry
    leak_digest, leak = reg.raw_manifest("task/leak", "1")
    clean_digest, clean = reg.raw_manifest("task/clean", "1")
    # the index lives in the leak repository: the clean image is copied there (the registry checks children)
    doc = json.loads(clean)
    for d in [doc["config"], *doc["layers"]]:
        reg.mount("task/leak", d["digest"], "task/clean")
    reg.push_manifest("task/leak", clean_digest, clean)
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": clean_digest,
         "size": len(clean), "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": leak_digest,
         "size": len(leak), "platform": {"os": "linux", "architecture": "amd64"}}]}
    reg.push_manifest("task/leak", "multi", index, "application/vnd.oci.image.index.v1+json")
    ref = f"docker://{images.host}/task/leak:multi"
    assert audit(ref, fix=[str(images.fix_patch)]).verdict == "leak"
    arm = audit(ref, fix=[str(images.fix_patch)], platform="linux/arm64")
    assert arm.verdict != "leak" and arm.targets[0].image["platform"] == "linux/arm64/v8"
    with pytest.raises(InputError, match="no manifest for platform linux/s390x"):
        audit(ref, platform="linux/s390x")


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    code = "import sys\nfrom overlap.cli import main\nsys.argv = ['overlap', 'audit', *sys.argv[1:]]\nmain()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_cli_by_reference(images, cache):
    r = _cli(f"docker://{images.host}/task/leak:1", "--fix", str(images.fix_patch), "--format", "json",
             "--fail-on", "leak")
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["verdict"] == "leak"


@pytest.mark.parametrize("ref, says", [
    ("docker://127.0.0.1:1/task/none:1", "cannot connect"),
    ("docker://Bad/Name", "bad repository name"),
    ("docker://127.0.0.1:{port}/task/missing:1", "not found (HTTP 404)"),
    ("docker://127.0.0.1:{port}/task/leak@sha256:" + "0" * 64, "not found (HTTP 404)"),
])
def test_cli_bad_references_are_one_line(images, cache, ref, says):
    ref = ref.format(port=images.registry.port)
    r = _cli(ref)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and ref in lines[0] and says in lines[0], r.stderr
    assert "Traceback" not in r.stderr
