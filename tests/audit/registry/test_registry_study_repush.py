"""A tag pushed again with other content, re-run into the same `--out`: the study resumes by the manifest the
tag resolves to, not by the reference string, so the new content is audited (a clean image re-pushed with a
leak planted reads LEAK), while a re-run with nothing re-pushed still reuses every result. Against the real
registry the audit tests start (docker-registry on loopback); the expected verdicts are those of a single
audit of each original tag."""

from __future__ import annotations

import json
import uuid

import pytest
from regkit import OCI_MANIFEST

from overlap.audit import audit
from overlap.audit.study.run import BatchOptions, run_batch
from overlap.audit.study.targets import read_targets


def _copy_tag(registry, source: str, repo: str, tag: str) -> str:
    """Point `repo:tag` at the image `source:1` (its blobs mounted into `repo`, its manifest byte for byte)."""
    digest, raw = registry.raw_manifest(source, "1")
    doc = json.loads(raw)
    for descriptor in [doc["config"], *doc["layers"]]:
        registry.mount(repo, descriptor["digest"], source)
    assert registry.push_manifest(repo, tag, raw, doc.get("mediaType") or OCI_MANIFEST) == digest
    return digest


def _study(images, targets_file, out):
    doc = run_batch(read_targets(targets_file), BatchOptions(jobs=1, timeout=300), out=out)
    (entry,) = doc["targets"]
    return entry


@pytest.mark.parametrize("first, then", [("clean", "leak"), ("leak", "clean")])
def test_a_tag_pushed_again_with_other_content_is_audited_again(images, cache, tmp_path, first, then):
    expected = {name: audit(f"docker://{images.host}/task/{name}:1", fix=[str(images.fix_patch)]).verdict
                for name in (first, then)}
    assert expected[first] != expected[then]
    repo = f"task/repush-{uuid.uuid4().hex[:8]}"
    targets = tmp_path / "targets.jsonl"
    targets.write_text(json.dumps({"image": f"docker://{images.host}/{repo}:v1", "instance_id": "task-1",
                                   "patch": str(images.fix_patch)}) + "\n")
    out = tmp_path / "run"

    _copy_tag(images.registry, f"task/{first}", repo, "v1")
    before = _study(images, targets, out)
    assert before["status"] == "ok" and before["verdict"] == expected[first]

    again = _study(images, targets, out)  # nothing pushed: the same key, the result reused
    assert again == before

    _copy_tag(images.registry, f"task/{then}", repo, "v1")
    after = _study(images, targets, out)
    assert after["status"] == "ok" and after["verdict"] == expected[then], after
    assert after["key"] != before["key"]
