"""Images read without Docker: formats, digests, whiteouts, alternates inside the image,
hostile archives and a decompression bomb."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pytest
from test_audit_fixtures import assert_findings

from overlap.audit import audit
from overlap.audit.context import DEFAULT_LIMITS
from overlap.audit.image.archive import open_image
from overlap.audit.image.layers import merge
from overlap.errors import InputError

VALIDATE = {"T1:worktree": "high", "T3:layers": "high", "L8:config.Env.0": "high",
            "L9:tag:task/calc:fix-9130aa3": "low", "L11:/tmp/fix.patch": "info"}


@pytest.mark.parametrize("name", ["img-validate.tar", "img-validate-oci.tar"])
def test_validate_images(gitfix, name):
    report = audit(gitfix.path(name), **gitfix.R)
    assert_findings(report, VALIDATE, "leak")
    t = report.targets[0]
    by = {f.key: f for f in t.findings}
    assert by["T1:worktree"].evidence["gap"] == 420.0 and by["T1:worktree"].evidence["jaccard"] == 1.0
    t3 = by["T3:layers"].evidence
    assert {i["path"]: i["layer"] for i in t3["items"]} == {"src/calc.py": 2, "tests/test_calc.py": 2}
    assert all(i["edit_command"] for i in t3["items"]) and t3["jaccard"] == 1.0
    assert by["L11:/tmp/fix.patch"].evidence["hunks"]  # the shadowed file is the reference patch


def test_docker_and_oci_reports_agree(gitfix):
    a = audit(gitfix.path("img-validate.tar"), **gitfix.R).to_dict()["targets"][0]
    b = audit(gitfix.path("img-validate-oci.tar"), **gitfix.R).to_dict()["targets"][0]
    assert (a["kind"], b["kind"]) == ("docker-save", "oci-layout")
    assert [(f["key"], f["severity"], f["evidence"]) for f in a["findings"]] == \
        [(f["key"], f["severity"], f["evidence"]) for f in b["findings"]]
    assert [x["diff_id"] for x in a["image"]["layers"]] == [x["diff_id"] for x in b["image"]["layers"]]


def test_normalised_image_is_caught_by_layers_only(gitfix):
    report = audit(gitfix.path("img-normalised.tar"), **gitfix.R)
    assert_findings(report, {"T3:layers": "high", "L11:/tmp/fix.patch": "info"}, "leak")
    assert_findings(audit(gitfix.path("img-normalised.tar"), base=gitfix.base), {"T3:layers": "medium"}, "suspect")


def test_control_image_is_clean(gitfix):
    assert_findings(audit(gitfix.path("ctl-img.tar"), **gitfix.R), {}, "clean")


def test_whiteouts_apply_to_lower_layers_wherever_the_marker_sits(gitfix):
    img = open_image(gitfix.L / "img-whiteout.tar", "docker-save")
    merged = merge(img, DEFAULT_LIMITS)
    files = {p: e.layer for p, e in merged.entries.items() if e.kind == "file"}
    assert files == {"a/y": 0, "d/new": 1}
    assert {p for p, e in merged.entries.items() if e.kind == "dir"} == {"a", "d"}
    assert sorted(s["path"] for s in merged.shadowed) == ["/a/x", "/d/old1", "/d/old2"]
    assert ".wh..wh.plnk" not in merged.entries
    assert [s["reason"] for s in merged.skipped] == ["bad whiteout marker"]


def test_alternates_inside_the_image_are_rewritten(gitfix):
    report = audit(gitfix.path("img-alt.tar"), **gitfix.R)
    assert_findings(report, {"G9:/opt/up.git/objects": "critical", "G13:/opt/up.git": "critical",
                             "G5:alternate:/opt/up.git/objects": "critical", "G6:unreachable": "critical",
                             "F1:src/calc.py": "critical", "F2:tests/test_calc.py": "critical",
                             "F1:fix-commit:*": "critical"}, "leak")
    assert "overlap-audit-" not in report.to_json()


def test_alternates_to_a_host_path_are_never_read(gitfix):
    report = audit(gitfix.path("img-alt-host.tar"), **gitfix.R)
    line = str(gitfix.L / "up/.git/objects")
    assert_findings(report, {f"G9:{line}": "low"}, "clean")
    own = audit(gitfix.path("ctl-img.tar"), **gitfix.R).targets[0].stats["objects_total"]
    assert report.targets[0].stats["objects_total"] == own  # the host store next door was not read


def test_nested_store_alternates_to_a_host_path_are_never_read(gitfix, tmp_path):
    """A second store in the image (G13) gets the same git-folder rewriting as the audited one."""
    import shutil

    layer = tmp_path / "l0"
    shutil.copytree(gitfix.L / "r", layer / "testbed", symlinks=True)
    subprocess.run(["git", "init", "-q", "--bare", str(layer / "opt/vendor.git")], check=True,
                   env={"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(tmp_path)})
    line = str(gitfix.L / "up/.git/objects")  # the leaky upstream store, on this machine only
    (layer / "opt/vendor.git/objects/info/alternates").write_text(line + "\n")
    subprocess.run([sys.executable, str(Path(__file__).parent / "fixtures/mkimage.py"), str(tmp_path / "img.tar"),
                    "docker", "t:1", "[]", str(layer), "clone"], check=True)
    report = audit(str(tmp_path / "img.tar"), **gitfix.R)
    assert_findings(report, {"G13:/opt/vendor.git": "low"}, "clean")
    g13 = report.targets[0].findings[0].evidence
    assert g13["objects"] == 0 and g13["fixed_blobs"] == []
    assert [f["key"] for f in g13["findings"]] == [f"G9:{line}"]


@pytest.mark.parametrize("chained", ["/opt/up.git/objects", "host"])
def test_chained_alternates_are_rewritten_at_every_link(gitfix, tmp_path, chained):
    """/testbed -> /opt/a.git/objects -> CHAINED: git follows the whole chain, so each link is resolved in
    the image; a link naming a host path is dropped, never read."""
    import shutil

    layer = tmp_path / "l0"
    shutil.copytree(gitfix.L / "r", layer / "testbed", symlinks=True)
    env = {"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q", "--bare", str(layer / "opt/a.git")], check=True, env=env)
    if chained != "host":
        subprocess.run(["git", "clone", "-q", "--bare", f"file://{gitfix.L}/up", str(layer / "opt/up.git")],
                       check=True, env=env)
    line = str(gitfix.L / "up/.git/objects") if chained == "host" else chained
    (layer / "opt/a.git/objects/info/alternates").write_text(line + "\n")
    (layer / "testbed/.git/objects/info/alternates").write_text("/opt/a.git/objects\n")
    subprocess.run([sys.executable, str(Path(__file__).parent / "fixtures/mkimage.py"), str(tmp_path / "img.tar"),
                    "docker", "t:1", "[]", str(layer), "clone"], check=True)
    report = audit(str(tmp_path / "img.tar"), **gitfix.R)
    keys = {f.key: f.severity for f in report.targets[0].findings}
    if chained == "host":
        assert keys[f"G9:{line}"] == "low" and report.verdict == "clean"
        assert report.targets[0].stats["objects_nonbase"] == 0  # the host store was not read
    else:
        assert keys["G5:alternate:/opt/up.git/objects"] == "critical" and keys["F1:src/calc.py"] == "critical"
        assert keys["G9:/opt/up.git/objects"] == "critical" and report.verdict == "leak"
    assert "overlap-audit-" not in report.to_json()


def test_hostile_archive_writes_nothing_outside(gitfix, tmp_path):
    report = audit(gitfix.path("img-hostile.tar"), **gitfix.R)
    assert report.verdict == "clean" and report.exit_code == 0
    for up in (gitfix.L, gitfix.L.parent, gitfix.L.parent.parent):
        assert not (up / "escape.txt").exists() and not (up / "up.txt").exists()
    assert not (gitfix.L / "abs.txt").exists()
    t = report.targets[0]
    skipped = next(f for f in t.findings if f.key == "L11:archive:skipped")
    reasons = {i["path"]: i["reason"] for i in skipped.evidence["items"]}
    assert reasons["../../escape.txt"] == "name escapes the root"
    assert reasons["testbed/a/../../../up.txt"] == "name escapes the root"
    assert "character" not in json.dumps(reasons)  # devices are named by kind
    assert any("device" in r for r in reasons.values()) and any("fifo" in r for r in reasons.values())
    assert any("hardlink" in r for r in reasons.values())
    assert any(p == "testbed/link/passwd" for p in reasons)  # relocated under the symlink's target, in the map
    # an alternate climbing past the root is the image's /etc, as git in the container reads it (`/..` is `/`):
    # an object store holding no object, never the host's folder
    g9 = next(f for f in t.findings if f.key == "G9:/../../../../etc")
    assert g9.severity == "info" and g9.evidence["nonbase_objects"] == 0


def test_digest_mismatch_is_an_input_error(gitfix, tmp_path):
    bad = tmp_path / "bad.tar"
    with tarfile.open(gitfix.L / "ctl-img.tar") as src, tarfile.open(bad, "w") as out:
        for m in src.getmembers():
            data = src.extractfile(m).read()
            if m.name.endswith("layer.tar"):
                data = data.replace(b"x1 = 1", b"x1 = 9")
            m.size = len(data)
            out.addfile(m, io.BytesIO(data))
    with pytest.raises(InputError, match="diff_ids"):
        audit(str(bad))


def _bomb(path, size: int) -> None:
    """An OCI layout tar holding one layer with one file of ``size`` zero bytes, streamed (tiny memory)."""
    ti = tarfile.TarInfo("zeros")
    ti.size = size
    header = ti.tobuf(format=tarfile.PAX_FORMAT)
    pad = (512 - size % 512) % 512
    raw_sha = hashlib.sha256()
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunks = []

    def feed(b: bytes) -> None:
        raw_sha.update(b)
        c = comp.compress(b)
        if c:
            chunks.append(c)

    feed(header)
    zero = bytes(1 << 20)
    left = size
    while left:
        n = min(left, len(zero))
        feed(zero[:n])
        left -= n
    feed(bytes(pad + 1024))
    chunks.append(comp.flush())
    gz = b"".join(chunks)
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                      "rootfs": {"type": "layers", "diff_ids": ["sha256:" + raw_sha.hexdigest()]},
                      "history": [{"created_by": "zeros"}]}).encode()

    def add(t, name, data):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))

    def blob(t, data):
        h = hashlib.sha256(data).hexdigest()
        add(t, "blobs/sha256/" + h, data)
        return "sha256:" + h

    with tarfile.open(path, "w") as t:
        layer = {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": blob(t, gz), "size": len(gz)}
        config = {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(t, cfg), "size": len(cfg)}
        man = json.dumps({"schemaVersion": 2, "layers": [layer], "config": config}).encode()
        add(t, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        add(t, "index.json", json.dumps({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": blob(t, man), "size": len(man),
            "annotations": {"org.opencontainers.image.ref.name": "bomb:1"}}]}).encode())


DRIVER = """
import json, re, resource, sys
from overlap.audit import audit
from overlap.errors import InputError
try:
    r, error = audit(sys.argv[1], limits=dict(a.split("=") for a in sys.argv[2:])), None
except InputError as exc:  # read whole, then refused: the image holds no repository
    r, error = None, str(exc)
try:  # peak RSS of this process image (ru_maxrss would include the forking parent's, recorded at exec)
    rss = int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
except (OSError, AttributeError):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"verdict": r.verdict if r else "error", "exit": r.exit_code if r else 2, "rss": rss,
                  "error": error,
                  "reasons": sorted({c.reason for t in r.targets for c in t.incomplete_checks()}) if r else []}))
"""


def test_decompression_bomb_is_bounded(tmp_path):
    bomb = tmp_path / "img-bomb.tar"
    _bomb(bomb, 512 << 20)
    assert bomb.stat().st_size < 2 << 20
    # it holds no repository: read whole within the memory bound and audited without git (one file of zeros,
    # nothing to find); over a smaller image limit, incomplete (exit 2)
    for args, verdict in (([], "clean"), (["image_bytes=64M"], "incomplete")):
        out = subprocess.run([sys.executable, "-c", DRIVER, str(bomb), *args], capture_output=True, text=True,
                             check=True).stdout
        res = json.loads(out)
        assert res["verdict"] == verdict, res
        assert res["rss"] < 200 * 1024, res  # KiB: peak RSS under 200 MiB either way
        if verdict == "incomplete":
            assert res["exit"] == 2 and any("image_bytes" in r for r in res["reasons"])
        else:
            assert res["exit"] == 0 and res["error"] is None, res


def _assert_same_findings(a, b) -> None:
    fa = [(f["key"], f["severity"], f["evidence"]) for f in a.to_dict()["targets"][0]["findings"]]
    fb = [(f["key"], f["severity"], f["evidence"]) for f in b.to_dict()["targets"][0]["findings"]]
    assert fa == fb


def test_every_image_path_kind(gitfix, tmp_path):
    """OCI layout and docker save as folders and a Docker 25+ hybrid archive read the same (zstd layers:
    test_audit_image_layers.py)."""
    ref = audit(gitfix.path("img-validate-oci.tar"), **gitfix.R)
    oci_dir = tmp_path / "oci"
    with tarfile.open(gitfix.L / "img-validate-oci.tar") as t:
        t.extractall(oci_dir, filter="data")
    folder = audit(str(oci_dir), **gitfix.R)
    assert folder.targets[0].kind == "oci-layout"
    _assert_same_findings(ref, folder)
    docker_dir = tmp_path / "docker"
    with tarfile.open(gitfix.L / "img-validate.tar") as t:
        t.extractall(docker_dir, filter="data")
    assert audit(str(docker_dir), **gitfix.R).targets[0].kind == "docker-save"
    # Docker 25+: an OCI layout plus a manifest.json whose Layers point into blobs/ (manifest.json wins)
    index = json.loads((oci_dir / "index.json").read_text())
    man = json.loads((oci_dir / "blobs/sha256" / index["manifests"][0]["digest"].split(":")[1]).read_text())
    hybrid = tmp_path / "hybrid"
    hybrid_tar = tmp_path / "hybrid.tar"
    import shutil

    shutil.copytree(oci_dir, hybrid)
    (hybrid / "manifest.json").write_text(json.dumps([{
        "Config": "blobs/sha256/" + man["config"]["digest"].split(":")[1], "RepoTags": ["task/calc:fix-9130aa3"],
        "Layers": ["blobs/sha256/" + x["digest"].split(":")[1] for x in man["layers"]]}]))
    with tarfile.open(hybrid_tar, "w") as t:
        for p in sorted(hybrid.rglob("*")):
            t.add(p, arcname=str(p.relative_to(hybrid)), recursive=False)
    hyb = audit(str(hybrid_tar), **gitfix.R)
    assert hyb.targets[0].kind == "docker-save"
    _assert_same_findings(ref, hyb)


def test_rootfs_tar(gitfix, tmp_path):
    """A flat root filesystem tar (docker export): one layer, no config; T3 and L8 do not apply."""
    out = tmp_path / "root.tar"
    with tarfile.open(out, "w") as t:
        t.add(gitfix.L / "root", arcname=".")
    report = audit(str(out), repo_path="/testbed", **gitfix.R)
    t = report.targets[0]
    assert t.kind == "rootfs-tar" and report.verdict == "leak"
    status = {c.id: c.status for c in t.checks}
    assert status["T3"] == status["L8"] == "not_applicable"
    keys = {f.key for f in t.findings}
    assert {"L1:/home/fix.patch", "L7:/root/.bash_history", "F2:tests/test_calc.py"} <= keys


@pytest.mark.parametrize("link", ["/srv/real", "srv/real", "../../srv/real"])
def test_a_symlinked_repository_is_followed_inside_the_image(gitfix, tmp_path, link):
    """`/testbed` a symlink to the repository (absolute, relative, climbing past the root): found where the
    container finds it, by chroot rules, never through a host path."""
    out = tmp_path / "root.tar"
    with tarfile.open(out, "w") as t:
        t.add(gitfix.L / "root/testbed", arcname="srv/real")
        info = tarfile.TarInfo("testbed")
        info.type, info.linkname = tarfile.SYMTYPE, link
        t.addfile(info)
    report = audit(str(out), **gitfix.R)
    assert report.verdict == "leak" and report.targets[0].repo_path == "/testbed"


def test_a_git_folder_linked_from_the_worktree_is_the_repository(gitfix, tmp_path):
    """`/testbed/.git` a symlink to a git folder elsewhere in the image, as git in the container reads it."""
    out = tmp_path / "root.tar"
    root = gitfix.L / "root/testbed"
    with tarfile.open(out, "w") as t:
        t.add(root / ".git", arcname="srv/store.git")
        for child in sorted(root.iterdir()):
            if child.name != ".git":
                t.add(child, arcname=f"testbed/{child.name}")
        info = tarfile.TarInfo("testbed/.git")
        info.type, info.linkname = tarfile.SYMTYPE, "/srv/store.git"
        t.addfile(info)
    assert audit(str(out), **gitfix.R).verdict == "leak"


def test_image_input_errors(gitfix, tmp_path):
    not_rootfs = tmp_path / "random.tar"
    with tarfile.open(not_rootfs, "w") as t:
        t.add(gitfix.L / "fix.patch", arcname="fix.patch")
    with pytest.raises(InputError, match="neither manifest.json"):
        audit(str(not_rootfs))
    with pytest.raises(InputError, match="no image 'nope'"):
        audit(gitfix.path("img-validate.tar"), image="nope")
    with pytest.raises(InputError, match="--repo-path /nowhere"):
        audit(gitfix.path("img-validate.tar"), repo_path="/nowhere")


def test_platform_selection_in_an_image_index(gitfix, tmp_path):
    oci_dir = tmp_path / "oci"
    with tarfile.open(gitfix.L / "img-validate-oci.tar") as t:
        t.extractall(oci_dir, filter="data")
    blobs = oci_dir / "blobs/sha256"
    index = json.loads((oci_dir / "index.json").read_text())
    desc = index["manifests"][0]
    man = json.loads((blobs / desc["digest"].split(":")[1]).read_text())
    arm = json.dumps({**man, "layers": man["layers"][:1]}).encode()  # a different, one-layer arm64 image
    arm_digest = "sha256:" + hashlib.sha256(arm).hexdigest()
    (blobs / arm_digest.split(":")[1]).write_bytes(arm)
    image_index = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                              "manifests": [
                                  {**desc, "annotations": {}, "platform": {"os": "linux", "architecture": "amd64"}},
                                  {"mediaType": desc["mediaType"], "digest": arm_digest, "size": len(arm),
                                   "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}}]}).encode()
    idx_digest = "sha256:" + hashlib.sha256(image_index).hexdigest()
    (blobs / idx_digest.split(":")[1]).write_bytes(image_index)
    index["manifests"] = [{"mediaType": "application/vnd.oci.image.index.v1+json", "digest": idx_digest,
                           "size": len(image_index), "annotations": desc["annotations"]}]
    (oci_dir / "index.json").write_text(json.dumps(index))
    amd = audit(str(oci_dir), **gitfix.R)
    assert amd.targets[0].image["platform"] == "linux/amd64" and amd.verdict == "leak"
    # as from a registry: an entry with a variant is taken by its os/architecture, or with the variant named
    for asked in ("linux/arm64", "linux/arm64/v8"):
        arm64 = audit(str(oci_dir), platform=asked, **gitfix.R)
        assert arm64.targets[0].image["platform"] == "linux/arm64/v8"
        assert len(arm64.targets[0].image["layers"]) == 1
    with pytest.raises(InputError, match=r"platform linux/s390x \(the index has: linux/amd64, linux/arm64/v8\)"):
        audit(str(oci_dir), platform="linux/s390x")
    for bad in ("linux", "///", "linux/"):
        with pytest.raises(InputError, match="give os/architecture"):
            audit(str(oci_dir), platform=bad)


def test_an_explicit_platform_is_checked_on_an_image_of_one_platform(gitfix):
    """No index to choose from: the image's config says its platform, and asking for another is refused (the
    audit would read another platform's files than the one asked for); a malformed --platform is refused."""
    image = gitfix.path("img-validate-oci.tar")
    config_platform = audit(image, **gitfix.R)
    assert config_platform.verdict == "leak"
    assert audit(image, platform="linux/amd64", **gitfix.R).verdict == "leak"
    with pytest.raises(InputError, match=r"the image is for linux/amd64, not linux/arm64; leave out --platform"):
        audit(image, platform="linux/arm64", **gitfix.R)
    with pytest.raises(InputError, match="give os/architecture"):
        audit(image, platform="bogus", **gitfix.R)


def test_git_findings_name_the_layer_that_wrote_the_file(gitfix, tmp_path):
    """The swb5 ORIG_HEAD written by a later RUN: the G4 finding says which layer wrote it."""
    import shutil

    l0, l1 = tmp_path / "l0/testbed", tmp_path / "l1/testbed/.git"
    shutil.copytree(gitfix.L / "ctl-swb5", l0, symlinks=True)
    l1.mkdir(parents=True)
    shutil.copy(gitfix.L / "swb5/.git/ORIG_HEAD", l1 / "ORIG_HEAD")
    subprocess.run([sys.executable, str(Path(__file__).parent / "fixtures/mkimage.py"), str(tmp_path / "img.tar"),
                    "docker", "t:1", "[]", str(tmp_path / "l0"), "clone", str(tmp_path / "l1"),
                    "RUN git reset --hard BASE"], check=True)
    t = audit(str(tmp_path / "img.tar"), base=gitfix.base).targets[0]
    g4 = next(f for f in t.findings if f.key == "G4:ORIG_HEAD")
    assert g4.severity == "low" and g4.evidence["layer"] == {"index": 1, "created_by": "RUN git reset --hard BASE"}


def test_symlinked_objects_folder_makes_the_git_route_incomplete(gitfix, tmp_path):
    import shutil

    l0 = tmp_path / "l0"
    shutil.copytree(gitfix.L / "ctl-swb5", l0 / "testbed", symlinks=True)
    shutil.move(l0 / "testbed/.git/objects", l0 / "opt-objects")
    (l0 / "testbed/.git/objects").symlink_to("/opt-objects")
    subprocess.run([sys.executable, str(Path(__file__).parent / "fixtures/mkimage.py"), str(tmp_path / "img.tar"),
                    "docker", "t:1", "[]", str(l0), "clone"], check=True)
    report = audit(str(tmp_path / "img.tar"), base=gitfix.base)
    t = report.targets[0]
    assert t.routes["git"] == "incomplete" and report.verdict == "incomplete"
    assert "/testbed/.git/objects: a symlink to /opt-objects" in next(c.reason for c in t.checks if c.id == "G1")


@pytest.mark.parametrize("damage", ["cut", "flipped"])
def test_a_truncated_or_corrupt_gzip_layer_is_one_line_naming_the_archive_and_layer(tmp_path, damage):
    """gzip's EOFError at a cut layer was turned into "aborted" (exit 130) by the CLI's framework; a flipped
    byte raised zlib's error. Either is the input's fault: one line naming the archive and the layer."""
    whole, bad = tmp_path / "whole.tar", tmp_path / f"{damage}.tar"
    _bomb(whole, 4 << 20)
    with tarfile.open(whole) as src, tarfile.open(bad, "w") as out:
        members = src.getmembers()
        layer = max(members, key=lambda m: m.size)  # the gzip layer blob
        for m in members:
            data = src.extractfile(m).read()
            if m.name == layer.name:
                data = data[:len(data) // 2] if damage == "cut" else \
                    data[:200] + bytes([data[200] ^ 0xFF]) + data[201:]
            m.size = len(data)
            out.addfile(m, io.BytesIO(data))
    with pytest.raises(InputError) as raised:
        audit(str(bad))
    message = str(raised.value)
    assert message.startswith(f"{bad}: layer 0 (blobs/sha256/"), message
    assert ("truncated or corrupt" in message) and "\n" not in message


def test_a_hard_link_to_a_lower_file_keeps_its_bytes_when_the_layer_whites_the_target_out(tmp_path):
    """A layer that links /opt/b.py to a lower layer's /tmp/a.py and whites /tmp/a.py out: the link is made while
    the layer is applied, so /opt/b.py shows the bytes (the fix can hide so); it was skipped as a link to
    nowhere."""
    from overlap.audit.image.layers import merge

    def layer(entries) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as t:
            for name, kind, data in entries:
                info = tarfile.TarInfo(name)
                if kind == "link":
                    info.type, info.linkname = tarfile.LNKTYPE, data
                    t.addfile(info)
                else:
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
        return buffer.getvalue()

    layers = [layer([("tmp/a.py", "file", b"fixed = True\n")]),
              layer([("opt/b.py", "link", "tmp/a.py"), ("tmp/.wh.a.py", "file", b"")])]
    config = json.dumps({"rootfs": {"type": "layers", "diff_ids": [
        "sha256:" + hashlib.sha256(data).hexdigest() for data in layers]}, "config": {}, "history": []}).encode()
    archive = tmp_path / "img.tar"
    with tarfile.open(archive, "w") as t:
        for name, data in [*((f"l{i}/layer.tar", d) for i, d in enumerate(layers)), ("config.json", config),
                           ("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["x:1"],
                                                          "Layers": ["l0/layer.tar", "l1/layer.tar"]}]).encode())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    merged = merge(open_image(archive, "docker-save"), DEFAULT_LIMITS)
    assert "tmp/a.py" not in merged.entries
    assert merged.entries["opt/b.py"].kind == "file" and merged.entries["opt/b.py"].src == (0, 0)
